"""Standings maintained incrementally (issue 16): the write side of the boards (keys, refresh).

Every board slice (benchmark x split x task x slice key x part) keeps one `Standing` row per
submission on it, with keys that sort by the ranking rules (`leaderboard.server.boards.standings`),
so a board page reads one indexed range and counts the rows ahead of it.

When: `leaderboard.server.boards.hook` calls `refresh_submissions` before every commit of a
`Database` session for the submissions whose Score rows or board-relevant columns (`TRACKED`)
changed, so scores and standings commit together whoever the writer is (scoring job, judge job,
admin action, test factory). Full rebuilds live in `leaderboard.server.boards.rebuild`.

How: refreshing a submission deletes its rows and inserts the new ones, updates each affected
slice's counters (rows, metrics present, judged metrics), and recomputes the representative of
each team it touched ("team" mode: the selected submission, else the best by the pick part).
Slice rows are locked (``FOR UPDATE`` on PostgreSQL, in id order) so that concurrent scoring
jobs serialise per slice. When the metrics present change the ranking columns, or the board's
judge differs from the one its keys were made with, the slice is re-keyed from its stored rows.

Parts: a submission scored with public/private parts has rows on the "public" and "private"
slices (the pick values always from "public"), one without parts on "all" only; revealing the
private part therefore changes which slice a board reads, not any row.
"""
from __future__ import annotations

import logging
import struct
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timezone

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from leaderboard.server.boards.standings import Column, board_order
from leaderboard.server.models import Benchmark, Score, Submission
from leaderboard.server.models.standings import Standing, StandingBoard
from leaderboard.server.services.judging import board_judge, record_judge_allowed

log = logging.getLogger(__name__)

#: submission columns that move a submission on or off a board, or within it
TRACKED = ("status", "hidden", "is_public", "selected", "disqualified_reason", "team_id",
           "is_baseline", "created_at", "benchmark_id", "split")
NA = "1" + "0" * 16


# -- keys ----------------------------------------------------------------------------------------
def _float_code(x: float) -> str:
    """16 hex digits that sort like the float (IEEE 754 bits, sign-flipped)."""
    (bits,) = struct.unpack(">Q", struct.pack(">d", x + 0.0))  # + 0.0: -0.0 sorts as 0.0
    bits = bits ^ 0xFFFF_FFFF_FFFF_FFFF if bits >> 63 else bits | (1 << 63)
    return f"{bits:016x}"


def decode_value(key: str, *, higher_is_better: bool) -> float | None:
    """The first ranking column's value from a key (`encode_key`; not for by-magnitude
    columns, whose key holds |value|): None for n/a."""
    if key[0] == "1":
        return None
    bits = int(key[1:17], 16)
    bits = bits ^ (1 << 63) if bits >> 63 else bits ^ 0xFFFF_FFFF_FFFF_FFFF
    (x,) = struct.unpack(">d", struct.pack(">Q", bits))
    return -x if higher_is_better else x


def encode_key(values: dict, order: list[Column], created_at: datetime,
               submission_id: int) -> str:
    """`leaderboard.server.boards.standings.sort_key` as a string that sorts bytewise the same:
    per column "0" + the value's code (better first) or "1..." for n/a, then the time, the id."""
    out = []
    for col in order:
        v = values.get(col.metric)
        if v is None or v != v:  # n/a (and NaN) after every number
            out.append(NA)
        elif col.by_magnitude:
            out.append("0" + _float_code(abs(v)))
        else:
            out.append("0" + _float_code(-v if col.higher_is_better else v))
    out.append(created_at.astimezone(timezone.utc).strftime("%Y%m%d%H%M%S%f"))
    out.append(f"{submission_id:012d}")
    return "".join(out)


def _allowed(judge_of_record: str | None, board_judge: str | None) -> bool:
    return judge_of_record is None or record_judge_allowed(judge_of_record, board_judge)


def shown_cells(cells_json: dict, judge: str | None) -> dict[str, list]:
    """{metric: [value, ci_low, ci_high, n, judge]} of the shown records a board's judge allows
    (the last record of a metric wins, as when the board was built from score rows)."""
    return {m: [v, lo, hi, n, j] for m, v, lo, hi, n, j in cells_json.get("shown", [])
            if _allowed(j, judge)}


def _pick_values(cells_json: dict, judge: str | None) -> dict:
    return {m: v for m, v, j in cells_json.get("pick", []) if _allowed(j, judge)}


def _contribution(cells_json: dict, judge: str | None) -> tuple[set, set]:
    cells = shown_cells(cells_json, judge)
    return set(cells), {m for m, c in cells.items() if c[4] is not None and c[4] != "self-mapped"}


