"""A board page after its tools (issue 38: search, filters, sort), read without the board's
every-row read.

The tools (`leaderboard.server.boards.tools`) filter and re-order a board's rows and never
renumber them. Their first implementation read every row of the board with its cells (cached
with the board) and filtered that: at 10,000 rows a cold read decoded 10,000 cell sets, about a
second. Here nothing reads every row's cells:

* a search, a code or a date filter runs over the board's light rows (`reads.light_rows`: id,
  the board's rank, team, method, day, baseline, code link), narrowed by the database to a
  superset of the rows kept and cached per filter; a re-sort then reads the sort metric's
  values of the kept rows only (`reads.metric_values`: by id, or the whole board's when many
  are kept) and sorts them here;
* a re-sort of the whole board (or with only the baselines filter) by a column the board's
  keys were made with (its primary or a declared secondary) is sorted by the database on that
  column's code in the keys, which hands back the page only (`reads.ranking_sorted`);
* by any other column, one statement returns the board's order, ranks and the metric's value
  of every row, picked out of its cells by the database (`reads.order_rows`), sorted here.

Sorts are stable: empty cells last, ties in the board's order. Only the page's rows are then
read in full, and the page is cached per tools and page. The result is the same page, row for
row, with the board's ranks (tests/server/boards/test_board_tools_light.py holds the two
equal, on SQLite and PostgreSQL).
"""
from __future__ import annotations

from types import SimpleNamespace

from sqlalchemy.orm import Session

from leaderboard.core.records import slice_key_of
from leaderboard.server.boards.board import _with_intervals
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.boards.meta import benchmark_info, parse_slice_key, task_of
from leaderboard.server.boards.reads import (
    light_rows,
    metric_values,
    order_rows,
    ranking_sorted,
    rows_by_id,
)
from leaderboard.server.boards.tools import Tools, _column, _default_sort, keep

#: kept rows up to which a re-sort after a narrowing filter reads their values by id; above,
#: the whole board's values of the metric are read
BY_ID_LIMIT = 500


def tooled_page(session: Session, *, plain: dict, args: dict, tools: Tools, page: int,
                per_page: int | None) -> dict | None:
    """Page ``page`` of ``per_page`` rows (None: all) of the board ``args`` names after
    ``tools``, as `boards.tools.page_of_tools` makes it from the every-row read; ``plain``:
    any page of that board (its columns, primary, part and totals). None when the board has
    no row (left to the every-row read, which makes its empty page).

    The page is cached per tools and page (cleared with the board, as its plain pages): a
    repeated request reads nothing."""
    key = ("tooled", args["task"], args["split"], args["modality"], args["slice_key"],
           args["mode"], *sorted(tools.query().items()), page, per_page)
    return get_cache().get_or_compute(
        args["benchmark_key"], key,
        lambda: _tooled_page(session, plain=plain, args=args, tools=tools, page=page,
                             per_page=per_page))


def _tooled_page(session: Session, *, plain: dict, args: dict, tools: Tools, page: int,
                 per_page: int | None) -> dict | None:
    key = args["benchmark_key"]
    info = benchmark_info(session, key)
    task = task_of(info, args["task"])
    wanted = parse_slice_key(args["slice_key"])
    mode = args["mode"]
    read = dict(modality=args["modality"], wanted=wanted, mode=mode)
    metric, direction = tools.sort_key(plain)
    resort = bool(plain["columns"]) and (metric, direction) != _default_sort(plain)
    if tools.q or tools.code or tools.date_from or tools.date_to:
        # a narrowing filter: the database drops most rows; cached per filter (entries expire
        # with the cache's TTL, as the board pages' per-query entries do)
        narrow = {"q": tools.q, "code": tools.code, "from": tools.date_from,
                  "to": tools.date_to, "baselines": tools.baselines}
        light = get_cache().get_or_compute(
            key, ("light_rows", task["key"], args["split"], args["modality"],
                  slice_key_of(wanted), mode, *sorted((k, str(v)) for k, v in narrow.items())),
            lambda: light_rows(session, info, task, args["split"], **read, narrow=narrow))
        if light is None:
            return None
        kept = [r for r in light["rows"] if keep(tools, _as_row(r))]
        if resort:
            ids = [r[0] for r in kept] if len(kept) <= BY_ID_LIMIT else None
            values = dict(metric_values(session, light["board_id"], metric, light["judge"],
                                        ids))
            kept = _resorted(kept, lambda r: values.get(r[0]), _column(plain, metric),
                             direction)
        total, size, shown = _paged(kept, page, per_page)
    else:
        # a re-sort, the baselines filter, or both: by a ranking column, a page the database
        # sorts by the key; else the board's order and ranks with the sort metric's values,
        # in one statement
        fast = resort and ranking_sorted(
            session, info, task, args["split"], **read, col=_column(plain, metric),
            direction=direction, baselines=tools.baselines,
            offset=(page - 1) * per_page if per_page else 0, limit=per_page)
        if fast:
            light, total = fast, fast["total"]
            size = per_page or max(1, total)
            shown = fast["rows"] if per_page or page == 1 else []
        else:
            light = order_rows(session, info, task, args["split"], **read,
                               metric=metric if resort else None)
            if light is None:
                return None
            kept = [r for r in light["rows"] if tools.baselines or not r[2]]
            if resort:
                kept = _resorted(kept, lambda r: r[3], _column(plain, metric), direction)
            total, size, shown = _paged(kept, page, per_page)
    columns = [SimpleNamespace(metric=c["metric"]) for c in plain["columns"]]
    full = rows_by_id(session, light["board_id"], mode, columns, light["judge"],
                      {r[0]: r[1] for r in shown})
    out = {**plain, "rows": [full[r[0]] for r in shown if r[0] in full], "page": page,
           "per_page": per_page, "total": total, "pages": max(1, -(-total // size)),
           "next_cursor": None, "filtered": True, "board_total": plain["total"]}
    return _with_intervals(session, info, task, args["split"], modality=args["modality"],
                           wanted=wanted, mode=mode, page=out)


def _paged(kept: list, page: int, per_page: int | None) -> tuple[int, int, list]:
    """(rows kept, page size, the page's rows) of page ``page`` of ``per_page`` (None: all)."""
    size = per_page or max(1, len(kept))
    return len(kept), size, kept[(page - 1) * size:page * size]


def _as_row(r: list) -> dict:
    """A light row in the shape `boards.tools.keep` reads."""
    return {"submission_id": r[0], "team": {"name": r[2]}, "method_name": r[3],
            "created_at": r[4], "is_baseline": r[5], "code_url": r[6]}


def _resorted(kept: list, value_of, col: dict, direction: str) -> list:
    """``kept`` (rows in board order) by ``value_of(row)`` (its value of ``col``; None: empty)
    in ``direction`` as `boards.tools.apply_tools` sorts: empty cells last, ties in board
    order (a stable sort)."""

    def value(r):
        v = value_of(r)
        return abs(v) if v is not None and col.get("by_magnitude") else v

    present = [r for r in kept if value(r) is not None]
    present.sort(key=value, reverse=direction == "desc")
    return present + [r for r in kept if value(r) is None]
