"""Teams: create, join by invite code, leave. A user is in at most one team at a time."""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server import security
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import Team, User


def _already(user: User) -> ServiceError:
    return ServiceError(f"you are already in team {user.team.name!r}; leave it first",
                        status=409, code="conflict")


def create_team(session: Session, user: User, *, name: str) -> Team:
    """Create a team with ``user`` as its first member."""
    name = (name or "").strip()
    if user.team_id is not None:
        raise _already(user)
    if not 2 <= len(name) <= 80:
        problems = ProblemList()
        problems.add(f"must be 2 to 80 characters, got {len(name)}", field="name")
        raise ServiceError("invalid team name", problems)
    if session.scalar(select(Team.id).where(func.lower(Team.name) == name.lower())):
        raise ServiceError(f"the team name {name!r} is taken", status=409, code="conflict")
    team = Team(name=name, invite_code=security.new_invite_code())
    session.add(team)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise ServiceError(f"the team name {name!r} is taken", status=409,
                           code="conflict") from None
    user.team = team
    session.flush()
    return team


def join_team(session: Session, user: User, *, invite_code: str) -> Team:
    if user.team_id is not None:
        raise _already(user)
    code = (invite_code or "").strip()
    team = session.scalar(select(Team).where(Team.invite_code == code)) if code else None
    if team is None:
        raise NotFound("no team has this invite code; ask a member for the current one")
    user.team = team
    session.flush()
    return team


def leave_team(session: Session, user: User) -> None:
    """Leave the current team. The team's submissions stay with the team."""
    if user.team_id is None:
        raise ServiceError("you are not in a team")
    user.team = None
    session.flush()


def new_invite_code(session: Session, team: Team) -> str:
    """Replace the team's invite code (old links stop working)."""
    team.invite_code = security.new_invite_code()
    session.flush()
    return team.invite_code