def board_judge_of(official: str | None) -> str | None:
    return board_judge(official)


# -- rows of one submission ----------------------------------------------------------------------
def _on_board(sub: Submission | None) -> bool:
    return (sub is not None and sub.status == "scored" and not sub.hidden
            and bool(sub.is_public))


def _group(sub) -> str:
    if sub.team_id is None or sub.is_baseline:
        return f"s:{sub.id}"
    return f"t:{sub.team_id}"


def _records_by_slice(records: Iterable) -> dict[tuple, dict]:
    """{(task, slice_key, part): cells_json} for one submission's score records (in id order)."""
    groups: dict[tuple, list] = defaultdict(list)
    for part, task, skey, metric, value, lo, hi, n, judge in records:
        groups[(task, skey, part)].append([metric, value, lo, hi, n or 0, judge])
    has_parts = any(k[2] == "public" for k in groups)
    shown_parts, pick = (("public", "private"), "public") if has_parts else (("all",), "all")
    out = {}
    for (task, skey, part), recs in groups.items():
        if part in shown_parts:
            out[(task, skey, part)] = {
                "shown": recs,
                "pick": [[m, v, j] for m, v, _lo, _hi, _n, j in groups.get((task, skey, pick), [])]}
    return out


_RECORD_COLUMNS = (Score.part, Score.task, Score.slice_key, Score.metric, Score.value,
                   Score.ci_low, Score.ci_high, Score.n, Score.judge)


# -- slices (boards) -----------------------------------------------------------------------------
def _get_or_create_boards(session: Session, benchmark_id: int, split: str,
                          keys: Iterable[tuple]) -> dict[tuple, int]:
    """{(task, slice_key, part): board id}, creating missing slices (race-safe). One read of
    the split's slices, then one insert and read per missing slice (rare: a new slice)."""
    keys = sorted(set(keys))
    if not keys:
        return {}
    known = {(t, k, p): i for i, t, k, p in session.execute(
        select(StandingBoard.id, StandingBoard.task, StandingBoard.slice_key, StandingBoard.part)
        .where(StandingBoard.benchmark_id == benchmark_id, StandingBoard.split == split,
               StandingBoard.task.in_({t for t, _, _ in keys})))}
    out = {}
    dialect = session.get_bind().dialect.name
    for task, skey, part in keys:
        bid = known.get((task, skey, part))
        if bid is None:
            cond = (StandingBoard.benchmark_id == benchmark_id, StandingBoard.split == split,
                    StandingBoard.task == task, StandingBoard.slice_key == skey,
                    StandingBoard.part == part)
            values = dict(benchmark_id=benchmark_id, split=split, task=task, slice_key=skey,
                          part=part, rows=0, metrics_json={}, judged_json={}, order_json=[])
            if dialect == "postgresql":
                from sqlalchemy.dialects.postgresql import insert as dialect_insert
            else:
                from sqlalchemy.dialects.sqlite import insert as dialect_insert
            session.execute(dialect_insert(StandingBoard).values(**values)
                            .on_conflict_do_nothing())
            bid = session.scalar(select(StandingBoard.id).where(*cond))
        out[(task, skey, part)] = bid
    return out


def _lock_boards(session: Session, ids: Iterable[int]) -> dict[int, StandingBoard]:
    ids = sorted(set(ids))
    if not ids:
        return {}
    q = select(StandingBoard).where(StandingBoard.id.in_(ids)).order_by(StandingBoard.id)
    if session.get_bind().dialect.name == "postgresql":
        q = q.with_for_update()
    return {b.id: b for b in session.execute(q.execution_options(populate_existing=True))
            .scalars()}


def _bench_meta(session: Session, benchmark_id: int) -> tuple[dict, dict, str | None]:
    bench = session.get(Benchmark, benchmark_id)
    meta = bench.meta_json or {}
    return ({t["key"]: t for t in meta.get("tasks", [])}, meta.get("metrics", {}),
            board_judge_of(bench.official_judge))


def _order_of(board: StandingBoard, tasks: dict, specs: dict) -> list[Column]:
    task = tasks.get(board.task)
    if task is None:
        return []
    present = {m for m, c in (board.metrics_json or {}).items() if c > 0}
    return board_order(specs, task, present)[1]


def _order_names(order: list[Column]) -> list:
    return [[c.metric, c.higher_is_better, c.by_magnitude] for c in order]


# -- refresh -------------------------------------------------------------------------------------
#: session.info key: the (benchmark id, group) pairs whose standings changed in this
#: transaction ("*": every group of the benchmark), for the modality boards (issue 25)
TOUCHED = "lb_modality_touched"


