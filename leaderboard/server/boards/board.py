"""Task boards: one page of a board (cached, from the standings), its rank intervals, and every
row of a board for exports.

Fairness (design.md, "Boards, splits and fairness"): on a split whose scores carry parts (test),
a team's representative is chosen on the public part, and the board shows the public part until
the benchmark's ``private_revealed``, then the private part. Hidden submissions, private
(``is_public`` false) ones and unscored ones are never on a board; disqualified ones appear, with
their reason and unranked, only in "all submissions" mode. A judge-made column shows only the
records of the benchmark's judge (official, else ``DEFAULT_JUDGE``) and names it; self-mapped
records stay and are marked per cell (a column never mixes judges).
"""
from __future__ import annotations

import logging

from sqlalchemy.orm import Session

from leaderboard.core.records import slice_key_of
from leaderboard.server.boards import intervals
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.boards.meta import (
    MAX_PER_PAGE,
    MODES,
    benchmark_info,
    parse_slice_key,
    task_of,
)
from leaderboard.server.boards.reads import board_page_from_standings, iter_board_rows, top_ranked
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.numbers import BadNumber, ascii_int

log = logging.getLogger(__name__)


def board(session: Session, *, benchmark_key: str, task: str, split: str,
          modality: str | None = None, slice_key: str | None = None,
          mode: str = "team", page: int = 1, per_page: int | None = None,
          cursor: str | None = None) -> dict:
    """One page of a board (cached), read from the standings (`compute_board`).

    ``cursor``: the ``next_cursor`` of the page before (issue 25): the page then starts after
    that page's last row and carries its rank, so page 1,000 costs what page 1 costs (no offset,
    no count of the rows before it). A cursor made before the board last changed is not
    trusted: the page is read by its number instead (an offset and a count, still exact).

    ``per_page`` None: every row (CSV export, cross-benchmark pages: one row per team in team
    mode); else at most ``MAX_PER_PAGE``. The result carries ``rows`` (the page), ``page``,
    ``per_page``, ``total``, ``pages``, ``ranked`` (ranked rows on the whole board) and
    ``baselines`` (the baseline rows, wherever they rank). Raises NotFound / ServiceError naming
    a bad argument."""
    info = benchmark_info(session, benchmark_key)
    t = task_of(info, task)
    if split not in info["splits"]:
        raise NotFound(f"benchmark {benchmark_key!r} has no split {split!r}; "
                       f"splits: {info['splits']}")
    if modality is not None and modality not in t["modalities"]:
        raise ServiceError(f"task {task!r} has no modality {modality!r}; "
                           f"modalities: {t['modalities']}")
    if mode not in MODES:
        raise ServiceError(f"mode must be one of {list(MODES)}, got {mode!r}")
    if page < 1 or (per_page is not None and not 1 <= per_page <= MAX_PER_PAGE):
        raise ServiceError(f"page must be >= 1 and per_page in 1..{MAX_PER_PAGE}, got "
                           f"page={page!r}, per_page={per_page!r}")
    wanted = parse_slice_key(slice_key)
    after = None
    version = get_cache().version(benchmark_key)
    if cursor is not None and per_page is not None:
        page, after = _parse_cursor(cursor, version)
    key = ("board", task, split, modality, slice_key_of(wanted), mode, page, per_page, after)

    def compute():
        b = compute_board(session, info, t, split, modality=modality, wanted=wanted, mode=mode,
                          page=page, per_page=per_page, after=after)
        nxt = b.pop("next_after", None)
        b["next_cursor"] = (f"{page + 1}.{nxt[1]}.{version}.{nxt[0]}" if nxt else None)
        return _with_intervals(session, info, t, split, modality=modality, wanted=wanted,
                               mode=mode, page=b)

    return get_cache().get_or_compute(benchmark_key, key, compute)


