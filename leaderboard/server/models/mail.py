"""Mail (issue 35): the outbox, the lines waiting for a digest, and who asked for no mail.

``outbox``: one row per message, written in the same transaction as the event that causes it
(`leaderboard.server.services.outbox.add`). ``message_id`` (the RFC 5322 Message-ID) is the
message's key: the row is the message, and the sending job moves it through the states in
`OUTBOX_STATES` so that a message is never lost and never sent twice on purpose
(`leaderboard.server.jobs.mail`, docs/server.md "Mail").

``mail_item``: a line for one person's next digest (a submission scored, an agreement decided):
bursts are gathered into one message per person per window (``outbox_id`` is the digest that
carried it; None = waiting). ``mail_optout``: the kinds of mail a person turned off (the
default is on), from the account page or a one-click unsubscribe link.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.server.models.base import Base, utcnow

#: pending: waiting for its (next) attempt; sending: claimed by a job, the SMTP server has not
#: been handed the end of the message; committing: the end of the message is being handed over
#: (the one window where a crash leaves it unknown whether it arrived); sent; failed: refused
#: for good or out of attempts; unconfirmed: a job died while committing (not re-sent by itself:
#: an admin may send it again); kept: no SMTP server is configured (the embedded default), shown
#: on the admin Outbox page instead
OUTBOX_STATES = ("pending", "sending", "committing", "sent", "failed", "unconfirmed", "kept")


class Outbox(Base):
    __tablename__ = "outbox"
    __table_args__ = (Index("ix_outbox_status_next", "status", "next_attempt_at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    message_id: Mapped[str] = mapped_column(String(255), unique=True)
    #: verify, reset, email_changed, digest
    kind: Mapped[str] = mapped_column(String(40))
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), index=True)
    to_addr: Mapped[str] = mapped_column(String(254))
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    #: extra headers (List-Unsubscribe, List-Unsubscribe-Post), name -> value
    headers: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    claimed_at: Mapped[datetime | None]
    sent_at: Mapped[datetime | None]
    last_error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class MailItem(Base):
    __tablename__ = "mail_item"
    __table_args__ = (Index("ix_mail_item_waiting", "outbox_id", "user_id"),
                      UniqueConstraint("user_id", "key"))
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    #: a preference kind (`leaderboard.server.services.mail_prefs.KINDS`)
    kind: Mapped[str] = mapped_column(String(40))
    text: Mapped[str] = mapped_column(Text)
    #: the page it is about, a path under PUBLIC_URL ("" = none)
    link: Mapped[str] = mapped_column(String(300), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    outbox_id: Mapped[int | None] = mapped_column(ForeignKey("outbox.id", ondelete="SET NULL"))
    #: what a line from a timed event is about ("phase-open:3"): one line per person and event,
    #: however many reconciler passes see it; None for lines from notices
    key: Mapped[str | None] = mapped_column(String(120))


class MailOptOut(Base):
    __tablename__ = "mail_optout"
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"),
                                         primary_key=True)
    kind: Mapped[str] = mapped_column(String(40), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