def refresh_submissions(session: Session, submission_ids: Iterable[int]) -> None:
    """Bring the standings of these submissions up to date (in the caller's transaction)."""
    for sid in sorted(set(submission_ids)):
        _refresh(session, sid)


def _touch(session: Session, benchmark_id: int, grps: Iterable[str]) -> None:
    session.info.setdefault(TOUCHED, set()).update((benchmark_id, g) for g in grps)


def _refresh(session: Session, sid: int) -> None:
    sub = session.get(Submission, sid)
    old = session.execute(select(Standing.board_id, Standing.grp, Standing.cells_json,
                                 Standing.rep_key, Standing.competes)
                          .where(Standing.submission_id == sid)).all()
    new: dict[tuple, dict] = {}
    if _on_board(sub):
        tasks, specs, judge = _bench_meta(session, sub.benchmark_id)
        recs = session.execute(select(*_RECORD_COLUMNS).where(Score.submission_id == sid)
                               .order_by(Score.id)).all()
        # a slice where the board's judge allows none of its records is not a row there
        new = {k: v for k, v in _records_by_slice(recs).items()
               if k[0] in tasks and shown_cells(v, judge)}
    if sub is None or (not old and not new):
        return  # a deleted submission's rows went with it (ON DELETE CASCADE)
    tasks, specs, judge = _bench_meta(session, sub.benchmark_id)
    ids = _get_or_create_boards(session, sub.benchmark_id, sub.split, new)
    boards = _lock_boards(session, [r[0] for r in old] + list(ids.values()))
    groups: dict[int, set] = defaultdict(set)
    for bid, grp, cells, rep_key, competes in old:
        b = boards[bid]
        metrics, judged = _contribution(cells, b.judge)
        _count(b, metrics, judged, -1)
        _count_rank(b, competes=competes, rep=rep_key is not None, sign=-1)
        groups[bid].add(grp)
    session.execute(delete(Standing).where(Standing.submission_id == sid))
    grp = _group(sub)
    for key, cells in new.items():
        b = boards[ids[key]]
        if b.judge != judge and b.rows == 0:
            b.judge = judge  # an empty slice takes the current judge without a re-key
        metrics, judged = _contribution(cells, b.judge)
        _count(b, metrics, judged, +1)
        groups[b.id].add(grp)
    rekey = set()
    for b in boards.values():
        order = _order_of(b, tasks, specs)
        if _order_names(order) != (b.order_json or []) or b.judge != judge:
            rekey.add(b.id)
    rows = []
    for key, cells in new.items():
        b = boards[ids[key]]
        order = _order_of(b, tasks, specs)
        rows.append(_row(b.id, sub, grp, cells, order, b.judge))
        _count_rank(b, competes=rows[-1]["competes"], rep=False, sign=+1)
    if rows:
        session.execute(insert(Standing), rows)
    session.flush()
    _touch(session, sub.benchmark_id, {g for gs in groups.values() for g in gs})
    for bid, b in boards.items():
        if bid in rekey:
            rekey_board(session, b, tasks, specs, judge)
            _touch(session, sub.benchmark_id, ["*"])
    _elect_many(session, {bid: b for bid, b in boards.items() if bid not in rekey}, groups)


def _count_rank(b: StandingBoard, *, competes: bool, rep: bool, sign: int) -> None:
    b.ranked = (b.ranked or 0) + sign * bool(competes)
    b.reps = (b.reps or 0) + sign * bool(rep)
    b.ranked_reps = (b.ranked_reps or 0) + sign * bool(rep and competes)


def _recount(session: Session, b: StandingBoard) -> None:
    """Set a slice's counters from its rows (after a re-key or a rebuild)."""
    def n(*cond):
        return session.scalar(select(func.count()).select_from(Standing)
                              .where(Standing.board_id == b.id, *cond))
    b.rows = n()
    b.ranked = n(Standing.competes.is_(True))
    b.reps = n(Standing.rep_key.is_not(None))
    b.ranked_reps = n(Standing.rep_key.is_not(None), Standing.competes.is_(True))


def _count(b: StandingBoard, metrics: set, judged: set, sign: int) -> None:
    b.rows = (b.rows or 0) + sign
    for attr, names in (("metrics_json", metrics), ("judged_json", judged)):
        counts = dict(getattr(b, attr) or {})
        for m in names:
            counts[m] = counts.get(m, 0) + sign
            if counts[m] <= 0:
                del counts[m]
        setattr(b, attr, counts)


