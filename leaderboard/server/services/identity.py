"""Who is behind an access request (issue 35): the identity panel an administrator reads
before deciding, and the accounts that look like the same person.

An account *looks like* another when one of these holds (each is a reason shown to the admin):
* **same normalised address**: equal ``user_account.email_key``
  (`leaderboard.server.address_keys.address_key`: Gmail's dots and ``+tags``, ...);
* **same submitted file**: a file with the same SHA-256 was submitted for one of this account's
  teams and for another team (as Codabench flags). Admin baselines are left out: every random
  baseline of one seed is the same file;
* **same network address**: an access request was signed, or a login session started, from an
  address this account also signed or logged in from. Addresses are what the app reads as the
  client's (``remote_addr``, behind ProxyFix with ``TRUSTED_PROXY_COUNT``): users behind one
  NAT or proxy share one, so this is a hint, never a verdict.

Accounts already marked as one person (`leaderboard.server.services.persons`) are listed
apart. Every query is bounded (``LIMIT``): the panel stays one page whatever the data.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from leaderboard.server.address_keys import domain_kind, split_address
from leaderboard.server.models import Submission, Team, User, utcnow
from leaderboard.server.models.access import AccessRequest
from leaderboard.server.models.sessions import LoginSession

#: most accounts listed as look-alikes, and most hashes / addresses compared
LIMIT = 50


@dataclass
class Lookalike:
    user: User
    reasons: list[str] = field(default_factory=list)


@dataclass
class IdentityPanel:
    user: User
    domain: str
    domain_kind: str  # "free" | "institutional"
    age_days: int
    teams: list[Team]
    linked: list[User]  # other accounts marked as the same person
    lookalikes: list[Lookalike]
    addresses: list[str]  # the account's own signing / login addresses compared


def _teams_of(session: Session, user: User) -> list[Team]:
    """The account's current team and every team it submitted for."""
    ids = set(session.scalars(select(Submission.team_id).where(
        Submission.user_id == user.id, Submission.team_id.is_not(None)).distinct()
        .limit(LIMIT)))
    if user.team_id is not None:
        ids.add(user.team_id)
    if not ids:
        return []
    return list(session.scalars(select(Team).where(Team.id.in_(ids)).order_by(Team.name)))


def _addresses(session: Session, user: User) -> list[str]:
    signed = session.scalars(select(AccessRequest.ip).where(
        AccessRequest.user_id == user.id, AccessRequest.ip != "")
        .order_by(AccessRequest.id.desc()).limit(LIMIT))
    logins = session.scalars(select(LoginSession.ip).where(
        LoginSession.user_id == user.id, LoginSession.ip != "")
        .order_by(LoginSession.id.desc()).limit(LIMIT))
    return sorted({*signed, *logins})


def lookalikes(session: Session, user: User, *, teams: list[Team] | None = None,
               addresses: list[str] | None = None) -> list[Lookalike]:
    """Other accounts that look like ``user`` (see the module docstring), with every reason,
    most reasons first (then by id); at most `LIMIT`."""
    teams = _teams_of(session, user) if teams is None else teams
    addresses = _addresses(session, user) if addresses is None else addresses
    reasons: dict[int, list[str]] = defaultdict(list)
    if user.email_key:
        for other in session.scalars(select(User.id).where(
                User.email_key == user.email_key, User.id != user.id).limit(LIMIT)):
            reasons[other].append(f"same normalised address ({user.email_key})")
    team_ids = [t.id for t in teams]
    mine = or_(Submission.user_id == user.id, Submission.team_id.in_(team_ids)) \
        if team_ids else Submission.user_id == user.id
    hashes = list(session.scalars(select(Submission.file_sha256).where(
        mine, Submission.file_sha256 != "", Submission.is_baseline.is_(False)).distinct()
        .limit(LIMIT)))
    if hashes:
        rows = session.execute(
            select(Submission.file_sha256, Submission.user_id, Team.name, Team.id)
            .join(Team, Team.id == Submission.team_id)
            .where(Submission.file_sha256.in_(hashes), Submission.is_baseline.is_(False),
                   Submission.team_id.not_in(team_ids or [-1]))
            .order_by(Submission.id).limit(LIMIT * 4)).all()
        # a submission whose submitter is gone points at its team's members instead
        members = defaultdict(list)
        if rows:
            for team_id, uid in session.execute(select(User.team_id, User.id).where(
                    User.team_id.in_({r[3] for r in rows}))):
                members[team_id].append(uid)
        for sha, uid, team_name, team_id in rows:
            why = f"same submitted file (sha256 {sha[:12]}…) in team {team_name}"
            for other in ([uid] if uid is not None else members[team_id]):
                if other != user.id and why not in reasons[other]:
                    reasons[other].append(why)
    if addresses:
        signed = session.execute(select(AccessRequest.user_id, AccessRequest.ip).where(
            AccessRequest.ip.in_(addresses), AccessRequest.user_id != user.id)
            .distinct().limit(LIMIT * 2)).all()
        logins = session.execute(select(LoginSession.user_id, LoginSession.ip).where(
            LoginSession.ip.in_(addresses), LoginSession.user_id != user.id)
            .distinct().limit(LIMIT * 2)).all()
        for uid, ip in [*signed, *logins]:
            why = f"same network address ({ip})"
            if why not in reasons[uid]:
                reasons[uid].append(why)
    if not reasons:
        return []
    users = {u.id: u for u in session.scalars(select(User).where(User.id.in_(reasons)))}
    found = [Lookalike(users[uid], why) for uid, why in reasons.items() if uid in users]
    found.sort(key=lambda x: (-len(x.reasons), x.user.id))
    return found[:LIMIT]


def linked_accounts(session: Session, user: User) -> list[User]:
    """The other accounts marked as the same person as ``user``."""
    if user.person_id is None:
        return []
    return list(session.scalars(select(User).where(User.person_id == user.person_id,
                                                   User.id != user.id).order_by(User.id)))


def panel(session: Session, req: AccessRequest, *, now: datetime | None = None) -> IdentityPanel:
    """What the review page shows about the account behind ``req``."""
    user = req.user
    teams = _teams_of(session, user)
    addresses = _addresses(session, user)
    linked = linked_accounts(session, user)
    linked_ids = {u.id for u in linked}
    found = [x for x in lookalikes(session, user, teams=teams, addresses=addresses)
             if x.user.id not in linked_ids]
    return IdentityPanel(user=user, domain=split_address(user.email)[1],
                         domain_kind=domain_kind(user.email),
                         age_days=max(((now or utcnow()) - user.created_at).days, 0),
                         teams=teams, linked=linked, lookalikes=found, addresses=addresses)
