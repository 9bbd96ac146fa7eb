"""Finding submissions that fell out of the queue, and putting them back (or failing them).

One pass (``python -m leaderboard reconcile --every 10`` runs one every 10 s) looks at every
submission in flight and decides from the database and what Redis shows (issue 17: nothing waits
for a deadline it does not need):

- **received** for `RECOVERY_GRACE_S`: committed but never handed to a queue (the web worker died
  after the commit, or Redis was down): enqueued now.
- **queued**: its job must be waiting in its queue, deferred, or scheduled for a retry that is
  not overdue (`leaderboard.server.jobs.queue.QueueView`), or already running (its lease). A job
  Redis no longer holds (flushed, lost in a Redis crash mid-dequeue, its worker killed between
  dequeue and start) is re-queued as soon as the row has been queued for `RECOVERY_GRACE_S`.
  A job still waiting past the row's deadline is a backlog: the deadline moves on.
- **scoring**: the work-horse renews a lease every few seconds (`leaderboard.server.jobs.lease`);
  a row with no lease, claimed more than `RECOVERY_GRACE_S` ago, lost its worker and is
  re-queued; but not while Redis restarted less than a lease's TTL ago and after the claim
  (the live job has not written its lease again yet): an outage costs no job an attempt. Container runs keep to their deadline (wall limit + margin): the orphaned container
  holds its GPU until the reaper removes it, so re-running earlier would share the device.
- **any state past its deadline** (a row with none counts from ``created_at`` +
  ``QUEUE_DEADLINE_S``): re-queued. This is all the reconciler can go by without Redis (inline
  jobs, or Redis down: then it never guesses from missing evidence).

A re-queued job goes to the *front* of its queue (RQ ``at_front``): it has waited its turn once
already, and behind a backlog it would otherwise wait for the whole backlog again (issue 24:
70 to 593 s after the kill at 1.5 uploads/s against 0.75/s scored).

Every pass ends with one log line (`ReconcileReport.log_line`): when it started (UTC), how long
it took, how many rows it looked at, whether Redis gave evidence, and the ids it re-queued,
failed or extended. ``reconcile --every N`` starts a pass every N seconds measured from the
start of the previous one (not N seconds after it ended), and runs the next pass within
`RETRY_S` of a failed one or of one that had no Redis evidence, instead of a whole period later:
a re-queue is then due at most lease TTL (15 s) + one period (10 s) + one pass after the kill.

Re-queuing a submission that used ``MAX_ATTEMPTS`` (``CONTAINER_MAX_ATTEMPTS``) fails it as a
platform error with the reason (quota refunded) instead. Only the job's own failures count: an
attempt an outage cut is given back by the job (`scoring.give_back_attempt`), or, when the
database was away, noted in Redis and given back here when the row is re-queued. None is ever dropped. Two reconcilers
are safe: each acts on a row only under its row lock and only if the row is unchanged since it
decided, and a duplicate job is harmless (only one claim of a row wins).

Judge jobs (`leaderboard.server.jobs.judging`) get the same treatment (`reconcile_judging`):
judging "queued"/"running" with no job in the ``judge`` queue and no judge lease is re-enqueued
after `RECOVERY_GRACE_S` (after ``JUDGE_DEADLINE_S`` without Redis), and once the round has used
``MAX_ATTEMPTS`` judge runs it is marked "failed" with the reason (the judge-free records stay on
the board).

Admin jobs (issue 36): each pass also finds robustness copy builds and pack builds whose
worker died (their lease gone for ``lease.TTL_S``): one that never started is enqueued again,
one cut while running is failed with the reason and its partial files are removed
(`leaderboard.server.jobs.admin_recovery`).

Challenges (issue 12): each pass also finishes every challenge whose last phase has closed
(`leaderboard.server.services.challenges.finish_due`): the private part is revealed and the
results are frozen by this scheduled job, never by a person.

Re-runs on a new release (issue 37) are container submissions like any other here (their job
waits on the ``rerun`` queue instead of ``gpu``); each pass also advances every unfinished
re-run campaign (`leaderboard.server.jobs.reruns.advance`), so a campaign whose last job died
still moves on.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import redis
from flask import current_app
from sqlalchemy import select

from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.db import get_db
from leaderboard.server.jobs import lease, queue
from leaderboard.server.jobs.admin_recovery import recover_admin_jobs
from leaderboard.server.jobs.containers import enqueue_container
from leaderboard.server.jobs.judging import JUDGE_QUEUE, enqueue_judging
from leaderboard.server.jobs.mail import reconcile_mail
from leaderboard.server.jobs.reruns import advance as advance_reruns
from leaderboard.server.jobs.scoring import enqueue_scoring, give_back_key
from leaderboard.server.models import IN_FLIGHT, Submission, utcnow
from leaderboard.server.services.challenges import finish_due
from leaderboard.server.services.judging import JUDGING_IN_FLIGHT, set_state
from leaderboard.server.services.scoring_service import record_platform_failure

log = logging.getLogger(__name__)


#: seconds before the next pass when one failed or ran without Redis evidence
RETRY_S = 2.0


@dataclass
class ReconcileReport:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    extended: list[int] = field(default_factory=list)
    judging_requeued: list[int] = field(default_factory=list)
    judging_failed: list[int] = field(default_factory=list)
    challenges_finished: list[str] = field(default_factory=list)
    #: re-runs of release campaigns queued by this pass (`leaderboard.server.jobs.reruns`)
    reruns_queued: list[int] = field(default_factory=list)
    #: admin jobs (`leaderboard.server.jobs.admin_recovery`): "robustness-build:<id>", ...
    builds_failed: list[str] = field(default_factory=list)
    builds_requeued: list[str] = field(default_factory=list)
    #: the mail pass (`leaderboard.server.jobs.mail.reconcile_mail`): counts by what was done
    mail: dict[str, int] = field(default_factory=dict)
    started_at: datetime | None = None
    duration_s: float = 0.0
    in_flight: int = 0
    #: Redis answered (queues and leases read); False: only deadlines counted this pass
    evidence: bool = True

    def log_line(self) -> str:
        """``reconcile pass at=<UTC> duration_s=... in_flight=... evidence=redis|none
        requeued=2[5,7] failed=0 still_waiting=0`` (+ judging and challenges when any)."""
        at = self.started_at.isoformat(timespec="milliseconds") if self.started_at else "-"
        parts = [f"reconcile pass at={at}", f"duration_s={self.duration_s:.3f}",
                 f"in_flight={self.in_flight}",
                 f"evidence={'redis' if self.evidence else 'none'}"]
        for label, name in (("requeued", "requeued"), ("failed", "failed"),
                            ("still_waiting", "extended"), ("judging_requeued", "judging_requeued"),
                            ("judging_failed", "judging_failed"),
                            ("builds_failed", "builds_failed"),
                            ("builds_requeued", "builds_requeued"),
                            ("reruns_queued", "reruns_queued"),
                            ("challenges_finished", "challenges_finished")):
            values = getattr(self, name)
            if values:
                parts.append(f"{label}={len(values)}[{','.join(str(v) for v in values)}]")
            elif not label.startswith(("judging", "challenges", "builds", "reruns")):
                parts.append(f"{label}=0")
        parts += [f"mail_{k}={v}" for k, v in self.mail.items() if v]
        return " ".join(parts)

    def __str__(self) -> str:
        line = (f"requeued={len(self.requeued)} failed={len(self.failed)} "
                f"still_waiting={len(self.extended)}")
        if self.judging_requeued or self.judging_failed:
            line += (f" judging_requeued={len(self.judging_requeued)} "
                     f"judging_failed={len(self.judging_failed)}")
        if self.challenges_finished:
            line += f" challenges_finished={','.join(self.challenges_finished)}"
        return line


@dataclass(frozen=True)
class _Row:
    """A submission in flight as read at the start of the pass (unlocked)."""

    id: int
    status: str
    kind: str
    job_id: str | None
    attempts: int
    created_at: datetime
    queued_at: datetime | None
    started_at: datetime | None
    deadline_at: datetime | None


@dataclass(frozen=True)
class Evidence:
    """What Redis showed, read after the rows (so a row that moved on is caught by its recheck)."""

    views: dict[str, queue.QueueView]
    scoring_leases: set[int]
    judge_leases: set[int]
    #: when (unix seconds, real clock) the Redis answering now started: a lease missing for a
    #: job claimed before then may just not have been written again yet
    redis_started: float = 0.0


def _gather(row_ids: list[int], judge_ids: list[int]) -> Evidence | None:
    """The evidence, or None without Redis or while it does not answer (then only deadlines
    count: missing evidence is never read as a lost job)."""
    conn = queue.redis_connection()
    if conn is None:
        return None
    try:
        views = {name: queue.queue_view(name, conn)
                 for name in (queue.SCORING_QUEUE, queue.GPU_QUEUE, queue.RERUN_QUEUE,
                              JUDGE_QUEUE)}
        uptime = float(conn.info("server").get("uptime_in_seconds", 0))
        return Evidence(views, lease.held(conn, "score", row_ids),
                        lease.held(conn, "judge", judge_ids), redis_started=time.time() - uptime)
    except redis.exceptions.RedisError as exc:
        log.warning("reconcile: Redis is not answering (%s); deadlines only this pass",
                    type(exc).__name__)
        return None


def _verdict(row: _Row, ev: Evidence | None, *, now: datetime, cfg) -> str:
    """``"ok"``, ``"extend"`` (a backlog past its deadline) or ``"lost"`` (re-queue or fail)."""
    grace = timedelta(seconds=cfg["RECOVERY_GRACE_S"])
    deadline = row.deadline_at or row.created_at + timedelta(seconds=cfg["QUEUE_DEADLINE_S"])
    overdue = deadline < now
    if row.status == "received":
        return "lost" if overdue or row.created_at < now - grace else "ok"
    if ev is None:
        return "lost" if overdue else "ok"
    if row.status == "queued":
        # a container job waits on ``gpu``, or on ``rerun`` for a platform re-run (issue 37)
        names = ((queue.GPU_QUEUE, queue.RERUN_QUEUE) if row.kind == "container"
                 else (queue.SCORING_QUEUE,))
        if any(ev.views[n].holds(row.job_id, now=now, grace_s=grace.total_seconds())
               for n in names) or row.id in ev.scoring_leases:
            return "extend" if overdue else "ok"
        return "lost" if overdue or (row.queued_at or row.created_at) < now - grace else "ok"
    if overdue:  # scoring past SCORING_TIMEOUT_S + grace: RQ would have killed it by now
        return "lost"
    if row.kind == "container" or row.id in ev.scoring_leases:
        return "ok"
    if _lease_may_come_back(row, ev):
        return "ok"
    return "lost" if (row.started_at or row.created_at) < now - grace else "ok"


def _lease_may_come_back(row: _Row, ev: Evidence) -> bool:
    """Redis restarted (empty) less than a lease's TTL ago while this row was being scored: a
    live job writes its lease again within ``lease.RENEW_S``, so its absence proves nothing
    yet. Re-queuing it now would cost the job an attempt for a Redis outage (issue 36); a dead
    one is re-queued a few seconds later instead. Real clock: Redis reports its own uptime."""
    if time.time() - ev.redis_started >= lease.TTL_S:
        return False
    started = row.started_at or row.created_at
    started = started if started.tzinfo else started.replace(tzinfo=timezone.utc)
    return started.timestamp() < ev.redis_started


def _in_flight(session) -> list[_Row]:
    return [_Row(*r) for r in session.execute(
        select(Submission.id, Submission.status, Submission.kind, Submission.job_id,
               Submission.attempts, Submission.created_at, Submission.queued_at,
               Submission.started_at, Submission.deadline_at)
        .where(Submission.status.in_(IN_FLIGHT)).order_by(Submission.id))]


def _locked(session, sid: int) -> Submission | None:
    q = select(Submission).where(Submission.id == sid)
    if session.get_bind().dialect.name == "postgresql":
        q = q.with_for_update(skip_locked=True)  # two reconcilers never act twice
    return session.scalar(q)


def reconcile(*, now: datetime | None = None) -> ReconcileReport:
    """One pass over the submissions and judge jobs in flight (inside an app context)."""
    cfg = current_app.config
    db = get_db()
    clock = time.monotonic()
    report = ReconcileReport(started_at=utcnow())
    now = now or report.started_at
    with db.scope() as session:
        rows = _in_flight(session)
        judge_ids = _judging_ids(session)
    report.in_flight = len(rows)
    ev = _gather([r.id for r in rows], judge_ids)
    report.evidence = ev is not None
    recovered: list[tuple[int, bool]] = []  # (submission, is a container run), by id
    for row in rows:
        verdict = _verdict(row, ev, now=now, cfg=cfg)
        if verdict == "ok":
            continue
        with db.scope() as session:
            sub = _locked(session, row.id)
            if sub is None or (sub.status, sub.job_id, sub.attempts) != \
                    (row.status, row.job_id, row.attempts):
                continue  # it moved on (or another reconciler holds it) since we looked
            if verdict == "extend":
                sub.deadline_at = now + timedelta(seconds=cfg["QUEUE_DEADLINE_S"])
                report.extended.append(row.id)
                continue
            container = sub.kind == "container"
            if _given_back(row.id, sub.attempts):
                sub.attempts -= 1  # an outage cut it, not the job (`scoring.give_back_attempt`)
            if sub.attempts >= cfg["CONTAINER_MAX_ATTEMPTS" if container else "MAX_ATTEMPTS"]:
                record_platform_failure(
                    session, row.id, f"the runner stopped during the run ({sub.attempts} "
                    "attempts)" if container else f"scoring did not complete after "
                    f"{sub.attempts} attempts (last state: {sub.status})")
                report.failed.append(row.id)
                log.warning("reconcile submission=%s outcome=failed attempts=%s", row.id,
                            sub.attempts)
                continue
            sub.status = "received"  # so enqueue's guarded update applies
            report.requeued.append(row.id)
            recovered.append((row.id, container))
        log.info("reconcile submission=%s outcome=requeued was=%s at_front=1", row.id,
                 row.status)
    # Each goes to the front of its queue; pushed newest first, so that the oldest (the one
    # that has waited longest, e.g. after a FLUSHALL lost a whole backlog) is taken first. A
    # pass that dies before this leaves rows "received", which the next pass enqueues.
    for sid, container in reversed(recovered):
        (enqueue_container if container else enqueue_scoring)(sid, at_front=True)
    reconcile_judging(now=now, report=report, ids=judge_ids, ev=ev)
    admin = recover_admin_jobs(now=now)
    report.builds_failed, report.builds_requeued = admin.failed, admin.requeued
    report.challenges_finished = finish_challenges(now=now)
    try:
        report.reruns_queued = advance_reruns()  # issue 37: campaigns move on past a dead job
    except queue.TRANSIENT:
        log.warning("reconcile re-run pass failed; the next pass retries", exc_info=True)
    try:
        report.mail = reconcile_mail()  # waiting mail (SMTP back), dead senders, digests
    except queue.TRANSIENT:
        log.warning("reconcile mail pass failed; the next pass retries", exc_info=True)
    report.duration_s = time.monotonic() - clock
    log.info("%s", report.log_line())
    return report


def _given_back(sid: int, attempts: int) -> bool:
    """Whether the job noted in Redis that an outage cut its attempt number ``attempts`` (the
    database was away, so it could not give the attempt back itself); the note is used once."""
    conn = queue.redis_connection()
    if conn is None:
        return False
    try:
        noted = conn.get(give_back_key(sid))
        if noted is None or int(noted) != attempts:
            return False
        conn.delete(give_back_key(sid))
        return True
    except (redis.exceptions.RedisError, ValueError):
        return False


def finish_challenges(*, now: datetime) -> list[str]:
    """Finish the challenges that have ended (private part revealed, results frozen), then
    clear their benchmarks' boards after the commit. Returns the benchmark keys."""
    with get_db().scope() as session:
        keys = finish_due(session, now=now)
    for key in keys:
        invalidate_boards(key)
        log.info("reconcile challenge benchmark=%s outcome=finished", key)
    return keys


