"""What the admin overview says about the job queues (issue 21, item 6): each queue's depth and
the workers alive, read from Redis in a few cheap calls; without Redis (the embedded default)
jobs run inline in the web process and there is no queue to show.

Never raises for an outage: an unreachable Redis is reported (``error``) so the overview still
renders and says why the figures are missing.
"""
from __future__ import annotations

import logging
from datetime import datetime, timezone

import redis

from leaderboard.server.jobs.queue import GPU_QUEUE, SCORING_QUEUE, redis_connection

log = logging.getLogger(__name__)

#: queues always listed, even before their first job
KNOWN_QUEUES = (SCORING_QUEUE, GPU_QUEUE, "judge")
#: a worker that has not sent a heartbeat for this long is listed as silent, not alive
SILENT_AFTER_S = 120


def queue_status(app=None, *, now: datetime | None = None) -> dict:
    """``{"mode": "inline"|"redis", "queues": [{"name", "queued", "started", "failed"}],
    "workers": [{"name", "queues", "state", "last_heartbeat", "alive"}], "alive": n,
    "error": str|None}``."""
    conn = redis_connection(app)
    if conn is None:
        return {"mode": "inline", "queues": [], "workers": [], "alive": 0, "error": None}
    from rq import Queue, Worker
    from rq.serializers import JSONSerializer

    now = now or datetime.now(timezone.utc)
    try:
        names = set(KNOWN_QUEUES) | {q.name for q in Queue.all(connection=conn,
                                                                serializer=JSONSerializer)}
        queues = []
        for name in sorted(names):
            q = Queue(name, connection=conn, serializer=JSONSerializer)
            queues.append({"name": name, "queued": q.count,
                           "started": q.started_job_registry.count,
                           "failed": q.failed_job_registry.count})
        workers = []
        for w in Worker.all(connection=conn):
            beat = w.last_heartbeat
            if beat is not None and beat.tzinfo is None:
                beat = beat.replace(tzinfo=timezone.utc)  # rq stores UTC without a zone
            alive = beat is not None and (now - beat).total_seconds() < SILENT_AFTER_S
            workers.append({"name": w.name, "queues": w.queue_names(), "state": w.get_state(),
                            "last_heartbeat": beat.isoformat() if beat else None,
                            "alive": alive})
    except redis.exceptions.RedisError as exc:
        log.warning("admin overview: queue status unavailable: %s", exc)
        return {"mode": "redis", "queues": [], "workers": [], "alive": 0,
                "error": f"Redis is not answering ({type(exc).__name__})"}
    workers.sort(key=lambda w: w["name"])
    return {"mode": "redis", "queues": queues, "workers": workers,
            "alive": sum(w["alive"] for w in workers), "error": None}
