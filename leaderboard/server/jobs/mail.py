"""Sending the outbox (issue 35): one RQ job per message, over SMTP with the standard library.

Why ``smtplib`` and ``email.message`` rather than Flask-Mail: the job must commit a state change
*between* handing over the message and handing over its end (the final ``.`` of DATA), which
no extension exposes; ``smtplib``'s ``mail``/``rcpt``/``docmd``/``send``/``getreply`` do, with
no extra dependency. ``email.message.EmailMessage`` with the SMTP policy makes the bytes.

`send_message` (the job) for one outbox row:

1. claim the row (``pending`` -> ``sending``, one attempt counted), commit;
2. connect (STARTTLS, TLS or plain, then AUTH), MAIL FROM, RCPT TO, DATA, send the message
   without its end: until the end arrives an SMTP server discards the message if the
   connection drops (RFC 5321 4.1.1.4), so a crash up to here loses nothing and sends nothing;
3. mark the row ``committing`` and commit; if the row moved on meanwhile (the lease ran out and
   the reconciler recovered it), hang up without the end: the other attempt owns the message;
4. send the end, read the reply, mark ``sent`` (250), ``pending`` with a backoff (4xx, lost
   connection before the end) or ``failed`` (5xx, or out of attempts).

A job killed between 3 and 4 leaves ``committing``; the reconciler makes it ``unconfirmed``
after ``MAIL_LEASE_S``, shown on the admin Outbox page and not sent again by itself (the
message probably arrived: at most once there, at least once everywhere else).

Without ``SMTP_HOST`` (the embedded default) the job marks the row ``kept`` and prints it to
the console (``make run``'s terminal), and admins read it on the Outbox page.

`install` wires the session hooks: new notices become digest lines (`services.mail_prefs`) and,
after a commit, new outbox rows are handed to the job (inline without Redis). Anything missed
(Redis down, a crash after the commit) is found by the reconciler's `reconcile_mail` pass.
"""
from __future__ import annotations

import logging
import re
import smtplib
import ssl
import sys
from email import policy
from email.utils import parseaddr

import redis
from flask import current_app, has_app_context
from sqlalchemy import event
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.server.db import get_db
from leaderboard.server.jobs.queue import get_queue
from leaderboard.server.models import utcnow
from leaderboard.server.models.mail import Outbox
from leaderboard.server.services import mail_prefs, outbox

log = logging.getLogger(__name__)

MAIL_QUEUE = "mail"  # its own queue, taken by the scoring workers after scoring jobs
_NEW = "lb_mail_new"
_ITEMS = "lb_mail_items"


class Superseded(Exception):
    """The row left the state this attempt holds (recovered by the reconciler meanwhile)."""


def _connect(cfg) -> smtplib.SMTP:
    host, port, timeout = cfg["SMTP_HOST"], cfg["SMTP_PORT"], cfg["SMTP_TIMEOUT_S"]
    if cfg["SMTP_SECURITY"] == "tls":
        conn = smtplib.SMTP_SSL(host, port, timeout=timeout,
                                context=ssl.create_default_context())
    else:
        conn = smtplib.SMTP(host, port, timeout=timeout)
    try:
        if cfg["SMTP_SECURITY"] == "starttls":
            # refused (SMTPNotSupportedError) when the server offers none: never clear text
            conn.starttls(context=ssl.create_default_context())
        conn.ehlo_or_helo_if_needed()
        if cfg["SMTP_USERNAME"]:
            conn.login(cfg["SMTP_USERNAME"], cfg["SMTP_PASSWORD"] or "")
    except BaseException:
        conn.close()
        raise
    return conn


def _check(reply: tuple[int, bytes], ok: tuple[int, ...], what: str) -> None:
    code, text = reply
    if code not in ok:
        raise smtplib.SMTPResponseException(code, f"{what}: {text.decode('utf-8', 'replace')}"
                                            .encode())


def _body_bytes(row: Outbox, sender: str) -> bytes:
    data = outbox.as_email(row, sender=sender).as_bytes(policy=policy.SMTP)
    data = re.sub(rb"(?m)^\.", b"..", data)  # dot-stuffing (RFC 5321 4.5.2)
    return data if data.endswith(b"\r\n") else data + b"\r\n"