# -- judge jobs ---------------------------------------------------------------------------------
#: `leaderboard.server.jobs.judging.enqueue_judging` names its jobs ``judge-<submission id>-<hex>``
_JUDGE_JOB_ID = re.compile(r"^judge-(\d+)-")


def _judging_ids(session) -> list[int]:
    state_col = Submission.notes_json[("judging", "state")].as_string()
    return list(session.scalars(select(Submission.id).where(state_col.in_(JUDGING_IN_FLIGHT))
                                .order_by(Submission.id)))


def _judge_jobs_alive(ev: Evidence, now: datetime, grace_s: float) -> set[int]:
    """Submissions with a judge job waiting, deferred or scheduled (not overdue) in Redis, or
    running (its lease): a long backlog is not a lost job."""
    view = ev.views[JUDGE_QUEUE]
    ids = set(ev.judge_leases)
    for job_id in view.job_ids():
        match = _JUDGE_JOB_ID.match(job_id)
        if match and view.holds(job_id, now=now, grace_s=grace_s):
            ids.add(int(match[1]))
    return ids


def _stamp(value) -> str | None:
    if value is None:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat()


def reconcile_judging(*, now: datetime, report: ReconcileReport, ids: list[int],
                      ev: Evidence | None) -> None:
    """Re-enqueue judging lost to a Redis flush or a killed worker; fail it after MAX_ATTEMPTS.

    `leaderboard.server.services.judging.set_state` keeps no time, so the reconciler keeps its
    own clock: it stamps ``notes_json["judging"]["since"]`` on first sight of an in-flight state
    and again at every pass that finds its job alive (every state change rewrites that dict and
    so restarts the clock). It acts once the state has gone without a live job for
    `RECOVERY_GRACE_S` (with Redis), or ``JUDGE_DEADLINE_S`` after the stamp without Redis,
    where nothing shows whether a job lives. Runs are counted in
    ``notes_json["judging_attempts"]`` = ``{"judge", "scored_at", "attempts"}`` (set_state would
    erase a count kept inside "judging"): a new round (another judge, or a rescore, which changes
    ``finished_at``) starts again at 1.
    """
    if not ids:
        return
    cfg = current_app.config
    if ev is None and queue.redis_connection() is not None:
        log.warning("reconcile judging skipped: Redis is not answering")
        return
    grace_s = cfg["RECOVERY_GRACE_S"]
    wait = timedelta(seconds=grace_s if ev is not None else cfg["JUDGE_DEADLINE_S"])
    alive = _judge_jobs_alive(ev, now, grace_s) if ev is not None else set()
    db = get_db()
    for sid in ids:
        with db.scope() as session:
            sub = _locked(session, sid)
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
            if datetime.fromisoformat(since) + wait > now:
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
        enqueue_judging(sid, mark=False, at_front=True)
