"""A board page after its tools (issue 38: search, filters, sort), read without the board's
every-row read.

The tools (`leaderboard.server.boards.tools`) filter and re-order a board's rows and never
renumber them. Their first implementation read every row of the board with its cells (cached
with the board) and filtered that: at 10,000 rows a cold read decoded 10,000 cell sets, about a
second. Here the filters run over the board's light rows (`reads.light_rows`: id, the board's
rank, team, method, day, baseline, code link; cached with the board, or, for a search, a code
or a date filter, narrowed by the database to a superset of the rows kept and cached per
filter), and
only the rows kept are read in full: the cells of the kept rows when the page is re-sorted by a metric, and the
whole row of the page's rows only. The result is the same page, row for row
(tests/server/boards/test_board_tools.py holds the two equal).

A re-sort of more than `RESORT_LIMIT` kept rows (a sort with no narrowing filter) needs the
cells of all of them; that is left to the every-row read, cached with the board, which serves
it warm at once (`tooled_page` returns None).
"""
from __future__ import annotations

from types import SimpleNamespace

from sqlalchemy.orm import Session

from leaderboard.core.records import slice_key_of
from leaderboard.server.boards.board import _with_intervals
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.boards.meta import benchmark_info, parse_slice_key, task_of
from leaderboard.server.boards.reads import cells_by_id, light_rows, rows_by_id
from leaderboard.server.boards.tools import Tools, _column, _default_sort, keep

#: kept rows above which a re-sort by a metric is left to the every-row read
RESORT_LIMIT = 2000


def tooled_page(session: Session, *, plain: dict, args: dict, tools: Tools, page: int,
                per_page: int | None) -> dict | None:
    """Page ``page`` of ``per_page`` rows (None: all) of the board ``args`` names after
    ``tools``, as `boards.tools.page_of_tools` makes it from the every-row read; ``plain``:
    any page of that board (its columns, primary, part and totals). None when it is left to
    the every-row read (see the module docstring)."""
    key = args["benchmark_key"]
    info = benchmark_info(session, key)
    task = task_of(info, args["task"])
    wanted = parse_slice_key(args["slice_key"])
    mode = args["mode"]
    read = dict(modality=args["modality"], wanted=wanted, mode=mode)
    board_key = ("light_rows", task["key"], args["split"], args["modality"],
                 slice_key_of(wanted), mode)
    if tools.q or tools.code or tools.date_from or tools.date_to:
        # a narrowing filter: the database drops most rows; cached per filter (entries expire
        # with the cache's TTL, as the board pages' per-query entries do)
        narrow = {"q": tools.q, "code": tools.code, "from": tools.date_from,
                  "to": tools.date_to, "baselines": tools.baselines}
        light = get_cache().get_or_compute(
            key, board_key + tuple(sorted((k, str(v)) for k, v in narrow.items())),
            lambda: light_rows(session, info, task, args["split"], **read, narrow=narrow))
    else:  # every row (cached with the board): baselines hidden, or a re-sort
        light = get_cache().get_or_compute(
            key, board_key, lambda: light_rows(session, info, task, args["split"], **read))
    if light is None:
        return None
    kept = [r for r in light["rows"] if keep(tools, _as_row(r))]
    metric, direction = tools.sort_key(plain)
    if plain["columns"] and (metric, direction) != _default_sort(plain):
        if len(kept) > RESORT_LIMIT:
            return None
        kept = _resorted(session, light, kept, _column(plain, metric), direction)
    total = len(kept)
    size = per_page or max(1, total)
    start = (page - 1) * size
    shown = kept[start:start + size]
    columns = [SimpleNamespace(metric=c["metric"]) for c in plain["columns"]]
    full = rows_by_id(session, light["board_id"], mode, columns, light["judge"],
                      {r[0]: r[1] for r in shown})
    out = {**plain, "rows": [full[r[0]] for r in shown if r[0] in full], "page": page,
           "per_page": per_page, "total": total, "pages": max(1, -(-total // size)),
           "next_cursor": None, "filtered": True, "board_total": plain["total"]}
    return _with_intervals(session, info, task, args["split"], modality=args["modality"],
                           wanted=wanted, mode=mode, page=out)


def _as_row(r: list) -> dict:
    """A light row in the shape `boards.tools.keep` reads."""
    return {"submission_id": r[0], "team": {"name": r[2]}, "method_name": r[3],
            "created_at": r[4], "is_baseline": r[5], "code_url": r[6]}


def _resorted(session: Session, light: dict, kept: list, col: dict, direction: str) -> list:
    """``kept`` by ``col`` in ``direction`` as `boards.tools.apply_tools` sorts: empty cells
    last, ties in board order (a stable sort of rows in board order)."""
    cells = cells_by_id(session, light["board_id"], [r[0] for r in kept], light["judge"])

    def value(r):
        c = cells.get(r[0], {}).get(col["metric"])
        v = c[0] if c else None
        return abs(v) if v is not None and col.get("by_magnitude") else v

    present = [r for r in kept if value(r) is not None]
    present.sort(key=value, reverse=direction == "desc")
    return present + [r for r in kept if value(r) is None]
