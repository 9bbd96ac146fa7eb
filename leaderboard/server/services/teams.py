"""Teams: create, join by invite code, leave, hand the captain's role on. A user is in at most
one team at a time. The creator is the team's captain (``user_account.is_captain``); the captain
invites (`leaderboard.server.services.invitations`) and may leave only after handing the role
to another member, or as the last member. Every change is audited (issue 35)."""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server import security
from leaderboard.server.access import audit
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import Team, User


def _already(user: User) -> ServiceError:
    return ServiceError(f"you are already in team {user.team.name!r}; leave it first",
                        status=409, code="conflict")


def create_team(session: Session, user: User, *, name: str, ip: str = "") -> Team:
    """Create a team with ``user`` as its first member and captain."""
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
    user.team, user.is_captain = team, True
    session.flush()
    audit.record(session, user, "team.create", f"team:{team.id}", {"name": team.name}, ip)
    return team


def join_team(session: Session, user: User, *, invite_code: str, ip: str = "") -> Team:
    if user.team_id is not None:
        raise _already(user)
    code = (invite_code or "").strip()
    team = session.scalar(select(Team).where(Team.invite_code == code)) if code else None
    if team is None:
        raise NotFound("no team has this invite code; ask a member for the current one")
    user.is_captain = team.captain is None  # a team its members all left gets one again
    user.team = team
    session.flush()
    audit.record(session, user, "team.join", f"team:{team.id}", {"by": "invite_code"}, ip)
    return team


def leave_team(session: Session, user: User, *, ip: str = "") -> None:
    """Leave the current team. The team's submissions stay with the team. A captain with
    teammates hands the role on first (409 says so)."""
    team = user.team
    if team is None:
        raise ServiceError("you are not in a team")
    others = [m for m in team.members if m.id != user.id]
    if user.is_captain and others:
        raise ServiceError("you are the team's captain: hand the role to another member "
                           "before leaving", status=409, code="conflict")
    user.team, user.is_captain = None, False
    session.flush()
    audit.record(session, user, "team.leave", f"team:{team.id}", {}, ip)


def hand_over(session: Session, captain: User, member_id: int, *, ip: str = "") -> User:
    """Make member ``member_id`` the captain; only the captain may."""
    team = captain.team
    if team is None or not captain.is_captain:
        raise ServiceError("only the team's captain can hand the role on", status=403,
                           code="forbidden")
    member = next((m for m in team.members if m.id == member_id), None)
    if member is None or member.id == captain.id:
        raise NotFound(f"no other member {member_id} in {team.name}")
    captain.is_captain, member.is_captain = False, True
    session.flush()
    audit.record(session, captain, "team.captain", f"team:{team.id}",
                 {"from": captain.id, "to": member.id}, ip)
    return member


def new_invite_code(session: Session, team: Team) -> str:
    """Replace the team's invite code (old links stop working)."""
    team.invite_code = security.new_invite_code()
    session.flush()
    return team.invite_code
