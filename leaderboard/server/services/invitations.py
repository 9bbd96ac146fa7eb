"""Team invitations (issue 35): a signed link that works once, until it expires, optionally
addressed to one e-mail address; accept or decline. Every change is audited.

The link carries ``{"i": invitation id, "n": nonce}`` signed with ``SECRET_KEY``
(`itsdangerous`, salt ``team-invite``); the row keeps the nonce's sha256, its expiry and its
state ("open", then "accepted", "declined" or "revoked"). A link is refused with a message
that says why: damaged or forged, expired (with the date), already accepted or declined,
withdrawn, or meant for another address. An invitation with an address is also shown to that
account on its team page (no link needed). Without an outbox the captain copies the link and
sends it; nothing here sends mail.
"""
from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server.access import audit
from leaderboard.server.address_keys import address_key
from leaderboard.server.models import Team, User, utcnow
from leaderboard.server.models.identity import TeamInvitation
from leaderboard.server.errors import Forbidden, NotFound, ServiceError

SALT = "team-invite"


def _serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt=SALT)


def _digest(nonce: str) -> str:
    return hashlib.sha256(nonce.encode("ascii")).hexdigest()


def require_captain(user: User) -> Team:
    """The captain's team; 403 for anyone else."""
    if user.team is None:
        raise ServiceError("you are not in a team")
    if not user.is_captain:
        raise Forbidden("only the team's captain can do this; ask "
                        f"{user.team.captain.display_name if user.team.captain else 'an admin'}")
    return user.team


def create(session: Session, captain: User, *, email: str | None, ttl_days: int,
           secret_key: str, ip: str = "", now: datetime | None = None
           ) -> tuple[TeamInvitation, str]:
    """A new invitation to the captain's team; returns it and its link token (shown to the
    captain once: only the nonce's hash is kept)."""
    team = require_captain(captain)
    email = (email or "").strip() or None
    if email is not None:
        local, _, domain = email.rpartition("@")
        if not local or "." not in domain or len(email) > 254 or " " in email:
            problems = ProblemList()
            problems.add(f"not an e-mail address: {email!r}", field="email")
            raise ServiceError("please correct the address", problems)
        key = address_key(email)
        if any(m.email_key == key for m in team.members):
            raise ServiceError(f"{email} is already in {team.name}", status=409,
                               code="conflict")
    now = now or utcnow()
    nonce = secrets.token_urlsafe(24)
    inv = TeamInvitation(team_id=team.id, created_by=captain.id, email=email,
                         email_key=address_key(email) if email else None,
                         nonce_hash=_digest(nonce), created_at=now,
                         expires_at=now + timedelta(days=ttl_days), status="open")
    session.add(inv)
    session.flush()
    audit.record(session, captain, "team.invite", f"team:{team.id}",
                 {"invitation": inv.id, "email": email,
                  "expires_at": inv.expires_at.isoformat()}, ip)
    return inv, _serializer(secret_key).dumps({"i": inv.id, "n": nonce})


def from_token(session: Session, token: str, *, secret_key: str) -> TeamInvitation:
    """The invitation a link names (any state); 400 for a damaged or forged link."""
    try:
        data = _serializer(secret_key).loads(token or "")
        inv_id, nonce = int(data["i"]), str(data["n"])
    except (BadSignature, KeyError, TypeError, ValueError):
        raise ServiceError("this invitation link is not valid: it is incomplete, damaged or "
                           "was not made by this site; ask the captain for a new one",
                           status=400, code="invalid_link") from None
    inv = session.get(TeamInvitation, inv_id)
    if inv is None or not secrets.compare_digest(inv.nonce_hash, _digest(nonce)):
        raise ServiceError("this invitation link is not valid any more; ask the captain for a "
                           "new one", status=400, code="invalid_link")
    return inv


