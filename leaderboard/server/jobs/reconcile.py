"""Finding submissions that fell out of the queue, and putting them back (or failing them).

A submission is *stuck* when it is received, queued or scoring and its ``deadline_at`` has passed
(a row with no deadline counts from ``created_at``): the worker was killed, Redis was flushed, or
the enqueue never reached Redis. Each stuck submission is either re-queued, or, once it has used
``MAX_ATTEMPTS`` scoring attempts, failed as a platform error with a clear reason (quota
refunded). None is ever dropped: every one found ends in one of those two states.
A queued submission whose job is still waiting in Redis (a long backlog) is left alone and given a
new deadline.

Judge jobs (`leaderboard.server.jobs.judging`) get the same treatment (`reconcile_judging`): a judging state
("queued"/"running" in ``notes_json["judging"]``) that has not moved for ``JUDGE_DEADLINE_S`` is
re-enqueued, and once the round has used ``MAX_ATTEMPTS`` judge runs it is marked "failed" with the
reason (the judge-free records stay on the board).

Challenges (issue 12): each pass also finishes every challenge whose last phase has closed
(`leaderboard.server.services.challenges.finish_due`): the private part is revealed and the
results are frozen by this scheduled job, never by a person.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from flask import current_app
from sqlalchemy import and_, or_, select

from leaderboard.server.db import get_db
from leaderboard.server.jobs import queue
from leaderboard.server.jobs.containers import enqueue_container
from leaderboard.server.jobs.scoring import enqueue_scoring
from leaderboard.server.models import IN_FLIGHT, Submission, utcnow
from leaderboard.server.services.scoring_service import record_platform_failure

log = logging.getLogger(__name__)


@dataclass
class ReconcileReport:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    extended: list[int] = field(default_factory=list)
    judging_requeued: list[int] = field(default_factory=list)
    judging_failed: list[int] = field(default_factory=list)
    challenges_finished: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        line = (f"requeued={len(self.requeued)} failed={len(self.failed)} "
                f"still_waiting={len(self.extended)}")
        if self.judging_requeued or self.judging_failed:
            line += (f" judging_requeued={len(self.judging_requeued)} "
                     f"judging_failed={len(self.judging_failed)}")
        if self.challenges_finished:
            line += f" challenges_finished={','.join(self.challenges_finished)}"
        return line


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
        (enqueue_container if container else enqueue_scoring)(sid)
    reconcile_judging(now=now, report=report)
    report.challenges_finished = finish_challenges(now=now)
    return report


def finish_challenges(*, now: datetime) -> list[str]:
    """Finish the challenges that have ended (private part revealed, results frozen), then
    clear their benchmarks' boards after the commit. Returns the benchmark keys."""
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.services.challenges import finish_due

    with get_db().scope() as session:
        keys = finish_due(session, now=now)
    for key in keys:
        invalidate_boards(key)
        log.info("reconcile challenge benchmark=%s outcome=finished", key)
    return keys


# -- judge jobs ---------------------------------------------------------------------------------
#: `judge_jobs.enqueue_judging` names its jobs ``judge-<submission id>-<hex>``
_JUDGE_JOB_ID = re.compile(r"^judge-(\d+)-")


def _judge_jobs_alive() -> set[int]:
    """Submissions with a judge job waiting, scheduled for a retry or running in Redis (none
    without Redis): a long backlog is not a lost job. Abandoned "running" entries of a killed
    worker are dropped by RQ's registry cleanup once they expire."""
    from rq.registry import ScheduledJobRegistry, StartedJobRegistry

    from leaderboard.server.jobs.judging import JUDGE_QUEUE
    q = queue.get_queue(JUDGE_QUEUE)
    if q is None:
        return set()
    ids = [*q.get_job_ids(), *StartedJobRegistry(queue=q).get_job_ids(),
           *ScheduledJobRegistry(queue=q).get_job_ids()]
    return {int(m[1]) for m in map(_JUDGE_JOB_ID.match, ids) if m}


def _stamp(value) -> str | None:
    if value is None:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat()


def reconcile_judging(*, now: datetime, report: ReconcileReport) -> None:
    """Re-enqueue judging lost to a Redis flush or a killed worker; fail it after MAX_ATTEMPTS.

    `services.judging.set_state` keeps no time, so the reconciler keeps its own clock: it stamps
    ``notes_json["judging"]["since"]`` on first sight of an in-flight state (every state change
    rewrites that dict and so restarts the clock) and acts ``JUDGE_DEADLINE_S`` later, i.e. at
    most one reconciler interval late. Runs are counted in ``notes_json["judging_attempts"]`` =
    ``{"judge", "scored_at", "attempts"}`` (set_state would erase a count kept inside "judging"):
    a new round (another judge, or a rescore, which changes ``finished_at``) starts again at 1.
    """
    import redis

    from leaderboard.server.jobs.judging import enqueue_judging
    from leaderboard.server.services.judging import JUDGING_IN_FLIGHT, set_state

    cfg = current_app.config
    db = get_db()
    deadline = timedelta(seconds=cfg["JUDGE_DEADLINE_S"])
    state_col = Submission.notes_json[("judging", "state")].as_string()
    with db.scope() as session:
        ids = list(session.scalars(select(Submission.id).where(state_col.in_(JUDGING_IN_FLIGHT))
                                   .order_by(Submission.id)))
    if not ids:
        return
    try:
        alive = _judge_jobs_alive()
    except redis.exceptions.RedisError:
        log.warning("reconcile judging skipped: Redis is not answering", exc_info=True)
        return
    for sid in ids:
        with db.scope() as session:
            q = select(Submission).where(Submission.id == sid)
            if session.get_bind().dialect.name == "postgresql":
                q = q.with_for_update(skip_locked=True)
            sub = session.scalar(q)
            notes = dict((sub.notes_json or {}) if sub is not None else {})
            judging = dict(notes.get("judging") or {})
            state, judge = judging.get("state"), judging.get("judge")
            if sub is None or state not in JUDGING_IN_FLIGHT or sub.status in IN_FLIGHT:
                continue  # finished meanwhile, or being rescored (scoring rewrites the notes)
            if sub.status != "scored" or sub.kind != "predictions":
                set_state(sub, "failed", judge, f"the submission is {sub.status}, not scored")
                report.judging_failed.append(sid)
                continue
            since = judging.get("since")
            if since is None or sid in alive:  # first sight, or a job is still on it
                sub.notes_json = {**notes, "judging": {**judging, "since": now.isoformat()}}
                continue
            if datetime.fromisoformat(since) + deadline > now:
                continue
            round_ = {"judge": judge, "scored_at": _stamp(sub.finished_at)}
            ledger = notes.get("judging_attempts") or {}
            attempts = ledger.get("attempts", 1) if ledger.get("judge") == judge and \
                ledger.get("scored_at") == round_["scored_at"] else 1
            if attempts >= cfg["MAX_ATTEMPTS"]:
                set_state(sub, "failed", judge, f"judging did not complete after {attempts} "
                          f"attempts (last state: {state})")
                report.judging_failed.append(sid)
                log.warning("reconcile judging submission=%s outcome=failed attempts=%s", sid,
                            attempts)
                continue
            set_state(sub, "queued", judge)
            fresh = sub.notes_json
            sub.notes_json = {**fresh, "judging": {**fresh["judging"], "since": now.isoformat()},
                              "judging_attempts": {**round_, "attempts": attempts + 1}}
            report.judging_requeued.append(sid)
        log.info("reconcile judging submission=%s outcome=requeued attempt=%s", sid, attempts + 1)
        enqueue_judging(sid, mark=False)
