"""Set-based rebuilds of the standings (issue 25): a benchmark's whole set of board slices from
its score rows in a few SQL statements, for an upgraded database (``db-upgrade`` fills empty
standings), a bulk load (``rebuild-standings``) or a change of the benchmark's judge or metric
declarations.

For the benchmarks asked for, in one pass on PostgreSQL and SQLite alike:

1. ``lb_rb_sub``: their submissions that are on a board, and whether their scores carry parts;
   ``lb_rb_task``: their (benchmark, task) pairs with each board's judge;
2. ``lb_rb_grp``: one row per (submission, task, slice, part) shown on a board, with the records
   as the ledger stores them (JSON, in score id order) and, per declared metric, the value and
   judge of the last record the board's judge allows (PostgreSQL: the score rows sorted once
   by group and id, the last record the largest ``[id, value, judged]`` array; SQLite:
   ``row_number()`` over the score rows);
3. the slices and their counters (``GROUP BY``), whose metrics fix each slice's ranking columns
   (a few rows: the ranking rules stay in `leaderboard.server.boards.standings`);
4. ``INSERT ... SELECT`` of the standing rows with their keys and their team's representative
   (``row_number()`` over each group), one statement per distinct ranking order (usually one or
   two), then the counters in one grouped read.

A full rebuild on PostgreSQL runs these steps on several connections, each for a share of the
groups, into fresh tables that are then swapped in (`leaderboard.server.boards.rebuild_swap`,
issue 39); one benchmark, SQLite, or a role that does not own the tables rebuild in place.

The keys are the ledger's (`leaderboard.server.boards.ledger.encode_key`), computed in SQL: on
PostgreSQL from the IEEE 754 bits (``float8send``), on SQLite by the same Python function
registered on the connection. The Python pass it replaces is kept only as the test oracle
(`leaderboard.server.boards.rebuild_reference`; tests hold the two equal).
"""
from __future__ import annotations

import logging
import time

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.boards import modality_ledger, rebuild_swap
from leaderboard.server.boards.rebuild_sql import _dialect, _rebuild_many
from leaderboard.server.models import Benchmark, Submission
from leaderboard.server.models.standings import Standing, StandingBoard

log = logging.getLogger(__name__)


def rekey_benchmark(session: Session, benchmark_id: int) -> None:
    """Rebuild a benchmark's standings: its judge or metric declarations changed, which may
    change which records (and so which rows) every slice has."""
    rebuild(session, benchmark_id)


def rebuild(session: Session, benchmark_id: int | None = None) -> int:
    """Rebuild the standings of one benchmark (None: all) from the score rows; returns the
    standing rows written. Then the modality boards they feed, in the caller's transaction.

    One benchmark, or SQLite, or a role that does not own the tables: in place, in the
    caller's transaction. Every benchmark on PostgreSQL: built into fresh tables on several
    connections and swapped in (`leaderboard.server.boards.rebuild_swap`), which **commits
    the caller's session** at the swap (readers keep the old rows until then); the modality
    boards are rebuilt after it on several connections too, each committing its boards (the
    boards no benchmark has any more are deleted in the caller's new transaction)."""
    bench_ids = ([benchmark_id] if benchmark_id is not None
                 else list(session.scalars(select(Benchmark.id).order_by(Benchmark.id))))
    t = time.perf_counter()
    swap = (benchmark_id is None and _dialect(session) == "postgresql"
            and rebuild_swap.can_swap(session))
    if swap:
        total = rebuild_swap.rebuild_swapped(session, bench_ids)
    else:
        total = _in_place(session, bench_ids, bulk=benchmark_id is None
                          and _dialect(session) == "postgresql")
    log.info("standings rebuilt benchmarks=%s rows=%s s=%.1f", len(bench_ids), total,
             time.perf_counter() - t)
    t = time.perf_counter()
    if swap:
        rebuild_swap.rebuild_modality(session)
    else:
        modality_ledger.rebuild_all(session)
    log.info("modality boards rebuilt s=%.1f", time.perf_counter() - t)
    return total


def _in_place(session: Session, bench_ids: list[int], *, bulk: bool) -> int:
    """Rewrite these benchmarks' rows in the caller's transaction. With ``bulk`` (every row, on
    PostgreSQL), build the secondary indexes once afterwards (a sorted build) instead of
    inserting into them row by row (several times slower); board reads that miss the cache
    wait for the commit meanwhile."""
    indexes = sorted(Standing.__table__.indexes, key=lambda ix: ix.name) if bulk else []
    conn = session.connection()
    for ix in indexes:
        ix.drop(conn, checkfirst=True)
    total = _rebuild_many(session, bench_ids)
    for ix in indexes:
        ix.create(conn)
    return total


def fill_if_empty(session: Session) -> int:
    """Build every benchmark's standings when there are none yet but scored submissions exist
    (a database upgraded to revision 0009), or the modality boards when only they are missing
    (revision 0014); returns the standing rows written (0: nothing to do)."""
    if session.scalar(select(Submission.id).where(Submission.status == "scored")
                      .limit(1)) is None:
        return 0
    if session.scalar(select(StandingBoard.id).limit(1)) is None:
        return rebuild(session)
    if modality_ledger.is_empty(session):
        modality_ledger.rebuild_all(session)
    return 0


__all__ = ["fill_if_empty", "rebuild", "rekey_benchmark"]