def _advance(outbox_id: int, attempt: int, frm: str, to: str, error: str = "") -> bool:
    with get_db().scope() as session:
        return outbox.advance(session, outbox_id, attempt=attempt, frm=frm, to=to, error=error)


def _retry(outbox_id: int, attempt: int, frm: str, error: str, *, permanent: bool) -> str:
    with get_db().scope() as session:
        state = outbox.retry_later(session, outbox_id, attempt=attempt, frm=frm, error=error,
                                   permanent=permanent,
                                   max_attempts=current_app.config["MAIL_MAX_ATTEMPTS"])
    log.warning("mail outbox=%s attempt=%s outcome=%s error=%s", outbox_id, attempt,
                state or "moved-on", error)
    return state


def _print_kept(row: Outbox) -> None:
    """The embedded default's "mail server": the console of ``make run``."""
    print(f"\n--- mail kept in the outbox (no SMTP_HOST; admins: /admin/outbox) ---\n"
          f"To: {row.to_addr}\nSubject: {row.subject}\n\n{row.body}\n--- end of mail ---\n",
          file=sys.stderr, flush=True)


def send_message(outbox_id: int) -> str:
    """Send one outbox row (the RQ job; inline without Redis); returns the row's new state, or
    "skipped" when it was not due or not pending. See the module docstring for each step."""
    cfg = current_app.config
    with get_db().scope() as session:
        row = outbox.claim(session, outbox_id, smtp=bool(cfg["SMTP_HOST"]))
        if row is None:
            return "skipped"
        if row.status == "kept":
            _print_kept(row)
            return "kept"
        attempt, to, data = row.attempts, row.to_addr, _body_bytes(row, cfg["MAIL_SENDER"])
    sender = parseaddr(cfg["MAIL_SENDER"])[1] or cfg["MAIL_SENDER"]
    state = "sending"
    conn = None
    try:
        conn = _connect(cfg)
        _check(conn.mail(sender), (250,), "MAIL FROM")
        _check(conn.rcpt(to), (250, 251), "RCPT TO")
        _check(conn.docmd("DATA"), (354,), "DATA")
        conn.send(data)
        if not _advance(outbox_id, attempt, "sending", "committing"):
            raise Superseded()
        state = "committing"
        conn.send(b".\r\n")
        _check(conn.getreply(), (250,), "end of DATA")
    except Superseded:
        log.warning("mail outbox=%s attempt=%s outcome=superseded", outbox_id, attempt)
        _hang_up(conn)
        return "superseded"
    except smtplib.SMTPResponseException as exc:
        _hang_up(conn)
        # 4xx: try later; 5xx to this message: refused for good (a bad address, a policy). A
        # refusal before the message (AUTH, HELO: our configuration) waits to be fixed instead
        return _retry(outbox_id, attempt, state, f"{exc.smtp_code} {exc.smtp_error!r}",
                      permanent=exc.smtp_code >= 500 and conn is not None)
    except (OSError, smtplib.SMTPException) as exc:
        _hang_up(conn)
        if state == "committing":
            # the end may have reached the server before the connection broke: do not guess
            _advance(outbox_id, attempt, "committing", "unconfirmed",
                     error=f"the connection broke while the server took the end of the "
                     f"message ({exc!r}): it may have arrived; not sent again by itself")
            return "unconfirmed"
        return _retry(outbox_id, attempt, state, f"SMTP unreachable or failed: {exc!r}",
                      permanent=False)
    _advance(outbox_id, attempt, "committing", "sent")
    _hang_up(conn, polite=True)
    log.info("mail outbox=%s attempt=%s outcome=sent", outbox_id, attempt)
    return "sent"


def _hang_up(conn: smtplib.SMTP | None, *, polite: bool = False) -> None:
    if conn is None:
        return
    try:
        if polite:
            conn.quit()
        else:
            conn.close()  # no QUIT: an unterminated DATA is discarded by the server
    except (OSError, smtplib.SMTPException):
        conn.close()


