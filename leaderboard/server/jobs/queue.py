"""Handing submissions to workers.

`enqueue_scoring` writes the "queued" state (with a deadline) and commits *before* touching Redis,
so a lost enqueue (Redis down, flushed, worker killed) leaves a row the reconciler will find; the
database is the truth and the queue only carries work. Without ``REDIS_URL`` the job runs inline in
the calling process (the embedded default). `queue_view` is what the reconciler reads to tell a
job that will still run (waiting, deferred, a retry not yet due) from a lost one, and the Redis
connection fails fast (`redis_connection`): a web request never waits on a Redis that is down.

Every enqueue states its policy explicitly: ``job_timeout`` (SCORING_TIMEOUT_S), ``result_ttl``,
``failure_ttl``, a `Retry` for transient failures (the job cancels retries for the others), and
the JSON serializer (jobs carry only ids, never pickles).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import redis
import redis.retry
from flask import current_app
from redis.backoff import ExponentialWithJitterBackoff
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
        # Fail fast when Redis is down (redis-py would otherwise retry each command ten times):
        # a lost enqueue costs nothing, the reconciler re-queues the row when Redis answers.
        conn = app.extensions["lb_redis"] = redis.Redis.from_url(
            url, socket_connect_timeout=2,
            retry=redis.retry.Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.5), 2))
    return conn


def get_queue(name: str = SCORING_QUEUE, app=None) -> Queue | None:
    conn = redis_connection(app)
    if conn is None:
        return None
    return Queue(name, connection=conn, serializer=JSONSerializer)


def enqueue_or_run_inline(queue_name: str, func: str, submission_id: int, *, job_id: str,
                          inline: Callable[[int], object], kind: str, job_timeout: int,
                          retry: Retry | None, description: str, recovery: str,
                          at_front: bool = False) -> None:
    """Enqueue ``func(submission_id)`` on ``queue_name`` with the configured TTLs, or, without
    ``REDIS_URL``, call ``inline(submission_id)`` in this process. ``at_front``: ahead of every
    job waiting (a recovered job has already waited its turn once).

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
                      retry=retry, description=description, at_front=at_front)
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
#: issue 37: the platform's re-runs of container submissions on a new release. A GPU worker
#: takes it after every other queue it works (`leaderboard worker` appends it to a queue list
#: with ``gpu``), so a team's new submission never waits behind a campaign.
RERUN_QUEUE = "rerun"


def current_job_id() -> str:
    """The RQ job running this code, or "inline" (names the holder of a lease)."""
    from rq import get_current_job
    job = get_current_job()
    return job.id if job is not None else "inline"


@dataclass(frozen=True)
class QueueView:
    """What Redis holds for one queue at one instant: the jobs that will still run by themselves.

    A job counts while it waits in the queue's list, in its deferred registry, or in its
    scheduled registry (a retry after a transient failure) unless its time is more than a grace
    past (no scheduler is running to move it). A job taken off the list by a worker is not here:
    from then on the lease (`leaderboard.server.jobs.lease`) is the evidence that it runs.
    """

    waiting: frozenset[str]
    scheduled: dict[str, float]  # job id -> when it is due (unix seconds)
    deferred: frozenset[str]

    def holds(self, job_id: str | None, *, now: datetime, grace_s: float) -> bool:
        if not job_id:
            return False
        if job_id in self.waiting or job_id in self.deferred:
            return True
        due = self.scheduled.get(job_id)
        return due is not None and due >= now.timestamp() - grace_s

    def job_ids(self) -> set[str]:
        return {*self.waiting, *self.scheduled, *self.deferred}


def queue_view(name: str, conn: redis.Redis) -> QueueView:
    """One consistent-enough read (a pipeline) of queue ``name``. Raises RedisError."""
    from rq.registry import DeferredJobRegistry, ScheduledJobRegistry

    q = Queue(name, connection=conn, serializer=JSONSerializer)
    pipe = conn.pipeline(transaction=False)
    pipe.lrange(q.key, 0, -1)
    pipe.zrange(ScheduledJobRegistry(queue=q).key, 0, -1, withscores=True)
    pipe.zrange(DeferredJobRegistry(queue=q).key, 0, -1)
    waiting, scheduled, deferred = pipe.execute()
    return QueueView(waiting=frozenset(j.decode() for j in waiting),
                     scheduled={j.decode(): float(t) for j, t in scheduled},
                     deferred=frozenset(j.decode() for j in deferred))
