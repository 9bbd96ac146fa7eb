"""The admin overview's figures from the database (issue 21, item 6): pending agreement
requests, recent failures, submissions in flight and per day. Each is one small indexed query
(the overview must stay cheap on a large site); the queue's own figures come from
`leaderboard.server.jobs.status`."""
from __future__ import annotations

from datetime import date, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.server.models import IN_FLIGHT, Benchmark, Submission, Team, User, utcnow
from leaderboard.server.models.access import AccessRequest

#: days shown in "submissions per day"
DAYS = 14
#: rows shown in each list
LIST_ROWS = 8


def pending_requests(session: Session, *, limit: int = LIST_ROWS) -> dict:
    """``{"count", "oldest" (datetime|None), "rows": [{id, user, email, benchmark, signed_at}]}``:
    the longest-waiting first, so the overview shows who has waited most."""
    count = session.scalar(select(func.count(AccessRequest.id))
                           .where(AccessRequest.status == "pending")) or 0
    rows = session.execute(
        select(AccessRequest.id, User.display_name, User.email, Benchmark.key,
               AccessRequest.accepted_at, User.id)
        .join(User, AccessRequest.user_id == User.id)
        .join(Benchmark, AccessRequest.benchmark_id == Benchmark.id)
        .where(AccessRequest.status == "pending")
        .order_by(AccessRequest.id).limit(limit)).all()
    return {"count": count, "oldest": rows[0][4] if rows else None,
            "rows": [{"id": rid, "user": name, "email": email, "user_id": uid,
                      "benchmark": key, "signed_at": at}
                     for rid, name, email, key, at, uid in rows]}


def recent_failures(session: Session, *, days: int = 7, limit: int = LIST_ROWS,
                    now: datetime | None = None) -> dict:
    """Failed submissions of the last ``days``: ``{"count", "rows": [{id, team, team_id,
    benchmark, split, kind, reason, at}]}``, newest first."""
    since = (now or utcnow()) - timedelta(days=days)
    failed = (Submission.status == "failed", Submission.created_at >= since)
    count = session.scalar(select(func.count(Submission.id)).where(*failed)) or 0
    rows = session.execute(
        select(Submission.id, Team.name, Team.id, Benchmark.key, Submission.split,
               Submission.kind, Submission.failure_reason, Submission.finished_at,
               Submission.created_at)
        .outerjoin(Team, Submission.team_id == Team.id)
        .join(Benchmark, Submission.benchmark_id == Benchmark.id)
        .where(*failed).order_by(Submission.id.desc()).limit(limit)).all()
    return {"count": count, "days": days, "rows": [
        {"id": sid, "team": team or "—", "team_id": tid, "benchmark": key, "split": split,
         "kind": kind, "reason": (reason or "")[:160], "at": fin or created}
        for sid, team, tid, key, split, kind, reason, fin, created in rows]}


def in_flight(session: Session) -> dict[str, int]:
    """Submissions received, queued or scoring (an index range on the status)."""
    counts = dict(session.execute(select(Submission.status, func.count())
                                  .where(Submission.status.in_(IN_FLIGHT))
                                  .group_by(Submission.status)).all())
    return {s: counts.get(s, 0) for s in IN_FLIGHT}


def per_day(session: Session, *, days: int = DAYS, now: datetime | None = None) -> list[dict]:
    """Team submissions (baselines excluded) per UTC day over the last ``days`` days, oldest
    first, every day listed (0 included): ``[{"day", "total", "scored", "failed"}]``."""
    today = (now or utcnow()).date()
    first = today - timedelta(days=days - 1)
    since = datetime(first.year, first.month, first.day, tzinfo=(now or utcnow()).tzinfo)
    at = Submission.created_at
    if session.get_bind().dialect.name == "postgresql":
        at = func.timezone("UTC", at)  # the UTC day, whatever the server's TimeZone
    day = func.date(at)
    rows = session.execute(
        select(day, Submission.status, func.count())
        .where(Submission.created_at >= since, Submission.is_baseline.is_(False))
        .group_by(day, Submission.status)).all()
    table: dict[date, dict] = {first + timedelta(days=i): {"total": 0, "scored": 0, "failed": 0}
                               for i in range(days)}
    for d, status, n in rows:
        d = d if isinstance(d, date) else date.fromisoformat(str(d)[:10])  # SQLite: text
        if d in table:
            table[d]["total"] += n
            if status in ("scored", "failed"):
                table[d][status] += n
    return [{"day": d.isoformat(), **v} for d, v in sorted(table.items())]


def totals(session: Session) -> dict[str, int]:
    return {"users": session.scalar(select(func.count(User.id))) or 0,
            "teams": session.scalar(select(func.count(Team.id))) or 0,
            "submissions": session.scalar(select(func.count(Submission.id))) or 0}