def enqueue(outbox_id: int) -> None:
    """Hand one row to the job: RQ with ``REDIS_URL``, else inline here. Never raises: a lost
    enqueue leaves a ``pending`` row, which the reconciler's `reconcile_mail` queues again."""
    queue = get_queue(MAIL_QUEUE)
    if queue is None:
        try:
            send_message(outbox_id)
        except Exception:  # noqa: BLE001 - the row keeps its state; the reconciler retries
            log.exception("inline mail job outbox=%s raised", outbox_id)
        return
    cfg = current_app.config
    try:
        queue.enqueue("leaderboard.server.jobs.mail.send_message", outbox_id,
                      job_id=f"mail-{outbox_id}-{utcnow().strftime('%Y%m%d%H%M%S%f')}",
                      job_timeout=cfg["SMTP_TIMEOUT_S"] * 6, result_ttl=cfg["JOB_RESULT_TTL_S"],
                      failure_ttl=cfg["JOB_FAILURE_TTL_S"], retry=None,
                      description=f"mail outbox={outbox_id}")
    except redis.exceptions.RedisError:
        log.warning("enqueue mail outbox=%s failed; the reconciler will retry", outbox_id,
                    exc_info=True)


def gather_due(*, force: bool = False) -> list[int]:
    """Digest messages for everyone whose oldest waiting line has waited the window (every
    waiting line with ``force``); returns the new outbox ids (not yet handed to the job)."""
    cfg = current_app.config
    db = get_db()
    with db.scope() as session:
        users = (mail_prefs.waiting_users(session, older_than=None) if force else
                 mail_prefs.due_users(session, window_s=cfg["MAIL_DIGEST_WINDOW_S"]))
    made = []
    for uid in users:
        try:
            with db.scope() as session:
                mid = mail_prefs.gather(session, uid, cfg)
        except RuntimeError:
            continue  # another pass took these lines first
        if mid is not None:
            made.append(mid)
    return made


def reconcile_mail() -> dict[str, int]:
    """The reconciler's mail pass: recover rows of dead jobs, gather due digests, and hand every
    due ``pending`` row to the job (messages that waited for SMTP to come back included)."""
    cfg = current_app.config
    with get_db().scope() as session:
        report = outbox.recover(session, lease_s=cfg["MAIL_LEASE_S"])
    try:
        with get_db().scope() as session:
            report["timed"] = mail_prefs.timed_lines(session)
    except IntegrityError:
        report["timed"] = 0  # another reconciler wrote the same lines first
    report["digests"] = len(gather_due())
    with get_db().scope() as session:
        ids = outbox.due(session)
    for oid in ids:
        enqueue(oid)
    report["queued"] = len(ids)
    return report


def _before_flush(session: Session, _ctx, _instances) -> None:
    if mail_prefs.collect(session):
        session.info[_ITEMS] = True


def _after_flush(session: Session, _ctx) -> None:
    # new rows, and rows an admin sent again (pending once more)
    new = [o.id for o in (*session.new, *session.dirty)
           if isinstance(o, Outbox) and o.status == "pending"]
    if new:
        session.info.setdefault(_NEW, []).extend(new)


def _after_commit(session: Session) -> None:
    new = session.info.pop(_NEW, [])
    items = session.info.pop(_ITEMS, False)
    if not has_app_context() or "lb_db" not in current_app.extensions:
        return  # no app to send with: the reconciler's pass will
    for oid in new:
        enqueue(oid)
    if items and get_queue(MAIL_QUEUE) is None:
        # no reconciler pass comes back later in the embedded default: gather at once (each
        # digest's own commit hands it to the job)
        gather_due(force=True)


def _after_rollback(session: Session) -> None:
    session.info.pop(_NEW, None)
    session.info.pop(_ITEMS, None)


def install(session_factory) -> None:
    """Listen on ``session_factory`` (every session of the app's `Database`)."""
    event.listen(session_factory, "before_flush", _before_flush)
    event.listen(session_factory, "after_flush", _after_flush)
    event.listen(session_factory, "after_commit", _after_commit)
    event.listen(session_factory, "after_soft_rollback",
                 lambda session, _tx: _after_rollback(session))