def _row(board_id: int, sub, grp: str, cells: dict, order: list[Column],
         judge: str | None) -> dict:
    shown = {m: c[0] for m, c in shown_cells(cells, judge).items()}
    sort_key = encode_key(shown, order, sub.created_at, sub.id)
    dq = bool(sub.disqualified_reason)
    return dict(board_id=board_id, submission_id=sub.id, grp=grp, sort_key=sort_key,
                all_key=("1" if dq else "0") + sort_key, rep_key=None,
                pick_key=encode_key(_pick_values(cells, judge), order, sub.created_at, sub.id),
                selected=bool(sub.selected), disqualified=dq, is_baseline=bool(sub.is_baseline),
                competes=not dq and not sub.is_baseline, cells_json=cells)


_ELECT_COLUMNS = (Standing.id, Standing.pick_key, Standing.selected, Standing.disqualified,
                  Standing.sort_key, Standing.rep_key, Standing.competes)


def _elect(session: Session, b: StandingBoard, grp: str) -> None:
    """Make the group's representative the only row of ``grp`` with a ``rep_key``."""
    rows = session.execute(select(*_ELECT_COLUMNS)
                           .where(Standing.board_id == b.id, Standing.grp == grp)).all()
    _set_reps(session, _elected(b, rows))


def _elect_many(session: Session, boards: dict[int, StandingBoard],
                groups: dict[int, set]) -> None:
    """`_elect` for every (slice, group) pair of ``groups`` whose slice is in ``boards``: one
    read and one batched write, not two statements per slice (a scored submission touches
    one group on each of its ~60 slices, and its slices stay locked until the commit, so the
    statements were what serialised concurrent scoring jobs; issue 39, the deadline rush)."""
    pairs = {(bid, g) for bid, gs in groups.items() if bid in boards for g in gs}
    if not pairs:
        return
    found: dict[tuple, list] = defaultdict(list)
    for row in session.execute(select(Standing.board_id, Standing.grp, *_ELECT_COLUMNS)
                               .where(Standing.board_id.in_({bid for bid, _ in pairs}),
                                      Standing.grp.in_({g for _, g in pairs}))):
        if (row.board_id, row.grp) in pairs:
            found[(row.board_id, row.grp)].append(row)
    changes = []
    for bid, g in sorted(pairs):
        changes += _elected(boards[bid], found.get((bid, g), []))
    _set_reps(session, changes)


def _elected(b: StandingBoard, rows: list) -> list[dict]:
    """The ``rep_key`` changes that make the representative of ``rows`` (one group of slice
    ``b``) its only row with one; ``b``'s counters follow."""
    candidates = [r for r in rows if not r.disqualified]
    chosen = [r for r in candidates if r.selected] or candidates
    rep = min(chosen, key=lambda r: r.pick_key).id if chosen else None
    changes = []
    for r in rows:
        want = r.sort_key if r.id == rep else None
        if r.rep_key != want:
            changes.append({"id": r.id, "rep_key": want})
            if (r.rep_key is None) != (want is None):
                _count_rank(b, competes=False, rep=True, sign=+1 if want else -1)
                b.ranked_reps += (1 if want else -1) * bool(r.competes)
    return changes


def _set_reps(session: Session, changes: list[dict]) -> None:
    if changes:  # ORM bulk UPDATE by primary key: one executemany
        session.execute(update(Standing), changes)


def rekey_board(session: Session, b: StandingBoard, tasks: dict, specs: dict,
                judge: str | None) -> None:
    """Recompute a slice's counters, keys and representatives from its stored rows (when its
    ranking columns or its judge changed: rare, and bounded by the slice's rows)."""
    rows = session.execute(
        select(Standing.id, Standing.grp, Standing.cells_json, Standing.disqualified,
               Standing.submission_id, Submission.created_at)
        .join(Submission, Standing.submission_id == Submission.id)
        .where(Standing.board_id == b.id)).all()
    b.judge, b.rows, b.metrics_json, b.judged_json = judge, 0, {}, {}
    for r in rows:
        _count(b, *_contribution(r.cells_json, judge), +1)
    order = _order_of(b, tasks, specs)
    b.order_json = _order_names(order)
    for r in rows:
        shown = {m: c[0] for m, c in shown_cells(r.cells_json, judge).items()}
        key = encode_key(shown, order, r.created_at, r.submission_id)
        session.execute(update(Standing).where(Standing.id == r.id).values(
            sort_key=key, all_key=("1" if r.disqualified else "0") + key,
            pick_key=encode_key(_pick_values(r.cells_json, judge), order, r.created_at,
                                r.submission_id)))
    session.flush()
    for g in {r.grp for r in rows}:
        _elect(session, b, g)
    _recount(session, b)


__all__ = ["decode_value", "encode_key", "refresh_submissions", "rekey_board", "shown_cells"]
