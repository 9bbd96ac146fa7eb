"""Login sessions kept on the server, so that logging out really ends them.

Flask-Login's own cookies carry whatever ``User.get_id()`` returns; here that is a random key
(``ls_`` + 43 url-safe characters) whose sha256 is a `LoginSession` row. Every request resolves
the key (`user_for_key`): an unknown, revoked or expired row, or a disabled user, is an
anonymous request, whatever cookie the browser still holds. So:

* logout (`end`) revokes the browser's row: the old session cookie and remember-me cookie both
  stop working, not 12 hours or 14 days later;
* a password change or an account disable (`revoke_all`) revokes every row of the user: every
  browser is signed out; the password change then starts a fresh row for the browser that made
  it;
* the account page lists the live rows (`active`) and revokes any one (`revoke`).

The remember-me cookie is the same key, so it is stored server-side, hashed, and revocable like
the session. ``last_seen_at`` is refreshed at most once a minute per session (one small UPDATE).
"""
from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from leaderboard.server.errors import NotFound
from leaderboard.server.models import User, utcnow
from leaderboard.server.models.sessions import LoginSession

KEY_PREFIX = "ls_"
TOUCH_EVERY = timedelta(minutes=1)


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def start(session: Session, user: User, *, remember: bool, lifetime_s: int, remember_s: int,
          ip: str = "", user_agent: str = "", now: datetime | None = None) -> str:
    """A new login session for ``user``; returns its key and sets ``user.login_key`` to it
    (what `flask_login.login_user` stores). The caller commits."""
    now = now or utcnow()
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = LoginSession(user_id=user.id, key_hash=_hash(key), remember=bool(remember),
                       created_at=now, last_seen_at=now,
                       expires_at=now + timedelta(seconds=remember_s if remember else lifetime_s),
                       ip=(ip or "")[:64], user_agent=(user_agent or "")[:300])
    session.add(row)
    session.flush()
    user.login_key, user.login_session_id = key, row.id
    return key


def user_for_key(session: Session, key: str, *, now: datetime | None = None) -> User | None:
    """The active user whose live session has this key, else None.

    Sets ``login_key`` and ``login_session_id`` on the user, and ``login_touched`` when this call
    refreshed ``last_seen_at`` (the caller commits that, e.g. right away in the user loader).
    """
    if not isinstance(key, str) or not key.startswith(KEY_PREFIX) or len(key) > 100:
        return None
    now = now or utcnow()
    row = session.scalar(select(LoginSession).where(LoginSession.key_hash == _hash(key)))
    if row is None or row.revoked_at is not None or row.expires_at <= now:
        return None
    user = session.get(User, row.user_id)
    if user is None or not user.is_active:
        return None
    touched = now - row.last_seen_at > TOUCH_EVERY
    if touched:
        row.last_seen_at = now
    user.login_key, user.login_session_id, user.login_touched = key, row.id, touched
    return user


def end(session: Session, key: str | None, *, reason: str = "logout") -> None:
    """Revoke the session with this key (logout). The caller commits."""
    if key:
        session.execute(update(LoginSession)
                        .where(LoginSession.key_hash == _hash(key),
                               LoginSession.revoked_at.is_(None))
                        .values(revoked_at=utcnow(), revoked_reason=reason))


def revoke_all(session: Session, user_id: int, *, reason: str,
               keep_id: int | None = None) -> int:
    """Revoke every live session of the user (but ``keep_id``); returns how many. The caller
    commits."""
    stmt = (update(LoginSession)
            .where(LoginSession.user_id == user_id, LoginSession.revoked_at.is_(None))
            .values(revoked_at=utcnow(), revoked_reason=reason))
    if keep_id is not None:
        stmt = stmt.where(LoginSession.id != keep_id)
    return session.execute(stmt).rowcount or 0


def revoke(session: Session, user: User, session_id: int) -> LoginSession:
    """Revoke one of ``user``'s sessions (404 for anyone else's). The caller commits."""
    row = session.get(LoginSession, session_id)
    if row is None or row.user_id != user.id:
        raise NotFound(f"no session {session_id} of yours")
    if row.revoked_at is None:
        row.revoked_at, row.revoked_reason = utcnow(), "revoked"
    return row


def active(session: Session, user: User, *, now: datetime | None = None) -> list[LoginSession]:
    """The user's live sessions, most recently used first."""
    now = now or utcnow()
    return list(session.scalars(
        select(LoginSession)
        .where(LoginSession.user_id == user.id, LoginSession.revoked_at.is_(None),
               LoginSession.expires_at > now)
        .order_by(LoginSession.last_seen_at.desc(), LoginSession.id.desc())))
