"""Driving the re-run campaigns (issue 37): plan, commit, then enqueue on the ``rerun`` queue.

`advance` runs one planning pass (`leaderboard.server.services.reruns.plan`) over one release or
over every unfinished campaign, commits, then enqueues the re-runs it added (each a container
job on the ``rerun`` queue, `leaderboard.server.jobs.containers.enqueue_container`). It is
called after an import commits (``import-pack``, the admin import, the admin build job), after
an admin changes a campaign, at the end of every re-run (`run_rerun`: the window moves on), and
at every reconciler pass (a pass that died between its commit and its enqueue leaves rows
"received", which the reconciler enqueues like any other). Without Redis the runs happen inline,
so `advance` repeats its pass until nothing more is added (bounded by the plan's size).
"""
from __future__ import annotations

import logging

from flask import current_app
from sqlalchemy import select

from leaderboard.server.db import get_db
from leaderboard.server.jobs.containers import enqueue_container, run_container_submission
from leaderboard.server.jobs.queue import redis_connection
from leaderboard.server.models import Benchmark, Submission
from leaderboard.server.services import reruns

log = logging.getLogger(__name__)


def advance(benchmark_id: int | None = None, *, created_by: int | None = None) -> list[int]:
    """One pass over release ``benchmark_id``'s campaign (None: every unfinished one); returns
    the re-runs it queued. Release 1 and unknown ids: nothing."""
    cfg = current_app.config
    queued: list[int] = []
    while True:
        with get_db().scope() as session:
            if benchmark_id is None:
                targets = reruns.open_campaigns(session)
            else:
                bench = session.get(Benchmark, benchmark_id)
                targets = [bench] if bench is not None else []
            added = []
            for bench in targets:
                added += reruns.plan(session, bench, data_dir=cfg["DATA_DIR"],
                                     window=max(1, cfg["RERUN_WINDOW"]), created_by=created_by)
        for sid in added:
            log.info("rerun submission=%s outcome=queued", sid)
            enqueue_container(sid)
        queued += added
        if not added or redis_connection() is not None:
            return queued


def after_import(benchmark_id: int, *, created_by: int | None = None) -> list[int]:
    """`advance` for an import that has committed (``import-pack``, the admin import, the build
    job); never raises: the import stands, and the reconciler's next pass plans instead."""
    try:
        return advance(benchmark_id, created_by=created_by)
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception("rerun benchmark=%s: planning after the import failed; the reconciler "
                      "will plan", benchmark_id)
        return []


def run_rerun(submission_id: int) -> dict:
    """The ``rerun`` queue's job: the container run, then the campaign's next pass."""
    summary = run_container_submission(submission_id)
    try:
        with get_db().scope() as session:
            bench_id = session.scalar(select(Submission.benchmark_id).where(
                Submission.id == int(submission_id)))
        if bench_id is not None:
            advance(bench_id)
    except Exception:  # noqa: BLE001 - the run's outcome stands; the reconciler's pass plans
        log.exception("rerun submission=%s: the campaign's next pass failed", submission_id)
    return summary
