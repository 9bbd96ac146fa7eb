"""Finding submissions that fell out of the queue, and putting them back (or failing them).

A submission is *stuck* when it is received, queued or scoring and its ``deadline_at`` has passed
(a row with no deadline counts from ``created_at``): the worker was killed, Redis was flushed, or
the enqueue never reached Redis. Each stuck submission is either re-queued, or, once it has used
``MAX_ATTEMPTS`` scoring attempts, failed as a platform error with a clear reason (quota
refunded). None is ever dropped: every one found ends in one of those two states.
A queued submission whose job is still waiting in Redis (a long backlog) is left alone and given a
new deadline.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from flask import current_app
from sqlalchemy import and_, or_, select

from leaderboard import queue
from leaderboard.db import get_db
from leaderboard.models import IN_FLIGHT, Submission, utcnow
from leaderboard.services.scoring_service import record_platform_failure

log = logging.getLogger(__name__)


@dataclass
class ReconcileReport:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    extended: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        return (f"requeued={len(self.requeued)} failed={len(self.failed)} "
                f"still_waiting={len(self.extended)}")


def stuck_ids(session, *, now: datetime, grace_s: int) -> list[int]:
    return list(session.scalars(
        select(Submission.id).where(
            Submission.status.in_(IN_FLIGHT),
            or_(Submission.deadline_at < now,
                and_(Submission.deadline_at.is_(None),
                     Submission.created_at < now - timedelta(seconds=grace_s))))
        .order_by(Submission.id)))


def reconcile(*, now: datetime | None = None) -> ReconcileReport:
    """One pass over stuck submissions (inside an app context)."""
    cfg = current_app.config
    db = get_db()
    now = now or utcnow()
    report = ReconcileReport()
    with db.scope() as session:
        ids = stuck_ids(session, now=now, grace_s=cfg["QUEUE_DEADLINE_S"])
    for sid in ids:
        with db.scope() as session:
            q = select(Submission).where(Submission.id == sid)
            if session.get_bind().dialect.name == "postgresql":
                q = q.with_for_update(skip_locked=True)  # two reconcilers never act twice
            sub = session.scalar(q)
            if sub is None or sub.status not in IN_FLIGHT:
                continue  # finished meanwhile
            if sub.deadline_at is not None and sub.deadline_at >= now:
                continue  # a job picked it up meanwhile
            if sub.status == "queued" and queue.job_waiting(sub.job_id):
                sub.deadline_at = now + timedelta(seconds=cfg["QUEUE_DEADLINE_S"])
                report.extended.append(sid)
                continue
            container = sub.kind == "container"  # a dead gpu worker: re-run, then give up
            if sub.attempts >= cfg["CONTAINER_MAX_ATTEMPTS" if container else "MAX_ATTEMPTS"]:
                record_platform_failure(
                    session, sid, f"the runner stopped during the run ({sub.attempts} attempts)"
                    if container else f"scoring did not complete after {sub.attempts} attempts "
                    f"(last state: {sub.status})")
                report.failed.append(sid)
                log.warning("reconcile submission=%s outcome=failed attempts=%s", sid,
                            sub.attempts)
                continue
            # back to "received" so enqueue_scoring's guarded update applies
            sub.status = "received"
            report.requeued.append(sid)
        log.info("reconcile submission=%s outcome=requeued", sid)
        (queue.enqueue_container if container else queue.enqueue_scoring)(sid)
    return report
