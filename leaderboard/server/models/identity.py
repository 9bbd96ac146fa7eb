"""Who is behind an account (issue 35): persons (accounts an administrator marked as one
person), the second factor (TOTP) and its recovery codes, and team invitations.

A `Person` groups accounts (``user_account.person_id``); quotas on held-out splits count the
submissions of all its accounts together (`leaderboard.server.services.quotas`). A `UserTotp`
row exists from enrolment's start; only ``enabled_at`` makes it required at login. Its secret
is Fernet ciphertext under ``LABEL_KEYS`` (`leaderboard.server.labels_crypto`); recovery codes
and invitation nonces are kept as sha256 hex only (both are high-entropy random strings).
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.server.models.base import Base, Team, User, utcnow

#: invitation states; only "open" (and unexpired) can be accepted or declined
INVITATION_STATES = ("open", "accepted", "declined", "revoked")


class Person(Base):
    """One human behind one or more accounts, as an administrator decided."""

    __tablename__ = "person"
    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: the administrator who first linked accounts (no FK: kept if that account goes)
    created_by: Mapped[int | None] = mapped_column(Integer)
    note: Mapped[str] = mapped_column(Text, default="")


class UserTotp(Base):
    """A user's TOTP second factor (RFC 6238, 30-second steps, 6 digits)."""

    __tablename__ = "user_totp"
    user_id: Mapped[int] = mapped_column(
        ForeignKey("user_account.id", ondelete="CASCADE"), primary_key=True,
        autoincrement=False)
    secret_enc: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: None while enrolment waits for its first code; set = required at every login
    enabled_at: Mapped[datetime | None]
    #: the last accepted time step: a code of this step or an earlier one is a replay
    last_step: Mapped[int] = mapped_column(BigInteger, default=0)

    user: Mapped[User] = relationship()


class RecoveryCode(Base):
    """One single-use recovery code (sha256 hex of the code; the code is shown once)."""

    __tablename__ = "recovery_code"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"),
                                         index=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    used_at: Mapped[datetime | None]


class TeamInvitation(Base):
    """An invitation to join a team: a signed link (its nonce's hash is kept) that works once,
    until ``expires_at``; with ``email`` it is addressed to that account alone."""

    __tablename__ = "team_invitation"
    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("team.id", ondelete="CASCADE"), index=True)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"))
    email: Mapped[str | None] = mapped_column(String(254))
    #: `address_key` of ``email``: the invitee's account is found by it
    email_key: Mapped[str | None] = mapped_column(String(254), index=True)
    nonce_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    status: Mapped[str] = mapped_column(String(16), default="open")
    decided_at: Mapped[datetime | None]
    decided_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"))

    team: Mapped[Team] = relationship()
    inviter: Mapped[User | None] = relationship(foreign_keys=[created_by])
