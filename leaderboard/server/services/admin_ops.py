"""Administrators' operations on users, benchmarks and submissions, each audited.

Service functions in the project's shape: they take the session, check the actor is an admin,
change rows, append the audit event, and never commit. The caller commits and then calls
`leaderboard.server.boards.cache.invalidate_boards` where the function's docstring says a board changed.
"""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.server.access import audit
from leaderboard.server.access.admins import require_admin
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import IN_FLIGHT, Benchmark, Submission, User
from leaderboard.server.services import notices, sessions
from leaderboard.server.services.scoring_service import request_rescore

MAX_DESCRIPTION = 100_000
MAX_REASON = 2000


def get_user(session: Session, user_id: int) -> User:
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(f"no user {user_id}")
    return user


def set_active(session: Session, actor: User, user: User, active: bool, *, ip: str = "") -> None:
    """Disable or re-enable an account (a disabled user cannot log in, use tokens or download;
    disabling also ends every login session of the user, remember-me cookies included)."""
    require_admin(actor)
    if user.id == actor.id and not active:
        raise ServiceError("you cannot disable your own account")
    user.is_active = bool(active)
    if not active:
        sessions.revoke_all(session, user.id, reason="disabled")
    audit.record(session, actor, "admin.user.enable" if active else "admin.user.disable",
                 f"user:{user.id}", {"email": user.email}, ip)


def set_admin(session: Session, actor: User, user: User, is_admin: bool, *, ip: str = "") -> None:
    require_admin(actor)
    if user.id == actor.id and not is_admin:
        raise ServiceError("you cannot remove your own administrator rights")
    user.is_admin = bool(is_admin)
    audit.record(session, actor, "admin.user.make_admin" if is_admin else "admin.user.unadmin",
                 f"user:{user.id}", {"email": user.email}, ip)


def update_benchmark(session: Session, actor: User, bench: Benchmark, *,
                     description_md: str | None = None, submissions_open: bool | None = None,
                     daily_quota: int | None | str = "keep", private_revealed: bool | None = None,
                     agreement_gates_submissions: bool | None = None, ip: str = "") -> dict:
    """Change a benchmark's description, open/closed state, daily quota on its held-out split
    (None = the configured default), private-part visibility, or whether held-out submissions
    need an approved agreement (issue 21). Returns the changes (audited). Board-visible: the
    caller invalidates the benchmark's boards after commit."""
    require_admin(actor)
    changes: dict = {}
    if description_md is not None:
        if len(description_md) > MAX_DESCRIPTION:
            raise ServiceError(f"the description is at most {MAX_DESCRIPTION} characters")
        if description_md != bench.description_md:
            bench.description_md = description_md
            changes["description_md"] = f"{len(description_md)} characters"
    if submissions_open is not None and bool(submissions_open) != bench.submissions_open:
        bench.submissions_open = changes["submissions_open"] = bool(submissions_open)
    if daily_quota != "keep":
        if daily_quota is not None and (not isinstance(daily_quota, int) or daily_quota < 0):
            raise ServiceError(f"the daily quota must be a whole number >= 0, got {daily_quota!r}")
        if daily_quota != bench.daily_quota:
            bench.daily_quota = changes["daily_quota"] = daily_quota
    if private_revealed is not None and bool(private_revealed) != bench.private_revealed:
        bench.private_revealed = changes["private_revealed"] = bool(private_revealed)
    gates = agreement_gates_submissions
    if gates is not None and bool(gates) != bench.agreement_gates_submissions:
        bench.agreement_gates_submissions = changes["agreement_gates_submissions"] = bool(gates)
    if changes:
        audit.record(session, actor, "admin.benchmark.update", f"benchmark:{bench.key}",
                     changes, ip)
    return changes


def get_submission(session: Session, submission_id: int) -> Submission:
    sub = session.get(Submission, submission_id)
    if sub is None:
        raise NotFound(f"no submission {submission_id}")
    return sub


def set_hidden(session: Session, actor: User, sub: Submission, hidden: bool, *,
               reason: str | None = None, ip: str = "") -> None:
    """Hide a submission from every public page (board-visible), with a reason its team reads
    on its own pages and in the API; unhide clears the reason. A hidden submission no longer
    represents its team: its final selection is withdrawn."""
    require_admin(actor)
    reason = (reason or "").strip() or None
    if reason is not None and len(reason) > MAX_REASON:
        raise ServiceError(f"the reason is at most {MAX_REASON} characters, got {len(reason)}")
    sub.hidden = bool(hidden)
    sub.hidden_reason = reason if hidden else None
    unselected = bool(hidden and sub.selected)
    if unselected:
        sub.selected = False
    audit.record(session, actor, "admin.submission.hide" if hidden else "admin.submission.unhide",
                 f"submission:{sub.id}", {"benchmark": sub.benchmark_id, "reason": reason,
                                          "unselected": unselected}, ip)
    notices.for_submission(
        session, sub, "submission.hidden" if hidden else "submission.unhidden",
        f"Submission #{sub.id} ({sub.method_name}) was "
        + (("hidden by an administrator: it is off every public page and board"
            + (f" (reason: {reason})." if reason else "."))
           if hidden else "made visible again by an administrator."))


def disqualify(session: Session, actor: User, sub: Submission, reason: str | None, *,
               ip: str = "") -> None:
    """Disqualify with a public reason, or reinstate with an empty one (board-visible)."""
    require_admin(actor)
    reason = (reason or "").strip() or None
    if reason is not None and len(reason) > MAX_REASON:
        raise ServiceError(f"the reason is at most {MAX_REASON} characters, got {len(reason)}")
    sub.disqualified_reason = reason
    audit.record(session, actor,
                 "admin.submission.disqualify" if reason else "admin.submission.reinstate",
                 f"submission:{sub.id}", {"reason": reason}, ip)
    notices.for_submission(
        session, sub, "submission.disqualified" if reason else "submission.reinstated",
        f"Submission #{sub.id} ({sub.method_name}) was "
        + (f"disqualified: {reason}" if reason else "reinstated by an administrator."))


def rescore(session: Session, actor: User, subs: list[Submission], *, deadline_s: int,
            ip: str = "", target: str = "") -> list[int]:
    """Put finished prediction submissions back in the queue; returns their ids. The caller
    commits, then enqueues each id (`leaderboard.server.jobs.scoring.enqueue_scoring`)."""
    require_admin(actor)
    ids = []
    for sub in subs:
        if sub.status in IN_FLIGHT or sub.kind != "predictions":
            continue
        request_rescore(session, sub, deadline_s=deadline_s)
        ids.append(sub.id)
    audit.record(session, actor, "admin.submission.rescore",
                 target or (f"submission:{ids[0]}" if len(ids) == 1 else "submissions"),
                 {"submissions": ids}, ip)
    return ids


def rescore_progress(session: Session, bench: Benchmark) -> dict:
    """Submissions of ``bench`` per status; ``in_flight`` reaches 0 when a rescore is done."""
    counts = dict(session.execute(
        select(Submission.status, func.count()).where(Submission.benchmark_id == bench.id)
        .group_by(Submission.status)).all())
    total = sum(counts.values())
    in_flight = sum(counts.get(s, 0) for s in IN_FLIGHT)
    return {"benchmark": bench.key, "counts": counts, "total": total, "in_flight": in_flight,
            "done": total - in_flight}