def _parse_cursor(cursor: str, version: str) -> tuple[int, tuple[str, int] | None]:
    """(page, (key, rank before it) or None) from ``"<page>.<rank>.<version>.<key>"``; None
    when the board changed since the cursor was made. ServiceError names a malformed one."""
    parts = cursor.split(".", 3)
    # ASCII digits only: "²".isdigit() is true and int("²") raises (issue 36)
    page, rank = ((ascii_int(parts[0]), ascii_int(parts[1])) if len(parts) == 4
                  else (None, None))
    ok = (page is not None and rank is not None and 1 <= page <= 10**6
          and 1 <= len(parts[3]) <= 600 and all(ch in "0123456789abcdef" for ch in parts[3]))
    if not ok:
        raise BadNumber(f"cursor must be a next_cursor this API returned, got {cursor[:80]!r}")
    return page, ((parts[3], rank) if parts[2] == version else None)


def compute_board(session: Session, info: dict, task: dict, split: str, *,
                  modality: str | None, wanted: dict, mode: str, page: int = 1,
                  per_page: int | None = None, after: tuple[str, int] | None = None) -> dict:
    """One page of the board, uncached, from the standings: one indexed range of rows and a
    count of the competitors ahead of it (no scan of submissions or score rows)."""
    return board_page_from_standings(session, info, task, split, modality=modality,
                                     wanted=wanted, mode=mode, page=page, per_page=per_page,
                                     after=after)


def board_rows(session: Session, *, benchmark_key: str, task: str, split: str,
               modality: str | None = None, slice_key: str | None = None,
               mode: str = "team", chunk: int = 1000):
    """Every row of a board, uncached, in keyset chunks (exports such as the CSV); arguments
    are checked as by `board`."""
    info = benchmark_info(session, benchmark_key)
    t = task_of(info, task)
    if mode not in MODES:
        raise ServiceError(f"mode must be one of {list(MODES)}, got {mode!r}")
    return iter_board_rows(session, info, t, split, modality=modality,
                           wanted=parse_slice_key(slice_key), mode=mode, chunk=chunk)


def _with_intervals(session: Session, info: dict, task: dict, split: str, *,
                    modality: str | None, wanted: dict, mode: str, page: dict) -> dict:
    """``page`` with each row's ``rank_interval`` (or None) and ``interval_rule``, the rule
    under the board (issue 14; `leaderboard.server.boards.intervals`).

    The intervals are the board's, whatever the page: computed once from its top rows and
    cached with the board (so cleared by `invalidate_boards` with everything else on it)."""
    found: dict = {}
    if page.get("rows"):
        key = ("intervals", task["key"], split, page["slice_key"], mode)
        found = get_cache().get_or_compute(info["key"], key, lambda: _board_intervals(
            session, info, task, split, modality=modality, wanted=wanted, mode=mode,
            page=page))
    for r in page.get("rows", []):
        r["rank_interval"] = found.get(str(r["submission_id"]))  # str: JSON-cached keys
    page["interval_rule"] = intervals.RULE if found else ""
    return page


def _board_intervals(session: Session, info: dict, task: dict, split: str, *,
                     modality: str | None, wanted: dict, mode: str, page: dict) -> dict:
    """The board's rank intervals from its top ranked rows: the page already says the part,
    slice, primary column and ranked total, so the top rows are read as (id, rank) only (an
    index range, no cells, no names; issue 25: a second full page per cold board was most of
    a cold board's time outside its own query)."""
    ok, _modality = intervals.slice_modality(page["slice_key"])
    if not ok or page["primary"] != task["headline"]:
        return {}  # no interval for this board: nothing to read
    rows = top_ranked(session, info, task, split, modality=modality, wanted=wanted, mode=mode,
                      limit=intervals.TOP)
    hib = next((c["higher_is_better"] for c in page["columns"]
                if c["metric"] == page.get("primary")), True)
    try:
        found = intervals.board_intervals(task=task, part=page["part"],
                                          slice_key=page["slice_key"],
                                          primary=page["primary"], higher_is_better=hib,
                                          rows=rows, total=page.get("ranked"))
    except Exception:  # noqa: BLE001 - a missing interval must never cost the board itself
        log.exception("rank intervals failed task=%s slice=%s", task["key"], page["slice_key"])
        found = {}
    return {str(sid): iv for sid, iv in found.items()}
