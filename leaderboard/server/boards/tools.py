"""Board tools (issue 38): search, filters and a sort on top of a board's rows, with the same
parameter names on the page, the JSON and the CSV.

``q`` (team or method name contains, case-insensitive), ``baselines`` (1: shown, the default;
0: hidden), ``code`` (1: only submissions with a code link), ``from`` / ``to`` (submission date,
``YYYY-MM-DD``, inclusive, UTC), ``sort`` (a metric column of the board; default its primary)
and ``dir`` (asc|desc; default the metric's better direction).

The tools filter and re-order the rows a board already read (its cached every-row read); they
never renumber it: each row keeps the board's own rank and rank interval.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from leaderboard.server.errors import ServiceError

#: the query parameters the tools read (pages, JSON and CSV alike)
PARAMS = ("q", "baselines", "code", "from", "to", "sort", "dir")
MAX_QUERY = 200
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class BadTool(ServiceError):
    status = 400
    code = "bad_request"


@dataclass(frozen=True)
class Tools:
    q: str = ""
    baselines: bool = True
    code: bool = False
    date_from: date | None = None
    date_to: date | None = None
    sort: str | None = None
    dir: str | None = None

    @property
    def filters(self) -> bool:
        """True when a filter removes rows."""
        return bool(self.q or not self.baselines or self.code or self.date_from
                    or self.date_to)

    def resorts(self, board: dict) -> bool:
        """True when the rows are shown in another order than the board's."""
        return self.sort_key(board) != _default_sort(board)

    def active(self, board: dict) -> bool:
        """True when the tools change the board's rows or their order."""
        return self.filters or self.resorts(board)

    def sort_key(self, board: dict) -> tuple[str, str]:
        """(metric, direction) the rows are shown in. A board with no columns yet (no rows)
        takes any sort and shows nothing."""
        metric = self.sort or board["primary"]
        if not board["columns"]:
            return metric, self.dir or "desc"
        return metric, self.dir or _better_dir(_column(board, metric))

    def query(self) -> dict:
        """The non-default tools as query arguments (for links that keep them)."""
        out = {"q": self.q or None, "baselines": None if self.baselines else 0,
               "code": 1 if self.code else None,
               "from": self.date_from.isoformat() if self.date_from else None,
               "to": self.date_to.isoformat() if self.date_to else None,
               "sort": self.sort, "dir": self.dir}
        return {k: v for k, v in out.items() if v is not None}


def _flag(name: str, raw: Any, default: bool) -> bool:
    if raw is None or raw == "":
        return default
    if raw in ("0", "1"):
        return raw == "1"
    raise BadTool(f"{name} must be 0 or 1, got {str(raw)[:40]!r}")


def _date(name: str, raw: Any) -> date | None:
    if raw is None or raw == "":
        return None
    text = str(raw)
    try:
        if not _DATE.fullmatch(text):
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise BadTool(f"{name} must be a date YYYY-MM-DD, got {text[:40]!r}") from None


def parse_tools(get) -> Tools:
    """The tools from a query string (``get(name)``: its value or None). Raises BadTool (400)
    naming the parameter; the sort metric is checked against the board by `apply_tools`."""
    q = (get("q") or "").strip()
    if len(q) > MAX_QUERY:
        raise BadTool(f"q must be at most {MAX_QUERY} characters, got {len(q)}")
    d = get("dir") or None
    if d is not None and d not in ("asc", "desc"):
        raise BadTool(f"dir must be asc or desc, got {d[:40]!r}")
    date_from, date_to = _date("from", get("from")), _date("to", get("to"))
    if date_from and date_to and date_from > date_to:
        raise BadTool(f"from ({date_from}) must not be after to ({date_to})")
    sort = get("sort") or None
    if sort is not None and len(sort) > 100:
        raise BadTool("sort must name a metric column of the board")
    return Tools(q=q, baselines=_flag("baselines", get("baselines"), True),
                 code=_flag("code", get("code"), False), date_from=date_from, date_to=date_to,
                 sort=sort, dir=d)


def _column(board: dict, metric: str) -> dict:
    for c in board["columns"]:
        if c["metric"] == metric:
            return c
    raise BadTool(f"sort must be one of the board's metric columns "
                  f"{[c['metric'] for c in board['columns']]}, got {metric[:40]!r}")


def _better_dir(col: dict) -> str:
    return "asc" if col.get("by_magnitude") or not col.get("higher_is_better", True) else "desc"


def _default_sort(board: dict) -> tuple[str, str]:
    if not board["columns"]:
        return board["primary"], "desc"
    return board["primary"], _better_dir(_column(board, board["primary"]))


def check(tools: Tools, board: dict) -> None:
    """Raise BadTool when ``sort`` is not a column of ``board``."""
    tools.sort_key(board)


def keep(tools: Tools, row: dict) -> bool:
    """Whether ``row`` passes the filters."""
    if not tools.baselines and row["is_baseline"]:
        return False
    if tools.code and not (row.get("code_url") or "").strip():
        return False
    day = row["created_at"][:10]
    if tools.date_from and day < tools.date_from.isoformat():
        return False
    if tools.date_to and day > tools.date_to.isoformat():
        return False
    if tools.q:
        q = tools.q.casefold()
        return q in (row["team"]["name"] or "").casefold() or q in (
            row["method_name"] or "").casefold()
    return True


def apply_tools(tools: Tools, board: dict, rows) -> list[dict]:
    """``rows`` of ``board`` filtered and sorted: empty cells last, ties in board order. The
    rows keep their rank and rank interval (the board's)."""
    metric, direction = tools.sort_key(board)
    kept = [r for r in rows if keep(tools, r)]
    if (metric, direction) == _default_sort(board) or not board["columns"]:
        return kept  # the board's own order (its ranking rule, tie-breaks included)
    col = _column(board, metric)

    def value(r):
        v = r["values"][metric]["value"]
        return abs(v) if v is not None and col.get("by_magnitude") else v

    present = [r for r in kept if value(r) is not None]
    present.sort(key=value, reverse=direction == "desc")  # stable: ties keep board order
    return present + [r for r in kept if value(r) is None]


def page_of_tools(tools: Tools, board: dict, page: int, per_page: int | None) -> dict:
    """A board page (as `leaderboard.server.boards.board.board` returns) of the rows of
    ``board`` (every row of the board) after the tools, ``page`` of ``per_page`` rows."""
    rows = apply_tools(tools, board, board["rows"])
    total = len(rows)
    size = per_page or max(1, total)
    pages = max(1, -(-total // size))
    start = (page - 1) * size
    return {**board, "rows": rows[start:start + size], "page": page, "per_page": per_page,
            "total": total, "pages": pages, "next_cursor": None, "filtered": True,
            "board_total": board["total"]}
