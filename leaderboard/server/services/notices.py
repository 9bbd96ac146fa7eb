"""Notices: what happened to a team's work or a user's data access, shown on the team's pages
and in the API until dismissed (issue 21, item 8; the model in
`leaderboard.server.models.notices`).

`post` is called by the service functions that make the change (agreement decisions, scoring,
failures, an admin hiding or disqualifying a submission), in the caller's transaction, so a
notice exists exactly when its change was committed. Who sees a notice: the user it names, and
every member of the team it names (`leaderboard.server.access.visibility.notice_visible`);
anyone who sees it may dismiss it (a team notice dismissed by one member is gone for all).
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from leaderboard.server.access.visibility import notice_visible
from leaderboard.server.errors import NotFound
from leaderboard.server.models import Submission, User, utcnow
from leaderboard.server.models.notices import NOTICE_KINDS, Notice

#: at most this many notices are listed (newest first); older ones stay until dismissed
LIST_LIMIT = 50
#: longest message kept (a failure reason may be long; the submission page has all of it)
MAX_MESSAGE = 500


def post(session: Session, kind: str, message: str, *, user_id: int | None = None,
         team_id: int | None = None, subject: str = "") -> Notice | None:
    """Add a notice for ``user_id`` and/or ``team_id``; None (nothing added) when it has no
    reader (a baseline's submission, a team-less upload). The caller commits."""
    if kind not in NOTICE_KINDS:
        raise ValueError(f"kind must be one of {NOTICE_KINDS}, got {kind!r}")
    if user_id is None and team_id is None:
        return None
    text = " ".join((message or "").split())
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE - 1] + "…"
    notice = Notice(kind=kind, message=text, user_id=user_id, team_id=team_id,
                    subject=subject[:120])
    session.add(notice)
    return notice


def for_submission(session: Session, sub: Submission, kind: str, message: str) -> None:
    """A notice to the submission's team (else its uploader); none for baselines."""
    if sub.is_baseline:
        return
    post(session, kind, message, team_id=sub.team_id,
         user_id=None if sub.team_id is not None else sub.user_id,
         subject=f"submission:{sub.id}")


def _mine(user: User):
    mine = [Notice.user_id == user.id]
    if user.team_id is not None:
        mine.append(Notice.team_id == user.team_id)
    return or_(*mine)


def active(session: Session, user: User, *, limit: int = LIST_LIMIT) -> list[Notice]:
    """The user's undismissed notices (personal and team), newest first."""
    return list(session.scalars(select(Notice).where(_mine(user), Notice.dismissed_at.is_(None))
                                .order_by(Notice.id.desc()).limit(limit)))


def dismiss(session: Session, user: User, notice_id: int, *,
            now: datetime | None = None) -> Notice:
    """Dismiss one notice; NotFound for a notice the user may not see (so ids reveal nothing).
    Dismissing twice is not an error."""
    notice = session.get(Notice, notice_id)
    if notice is None or not notice_visible(user, notice):
        raise NotFound(f"no notice {notice_id}")
    if notice.dismissed_at is None:
        notice.dismissed_at = now or utcnow()
    return notice


def dismiss_all(session: Session, user: User, *, now: datetime | None = None) -> int:
    """Dismiss every notice the user sees; returns how many."""
    result = session.execute(update(Notice).where(_mine(user), Notice.dismissed_at.is_(None))
                             .values(dismissed_at=now or utcnow()))
    return result.rowcount or 0


def as_dict(n: Notice) -> dict:
    return {"id": n.id, "kind": n.kind, "message": n.message, "subject": n.subject,
            "for": "team" if n.team_id is not None else "you",
            "created_at": n.created_at.isoformat()}
