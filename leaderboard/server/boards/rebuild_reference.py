"""The standings rebuilt by a Python pass over the score rows: the TEST ORACLE of the set-based
rebuild (`leaderboard.server.boards.rebuild`, issue 25), which the server runs. Nothing in the
server calls this module; tests hold the two equal on varied cases.

Two streaming passes (memory bounded by one chunk of submissions, not by a board): the first
counts the metrics each slice has, which fixes its ranking columns; the second writes the rows
with their keys; the representatives are then elected in SQL and the counters set.
"""
from __future__ import annotations

from collections import defaultdict

from sqlalchemy import delete, func, insert, select, text, update
from sqlalchemy.orm import Session

from leaderboard.server.boards.ledger import (
    _RECORD_COLUMNS,
    _bench_meta,
    _contribution,
    _count,
    _group,
    _order_names,
    _order_of,
    _records_by_slice,
    _recount,
    _row,
    shown_cells,
)
from leaderboard.server.models import Benchmark, Score, Submission
from leaderboard.server.models.standings import Standing, StandingBoard


# -- full rebuild --------------------------------------------------------------------------------
def rebuild(session: Session, benchmark_id: int | None = None, *, chunk: int = 2000) -> int:
    """Rebuild the standings of one benchmark (None: all) from the score rows; returns rows.

    Two streaming passes (memory bounded by one chunk of submissions, not the board): the first
    counts the metrics each slice has, which fixes its ranking columns; the second writes the
    rows with their keys; the representatives are then elected in SQL.
    """
    bench_ids = ([benchmark_id] if benchmark_id is not None
                 else list(session.scalars(select(Benchmark.id).order_by(Benchmark.id))))
    total, elect = 0, []
    for bid in bench_ids:
        board_ids = select(StandingBoard.id).where(StandingBoard.benchmark_id == bid)
        session.execute(delete(Standing).where(Standing.board_id.in_(board_ids)))
        session.execute(delete(StandingBoard).where(StandingBoard.benchmark_id == bid))
        tasks, specs, judge = _bench_meta(session, bid)
        counters: dict[tuple, StandingBoard] = {}

        def each():
            for sub, by_slice in _stream(session, bid, chunk):
                yield sub, {k: v for k, v in by_slice.items()
                            if k[0] in tasks and shown_cells(v, judge)}

        for sub, by_slice in each():
            for (task, skey, part), cells in by_slice.items():
                key = (sub.split, task, skey, part)
                b = counters.get(key)
                if b is None:
                    b = counters[key] = StandingBoard(
                        benchmark_id=bid, split=sub.split, task=task, slice_key=skey,
                        part=part, rows=0, metrics_json={}, judged_json={}, judge=judge)
                _count(b, *_contribution(cells, judge), +1)
        orders = {}
        for key, b in counters.items():
            order = _order_of(b, tasks, specs)
            b.order_json = _order_names(order)
            session.add(b)
            orders[key] = order
        session.flush()
        batch = []
        for sub, by_slice in each():
            for (task, skey, part), cells in by_slice.items():
                key = (sub.split, task, skey, part)
                batch.append(_row(counters[key].id, sub, _group(sub), cells, orders[key],
                                  judge))
            if len(batch) >= chunk:
                session.execute(insert(Standing), batch)
                total += len(batch)
                batch = []
        if batch:
            session.execute(insert(Standing), batch)
            total += len(batch)
        elect += list(counters.values())
    _elect_all(session, [b.id for b in elect])
    for b in elect:
        _recount(session, b)
    return total


class _SubRow:
    __slots__ = ("id", "split", "team_id", "is_baseline", "created_at", "selected",
                 "disqualified_reason")

    def __init__(self, row):
        for name in self.__slots__:
            setattr(self, name, getattr(row, name))


def _stream(session: Session, benchmark_id: int, chunk: int):
    """(submission, {(task, slice_key, part): cells_json}) of each submission on a board."""
    last = 0
    while True:
        subs = session.execute(
            select(Submission.id, Submission.split, Submission.team_id, Submission.is_baseline,
                   Submission.created_at, Submission.selected, Submission.disqualified_reason)
            .where(Submission.benchmark_id == benchmark_id, Submission.id > last,
                   Submission.status == "scored", Submission.hidden.is_(False),
                   Submission.is_public.is_(True))
            .order_by(Submission.id).limit(chunk)).all()
        if not subs:
            return
        last = subs[-1].id
        recs = defaultdict(list)
        for sid, *rec in session.execute(
                select(Score.submission_id, *_RECORD_COLUMNS)
                .where(Score.submission_id.in_([s.id for s in subs]))
                .order_by(Score.submission_id, Score.id)):
            recs[sid].append(rec)
        for s in subs:
            yield _SubRow(s), _records_by_slice(recs.get(s.id, []))


def _elect_all(session: Session, board_ids: list[int]) -> None:
    """Elect every group's representative in SQL: selected first, then the best pick key."""
    if session.get_bind().dialect.name == "postgresql":
        # fresh rows: plan with their statistics (VACUUM, which also lets index-only scans
        # skip the heap, cannot run inside a transaction: autovacuum or the operator does it)
        session.execute(text("ANALYZE standing"))
        for bid in board_ids:
            session.execute(text(
                "UPDATE standing s SET rep_key = s.sort_key FROM ("
                " SELECT DISTINCT ON (grp) id FROM standing"
                " WHERE board_id = :b AND NOT disqualified"
                " ORDER BY grp, selected DESC, pick_key) r WHERE s.id = r.id"), {"b": bid})
        return
    for bid in board_ids:
        ranked = (select(Standing.id, func.row_number().over(
            partition_by=Standing.grp,
            order_by=(Standing.selected.desc(), Standing.pick_key)).label("rn"))
            .where(Standing.board_id == bid, Standing.disqualified.is_(False)).subquery())
        reps = select(ranked.c.id).where(ranked.c.rn == 1)
        session.execute(update(Standing).where(Standing.board_id == bid,
                                               Standing.id.in_(reps))
                        .values(rep_key=Standing.sort_key)
                        .execution_options(synchronize_session=False))


__all__ = ["rebuild"]
