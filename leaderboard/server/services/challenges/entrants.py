"""Who is in a challenge (issue 33): a team enters it, and only its entrants submit to it.

Entering is a team's choice, made by any member (the challenge page's button, ``POST
/api/v1/challenges/<key>/enter``, ``leaderboard submit --challenge``), idempotent and audited; a
challenge that has ended takes no new entrants. Entering changes nothing else: the team's other
submissions on the benchmark keep going to the standing boards under the benchmark's own rules.
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.server.access import audit
from leaderboard.server.errors import Forbidden, ServiceError
from leaderboard.server.models import User, utcnow
from leaderboard.server.models.challenges import Challenge, ChallengeEntrant
from leaderboard.server.services.challenges.timeline import window


def page_path(ch: Challenge) -> str:
    """The challenge's page, where a team enters it."""
    return f"/challenges/{ch.key}"


def is_entrant(session: Session, ch: Challenge, team_id: int | None) -> bool:
    if team_id is None:
        return False
    return session.scalar(select(ChallengeEntrant.id).where(
        ChallengeEntrant.challenge_id == ch.id, ChallengeEntrant.team_id == team_id)) is not None


def entrant_count(session: Session, ch: Challenge) -> int:
    return session.scalar(select(func.count(ChallengeEntrant.id)).where(
        ChallengeEntrant.challenge_id == ch.id)) or 0


def entered_ids(session: Session, team_id: int | None) -> set[int]:
    """The ids of the challenges ``team_id`` has entered."""
    if team_id is None:
        return set()
    return set(session.scalars(select(ChallengeEntrant.challenge_id).where(
        ChallengeEntrant.team_id == team_id)))


def enter(session: Session, user: User, ch: Challenge, *, ip: str = "",
          now: datetime | None = None) -> bool:
    """Enter ``user``'s team in ``ch``; True when it was entered now, False when it already was.
    Forbidden without a team; ServiceError (409) once the challenge has ended."""
    now = now or utcnow()
    if user.team_id is None:
        raise Forbidden("join or create a team before entering a challenge: a challenge ranks "
                        "teams")
    if is_entrant(session, ch, user.team_id):
        return False
    if ch.finalized_at is not None or not ch.phases or now >= window(ch)[1]:
        raise ServiceError(f"challenge {ch.title!r} has ended; it takes no new entrants",
                           status=409, code="conflict")
    try:
        with session.begin_nested():  # two members pressing the button at once: one row
            session.add(ChallengeEntrant(challenge_id=ch.id, team_id=user.team_id,
                                         entered_by=user.id, entered_at=now))
    except IntegrityError:
        return False
    audit.record(session, user, "challenge.enter", f"challenge:{ch.key}",
                 {"team": user.team_id, "benchmark": ch.benchmark.key}, ip)
    return True
