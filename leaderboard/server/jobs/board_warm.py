"""Warm the pages a scored submission changed, in the scoring worker (issue 39, the deadline rush).

`store_scores` clears the benchmark's board entries after each commit. Without this, the first
reader of each page after a clear recomputes it inside a web process: in a rush the two scoring
workers clear the benchmark's boards several times a second, so nearly every board read became
a recomputation (the HTML task board's p50 was 117 ms against 9 ms when quiet, p99 over 500 ms
in `perf/bench_rush.py --small`). Here the worker that cleared them requests the pages readers
ask for most, through the application itself (Flask's test client: the same views, arguments
and cache keys as a visitor's request), so the entries are recomputed once, by a process that
runs second to the web (``WORKER_NICE``), while the web processes serve the previous version
(`leaderboard.server.boards.cache`: the one that takes an entry's lock recomputes, the others
serve what they had).

Which pages: the benchmark's task boards of the submission's split (HTML and JSON, first page,
team mode: what a link to a board opens) for every task the submission has scores on, for a
benchmark with a generators table also each task's detectors x generators matrix page (first
page, team mode; issue 37: its view is rebuilt from stored rows, about 50 ms here), and the
challenge phase's page and JSON board when it was made to a phase. Only where the cache is
shared (Redis) and outside a request: inline jobs run inside the upload's request, which must
not wait for pages nobody asked for. ``BOARD_WARM`` (config, default on) turns it off.

At most one warm per benchmark and split each ``WARM_EVERY_S`` across all workers (a Redis key
taken with ``SET NX``): in the rush, warming after every job cut the scoring rate from 2.6 to 1.9
jobs/s (four pages rendered per job by a niced process), and a page warmed by a job is cleared by
the next one within the second anyway. A job that finds the key taken only clears; the next
reader or the next warm recomputes. Nor while jobs wait in the job's own queue: the next job
clears the pages again at once, and the full rush (2,000 uploads in 10 minutes) measured the
warming's cost there (scoring fell from 2.3 to 1.6 jobs/s, the queue grew to 900): the worker
that empties the queue warms them.

Contract: best effort. A page that fails to render is logged and skipped; warming never fails
the job (the scores are committed before it runs).
"""
from __future__ import annotations

import logging
from urllib.parse import quote

from flask import current_app, has_request_context
from rq import Queue, get_current_job
from sqlalchemy import select

from leaderboard.server.boards.cache import get_cache
from leaderboard.server.boards.meta import benchmark_info
from leaderboard.server.db import get_db
from leaderboard.server.models import Score, Submission
from leaderboard.server.models.challenges import Challenge, ChallengePhase

log = logging.getLogger(__name__)

#: at most one warm per (benchmark, split) this often, across workers
WARM_EVERY_S = 1.0


def pages_of(session, submission_id: int, benchmark_key: str) -> list[str]:
    """The paths of the pages that show ``submission_id`` first: its benchmark's task boards
    (HTML and JSON) of its split, their generators matrix pages where the benchmark dates its
    generators, and its challenge phase's page and board."""
    sub = session.get(Submission, submission_id)
    if sub is None:
        return []
    tasks = sorted(session.scalars(select(Score.task).where(Score.submission_id == sub.id)
                                   .distinct()))
    b, s = quote(benchmark_key, safe=""), quote(sub.split, safe="")
    matrix = bool(benchmark_info(session, benchmark_key).get("generators"))
    paths = []
    for task in tasks:
        t = quote(task, safe="")
        paths += [f"/benchmarks/{b}/boards/{t}/{s}", f"/api/v1/boards/{b}/{t}/{s}"]
        if matrix:
            paths.append(f"/benchmarks/{b}/boards/{t}/{s}/generators")
    if sub.phase_id is not None:
        row = session.execute(select(Challenge.key, ChallengePhase.position)
                              .join(ChallengePhase, ChallengePhase.challenge_id == Challenge.id)
                              .where(ChallengePhase.id == sub.phase_id)).first()
        if row is not None:
            c = quote(row.key, safe="")
            paths += [f"/challenges/{c}/phases/{row.position}",
                      f"/api/v1/challenges/{c}/phases/{row.position}"]
    return paths


def should_warm() -> bool:
    """In a worker (no request in progress) with a shared cache, unless ``BOARD_WARM`` is off."""
    return (bool(current_app.config.get("BOARD_WARM", True)) and not has_request_context()
            and get_cache().redis is not None)


def _backlog() -> int:
    """Jobs waiting in the current RQ job's queue (0 outside a job, or when RQ cannot tell)."""
    try:
        job = get_current_job()
        if job is None:
            return 0
        return int(Queue(job.origin, connection=job.connection).count)
    except Exception:  # noqa: BLE001 - an unknown backlog does not stop the warm
        return 0


def _turn(benchmark_key: str, split: str) -> bool:
    """This worker's turn to warm (benchmark, split): no job waits behind this one, and nobody
    warmed it in ``WARM_EVERY_S``."""
    if _backlog():
        return False
    redis = get_cache().redis
    try:
        return bool(redis.set(f"lb:boards:warm:{benchmark_key}:{split}", 1, nx=True,
                              px=int(WARM_EVERY_S * 1000)))
    except Exception:  # noqa: BLE001 - Redis away: the readers recompute, as before
        return False


def warm(submission_id: int, benchmark_key: str, *, every_s: bool = True) -> int:
    """Request the pages of `pages_of` once, as an anonymous visitor, unless another worker did
    for this benchmark and split within ``WARM_EVERY_S`` (``every_s=False``: always); returns
    how many answered 200. Never raises."""
    try:
        with get_db().scope() as session:
            sub = session.get(Submission, submission_id)
            if sub is None or (every_s and not _turn(benchmark_key, sub.split)):
                return 0
            paths = pages_of(session, submission_id, benchmark_key)
    except Exception:  # noqa: BLE001 - best effort: the scores are already committed
        log.exception("board warm: submission=%s pages not found", submission_id)
        return 0
    client = current_app.test_client()
    ok = 0
    for path in paths:
        try:
            status = client.get(path).status_code
        except Exception:  # noqa: BLE001 - a page that fails here fails for its reader too
            log.exception("board warm: %s failed", path)
            continue
        if status == 200:
            ok += 1
        else:
            log.info("board warm: %s answered %s", path, status)
    return ok


__all__ = ["pages_of", "should_warm", "warm"]
