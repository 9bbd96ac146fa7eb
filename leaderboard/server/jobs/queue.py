"""Handing submissions to workers.

`enqueue_scoring` writes the "queued" state (with a deadline) and commits *before* touching Redis,
so a lost enqueue (Redis down, flushed, worker killed) leaves a row the reconciler will find; the
database is the truth and the queue only carries work. Without ``REDIS_URL`` the job runs inline in
the calling process (the embedded default).

Every enqueue states its policy explicitly: ``job_timeout`` (SCORING_TIMEOUT_S), ``result_ttl``,
``failure_ttl``, a `Retry` for transient failures (the job cancels retries for the others), and
the JSON serializer (jobs carry only ids, never pickles).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

import redis
from flask import current_app
from rq import Queue, Retry
from rq.serializers import JSONSerializer
from sqlalchemy import update
from sqlalchemy.exc import InterfaceError, OperationalError

from leaderboard.server.db import get_db
from leaderboard.server.models import Submission, utcnow

log = logging.getLogger(__name__)

SCORING_QUEUE = "scoring"
RETRY = Retry(max=2, interval=[10, 60])
#: failures of the database or Redis connection: the job is retried or re-queued, not failed
TRANSIENT = (OperationalError, InterfaceError, redis.exceptions.ConnectionError,
             redis.exceptions.TimeoutError, TimeoutError)


def redis_connection(app=None) -> redis.Redis | None:
    """The app's Redis connection, or None when jobs run inline."""
    app = app or current_app
    url = app.config.get("REDIS_URL")
    if not url:
        return None
    conn = app.extensions.get("lb_redis")
    if conn is None:
        conn = app.extensions["lb_redis"] = redis.Redis.from_url(url)
    return conn


def get_queue(name: str = SCORING_QUEUE, app=None) -> Queue | None:
    conn = redis_connection(app)
    if conn is None:
        return None
    return Queue(name, connection=conn, serializer=JSONSerializer)


def enqueue_or_run_inline(queue_name: str, func: str, submission_id: int, *, job_id: str,
                          inline: Callable[[int], object], kind: str, job_timeout: int,
                          retry: Retry | None, description: str, recovery: str) -> None:
    """Enqueue ``func(submission_id)`` on ``queue_name`` with the configured TTLs, or, without
    ``REDIS_URL``, call ``inline(submission_id)`` in this process.

    Never raises: an inline job has already recorded its failure on the row, and a lost enqueue
    is logged with ``recovery`` (who picks the row up again), so the web request or job that
    asked carries on. ``kind`` ("" or e.g. "container ") prefixes the submission in log lines.
    """
    cfg = current_app.config
    queue = get_queue(queue_name)
    if queue is None:
        try:
            inline(submission_id)
        except Exception:
            log.exception("inline %sjob submission=%s raised", kind, submission_id)
        return
    try:
        queue.enqueue(func, submission_id, job_id=job_id, job_timeout=job_timeout,
                      result_ttl=cfg["JOB_RESULT_TTL_S"], failure_ttl=cfg["JOB_FAILURE_TTL_S"],
                      retry=retry, description=description)
    except redis.exceptions.RedisError:
        log.warning("enqueue %ssubmission=%s failed; %s", kind, submission_id, recovery,
                    exc_info=True)


def mark_queued(submission_id: int, job_id: str, deadline_s: int) -> None:
    """Record the job on the row before it is enqueued: the row, not the queue, is the truth."""
    now = utcnow()
    with get_db().scope() as session:
        session.execute(
            update(Submission)
            .where(Submission.id == submission_id,
                   Submission.status.in_(("received", "queued")))
            .values(status="queued", queued_at=now, job_id=job_id,
                    deadline_at=now + timedelta(seconds=deadline_s)))


GPU_QUEUE = "gpu"


def job_waiting(job_id: str | None) -> bool:
    """True if ``job_id`` is still waiting in Redis (queued, scheduled or deferred)."""
    conn = redis_connection()
    if conn is None or not job_id:
        return False
    from rq.exceptions import NoSuchJobError
    from rq.job import Job
    try:
        job = Job.fetch(job_id, connection=conn, serializer=JSONSerializer)
    except NoSuchJobError:
        return False
    return job.get_status(refresh=False) in ("queued", "scheduled", "deferred")
