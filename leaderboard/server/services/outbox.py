"""The outbox (issue 35): every message is a row written in the same transaction as the event
that causes it, then sent by a job (`leaderboard.server.jobs.mail`); the row, not a queue or a
process, is the truth about a message.

The states (`leaderboard.server.models.mail.OUTBOX_STATES`) and who moves a row between them:

``pending`` --claim--> ``sending`` --before the end of DATA--> ``committing`` --250--> ``sent``

* `claim` takes a due ``pending`` row (one guarded UPDATE: two jobs never both take it) and
  counts the attempt; with no SMTP server configured it marks the row ``kept`` instead.
* `advance` moves a row on only from the state and attempt the caller holds, so a job that
  lost its claim (its lease ran out and the row was recovered) can never overwrite the row.
* `retry_later` puts a refused or unreachable attempt back to ``pending`` with a backoff
  (`backoff_s`), or ``failed`` once `MAIL_MAX_ATTEMPTS` are spent or the server refused for good.
* `recover` (the reconciler) handles rows whose job died: ``sending`` past the lease goes back
  to ``pending`` (the SMTP server never received the end of the message, so it discarded it:
  re-sending cannot make a duplicate); ``committing`` past the lease becomes ``unconfirmed``
  (the end was being handed over: the message may have arrived; it is not re-sent by itself).

So a message is delivered at least once except in the ``committing`` window (one SMTP round
trip), where it is delivered at most once; docs/server.md says this to admins.
"""
from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import formataddr, format_datetime, parseaddr

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from leaderboard.server.models import utcnow
from leaderboard.server.models.mail import Outbox
from leaderboard.server.errors import NotFound, ServiceError

#: the first retry waits this long, doubling per attempt up to `MAX_BACKOFF_S`
FIRST_BACKOFF_S = 30
MAX_BACKOFF_S = 3600
_HEADER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,60}$")


def new_message_id(sender: str) -> str:
    """A fresh RFC 5322 Message-ID on the sender's domain (the row's key)."""
    domain = parseaddr(sender)[1].rpartition("@")[2] or "localhost"
    return f"<{secrets.token_hex(16)}@{domain}>"


def add(session: Session, *, kind: str, to: str, subject: str, body: str, sender: str,
        user_id: int | None = None, headers: dict[str, str] | None = None) -> Outbox:
    """Write one message to the outbox in the caller's transaction; sent after the commit (the
    caller, or the session hook in `leaderboard.server.jobs.mail`, hands it to the job)."""
    for name, value in (headers or {}).items():
        if not _HEADER_NAME.match(name) or "\n" in value or "\r" in value:
            raise ValueError(f"bad mail header {name!r}")
    subject = " ".join((subject or "").split())[:200]
    row = Outbox(message_id=new_message_id(sender), kind=kind, user_id=user_id, to_addr=to,
                 subject=subject, body=body, headers=dict(headers or {}), status="pending",
                 next_attempt_at=utcnow())
    session.add(row)
    session.flush()
    return row


def as_email(row: Outbox, *, sender: str) -> EmailMessage:
    """The message a row stands for: the same bytes on every attempt, its Message-ID included."""
    msg = EmailMessage()
    name, addr = parseaddr(sender)
    msg["From"] = formataddr((name, addr)) if addr else sender
    msg["To"] = row.to_addr
    msg["Subject"] = row.subject
    msg["Date"] = format_datetime(row.created_at)
    msg["Message-ID"] = row.message_id
    msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies
    for key, value in (row.headers or {}).items():
        msg[key] = value
    msg.set_content(row.body)
    return msg


def backoff_s(attempts: int) -> int:
    """Seconds before attempt ``attempts + 1``: 30, 60, 120, ... capped at an hour."""
    return min(FIRST_BACKOFF_S * 2 ** max(attempts - 1, 0), MAX_BACKOFF_S)


def _locked(session: Session, outbox_id: int) -> Outbox | None:
    q = select(Outbox).where(Outbox.id == outbox_id)
    if session.get_bind().dialect.name == "postgresql":
        q = q.with_for_update()
    return session.scalar(q)


def claim(session: Session, outbox_id: int, *, smtp: bool,
          now: datetime | None = None) -> Outbox | None:
    """Take a due ``pending`` row for one attempt (``sending``, attempts + 1), or mark it
    ``kept`` when ``smtp`` is False; None when the row is not there, not pending or not due
    (another job has it, or it was sent). The caller commits before talking to SMTP."""
    now = now or utcnow()
    row = _locked(session, outbox_id)
    if row is None or row.status != "pending" or row.next_attempt_at > now:
        return None
    if not smtp:
        row.status = "kept"
        return row
    row.status, row.attempts, row.claimed_at = "sending", row.attempts + 1, now
    return row