def check_open(inv: TeamInvitation, user: User, *, now: datetime | None = None) -> None:
    """Refuse (410 / 403) an invitation that ``user`` cannot answer, saying why."""
    if inv.status == "accepted":
        raise ServiceError("this invitation was already used", status=410, code="used")
    if inv.status == "declined":
        raise ServiceError("this invitation was declined", status=410, code="used")
    if inv.status == "revoked":
        raise ServiceError("the captain withdrew this invitation", status=410, code="revoked")
    if inv.expires_at <= (now or utcnow()):
        raise ServiceError(f"this invitation expired on {inv.expires_at:%Y-%m-%d %H:%M} UTC; "
                           "ask the captain for a new one", status=410, code="expired")
    if inv.email_key and inv.email_key != user.email_key:
        raise Forbidden(f"this invitation is for {inv.email}; log in with that address")


def _close(session, inv, user, status, now) -> None:
    inv.status, inv.decided_at, inv.decided_by = status, now, user.id
    session.flush()


def accept(session: Session, user: User, inv: TeamInvitation, *, ip: str = "",
           now: datetime | None = None) -> Team:
    """Join the invitation's team (409 when ``user`` is in a team already)."""
    now = now or utcnow()
    check_open(inv, user, now=now)
    if user.team_id == inv.team_id:
        raise ServiceError(f"you are already in {inv.team.name}", status=409, code="conflict")
    if user.team_id is not None:
        raise ServiceError(f"you are in team {user.team.name!r}; leave it first, then follow "
                           "the link again", status=409, code="conflict")
    _close(session, inv, user, "accepted", now)
    user.is_captain = inv.team.captain is None  # a team its members all left gets one again
    user.team = inv.team
    session.flush()
    audit.record(session, user, "team.invite_accept", f"team:{inv.team_id}",
                 {"invitation": inv.id}, ip)
    return inv.team


def decline(session: Session, user: User, inv: TeamInvitation, *, ip: str = "",
            now: datetime | None = None) -> None:
    now = now or utcnow()
    check_open(inv, user, now=now)
    _close(session, inv, user, "declined", now)
    audit.record(session, user, "team.invite_decline", f"team:{inv.team_id}",
                 {"invitation": inv.id}, ip)


def revoke(session: Session, captain: User, invitation_id: int, *, ip: str = "",
           now: datetime | None = None) -> TeamInvitation:
    """Withdraw an open invitation of the captain's team."""
    team = require_captain(captain)
    inv = session.get(TeamInvitation, invitation_id)
    if inv is None or inv.team_id != team.id:
        raise NotFound(f"no invitation {invitation_id} of your team")
    if inv.status != "open":
        raise ServiceError(f"invitation {inv.id} is {inv.status} already", status=409,
                           code="conflict")
    _close(session, inv, captain, "revoked", now or utcnow())
    audit.record(session, captain, "team.invite_revoke", f"team:{team.id}",
                 {"invitation": inv.id}, ip)
    return inv


def addressed(session: Session, invitation_id: int, user: User) -> TeamInvitation:
    """An invitation addressed to ``user``'s address (answered from the team page)."""
    inv = session.get(TeamInvitation, invitation_id)
    if inv is None or not inv.email_key or inv.email_key != user.email_key:
        raise NotFound(f"no invitation {invitation_id} for you")
    return inv


def open_for_team(session: Session, team: Team, *, now: datetime | None = None
                  ) -> list[TeamInvitation]:
    return list(session.scalars(select(TeamInvitation).where(
        TeamInvitation.team_id == team.id, TeamInvitation.status == "open",
        TeamInvitation.expires_at > (now or utcnow())).order_by(TeamInvitation.id.desc())))


def open_for_user(session: Session, user: User, *, now: datetime | None = None
                  ) -> list[TeamInvitation]:
    """Open invitations addressed to ``user``'s (normalised) address."""
    if not user.email_key:
        return []
    return list(session.scalars(select(TeamInvitation).where(
        TeamInvitation.email_key == user.email_key, TeamInvitation.status == "open",
        TeamInvitation.expires_at > (now or utcnow())).order_by(TeamInvitation.id.desc())))
