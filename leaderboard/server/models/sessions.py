"""Server-side login sessions: what every session and remember-me cookie points at.

A login creates one `LoginSession` row holding the sha256 of a random key; the key (never the
user id) is what Flask-Login keeps in the session cookie and, with "remember me", in the
remember-me cookie. Every request looks the row up (`leaderboard.server.services.sessions`), so
revoking it ends both cookies at once: logout revokes the current row; a password change and an
account disable revoke every row of the user; the account page lists a user's rows and revokes
any of them.
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.server.models.base import Base, User, utcnow


class LoginSession(Base):
    __tablename__ = "login_session"
    __table_args__ = (Index("ix_login_session_user_revoked", "user_id", "revoked_at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 hex of the key
    remember: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: the session's absolute end: SESSION_LIFETIME_S, or REMEMBER_LIFETIME_S with "remember me"
    expires_at: Mapped[datetime]
    ip: Mapped[str] = mapped_column(String(64), default="")
    user_agent: Mapped[str] = mapped_column(String(300), default="")
    revoked_at: Mapped[datetime | None]
    #: logout, password_change, disabled, revoked (one session), others (all but this browser)
    revoked_reason: Mapped[str | None] = mapped_column(String(32))

    user: Mapped[User] = relationship()