def advance(session: Session, outbox_id: int, *, attempt: int, frm: str, to: str,
            error: str = "", now: datetime | None = None) -> bool:
    """Move the row from ``frm`` to ``to`` if it is still in ``frm`` at ``attempt``; returns
    whether it was (False: the lease ran out and the row was recovered meanwhile)."""
    now = now or utcnow()
    values: dict = {"status": to}
    if to == "sent":
        values["sent_at"] = now
    if error:
        values["last_error"] = error[:2000]
    result = session.execute(update(Outbox).where(Outbox.id == outbox_id, Outbox.status == frm,
                                                  Outbox.attempts == attempt).values(**values))
    return bool(result.rowcount)


def retry_later(session: Session, outbox_id: int, *, attempt: int, frm: str, error: str,
                permanent: bool, max_attempts: int, now: datetime | None = None) -> str:
    """After a failed attempt: ``pending`` again after a backoff, or ``failed`` when the server
    refused for good or the attempts are spent. Returns the new state ("" if the row moved on)."""
    now = now or utcnow()
    state = "failed" if permanent or attempt >= max_attempts else "pending"
    values = {"status": state, "last_error": error[:2000],
              "next_attempt_at": now + timedelta(seconds=backoff_s(attempt))}
    result = session.execute(update(Outbox).where(Outbox.id == outbox_id, Outbox.status == frm,
                                                  Outbox.attempts == attempt).values(**values))
    return state if result.rowcount else ""


def recover(session: Session, *, lease_s: int, now: datetime | None = None) -> dict[str, int]:
    """Rows whose job went silent for ``lease_s``: ``sending`` -> ``pending`` (due now),
    ``committing`` -> ``unconfirmed``. Returns how many of each."""
    now = now or utcnow()
    stale = now - timedelta(seconds=lease_s)
    back = session.execute(update(Outbox).where(Outbox.status == "sending",
                                                Outbox.claimed_at < stale)
                           .values(status="pending", next_attempt_at=now,
                                   last_error="the sending job stopped before the end of the "
                                   "message; sent again")).rowcount or 0
    unknown = session.execute(update(Outbox).where(Outbox.status == "committing",
                                                   Outbox.claimed_at < stale)
                              .values(status="unconfirmed",
                                      last_error="the sending job stopped while the server "
                                      "took the end of the message: it may have arrived; not "
                                      "sent again by itself")).rowcount or 0
    return {"requeued": back, "unconfirmed": unknown}


def due(session: Session, *, now: datetime | None = None, limit: int = 500) -> list[int]:
    """Ids of ``pending`` rows whose next attempt is due, oldest first."""
    now = now or utcnow()
    return list(session.scalars(select(Outbox.id).where(Outbox.status == "pending",
                                                         Outbox.next_attempt_at <= now)
                                .order_by(Outbox.id).limit(limit)))


#: what an admin may send again, and why each needs a person's decision
RESENDABLE = ("kept", "unconfirmed", "failed")


def resend(session: Session, outbox_id: int, *, now: datetime | None = None) -> Outbox:
    """An admin's "send again" for a kept, unconfirmed or failed message: ``pending`` with its
    attempts reset and the same Message-ID (a client that already has it may fold the two)."""
    row = session.get(Outbox, outbox_id)
    if row is None:
        raise NotFound(f"no message {outbox_id} in the outbox")
    if row.status not in RESENDABLE:
        raise ServiceError(f"message {outbox_id} is {row.status}; only "
                           f"{', '.join(RESENDABLE)} messages can be sent again", status=409,
                           code="conflict")
    row.status, row.attempts, row.next_attempt_at = "pending", 0, now or utcnow()
    row.last_error = ""
    return row


def listing(session: Session, *, status: str | None = None, limit: int = 100,
            before: int | None = None) -> list[Outbox]:
    """The newest messages (optionally of one state, older than id ``before``)."""
    q = select(Outbox).order_by(Outbox.id.desc()).limit(limit)
    if status:
        q = q.where(Outbox.status == status)
    if before:
        q = q.where(Outbox.id < before)
    return list(session.scalars(q))


def counts(session: Session) -> dict[str, int]:
    """Messages per state."""
    return dict(session.execute(select(Outbox.status, func.count()).group_by(Outbox.status))
                .all())
