"""The outbox against a real SMTP server (aiosmtpd on 127.0.0.1), on SQLite and PostgreSQL:
messages arrive with their headers and links; an SMTP server that is down makes them wait and
arrive once when it is back; a sender killed before the end of DATA is recovered and sends once;
one killed while the server takes the end is not sent again (the row says unconfirmed)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select, update

from leaderboard.server.jobs import mail
from leaderboard.server.models import utcnow
from leaderboard.server.models.mail import Outbox
from leaderboard.server.services import outbox

REPO = Path(__file__).resolve().parents[3]


def _rows(session):
    session.expire_all()
    return list(session.scalars(select(Outbox).order_by(Outbox.id)))


def _reconcile(app):
    with app.app_context():
        return mail.reconcile_mail()


def test_registration_mail_arrives_with_headers_and_a_working_link(app, client, auth,
                                                                   smtp, session):
    auth.register()
    assert len(smtp.messages) == 1
    msg = smtp.messages[0]
    assert msg["To"] == "ada@example.org" and msg["From"] == "Leaderboard <lb@example.org>"
    assert msg["Subject"] == "Confirm your address" and msg["Auto-Submitted"] == "auto-generated"
    row = _rows(session)[0]
    assert msg["Message-ID"] == row.message_id and row.status == "sent" and row.attempts == 1
    body = msg.get_content()
    link = next(w for w in body.split() if w.startswith("http://lb.example.org/verify-email/"))
    path = link.removeprefix("http://lb.example.org")
    resp = client.get(path)
    assert resp.status_code == 200 and "is verified" in resp.get_data(as_text=True)
    again = client.get(path)
    assert again.status_code == 400 and "already used" in again.get_data(as_text=True)


def test_smtp_down_messages_wait_then_arrive_once(app, client, auth, smtp, session):
    smtp.stop()
    auth.register()
    auth.logout()
    auth.register(email="bob@example.org", display_name="Bob")
    rows = _rows(session)
    assert [r.status for r in rows] == ["pending", "pending"]
    assert all("unreachable" in r.last_error and r.attempts == 1 for r in rows)
    assert rows[0].next_attempt_at > utcnow()  # backoff
    assert _reconcile(app)["queued"] == 0  # not due yet: nothing is tried
    smtp.start()
    session.execute(update(Outbox).values(next_attempt_at=utcnow() - timedelta(seconds=1)))
    session.commit()
    assert _reconcile(app)["queued"] == 2
    assert sorted(m["To"] for m in smtp.messages) == ["ada@example.org", "bob@example.org"]
    assert {r.status for r in _rows(session)} == {"sent"}
    _reconcile(app)
    assert len(smtp.messages) == 2  # no duplicate


def _pending(session) -> int:
    """A pending row written outside any app context (so no hook sends it at the commit)."""
    oid = outbox.add(session, kind="verify", to="ada@example.org", subject="Hello",
                     body="one message\n.\nwith a lone dot", sender="lb@example.org").id
    session.commit()
    return oid


def test_refused_for_good_fails_with_the_reason(app, smtp, session):
    oid = _pending(session)

    async def refuse(server, sess, envelope, address, options):
        return "550 no such user"
    smtp.handler.handle_RCPT = refuse
    with app.app_context():
        assert mail.send_message(oid) == "failed"
    row = _rows(session)[0]
    assert row.status == "failed" and "550" in row.last_error and not smtp.messages


def _sender(app, smtp, oid: int) -> subprocess.Popen:
    cfg = app.config
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LB_", "SMTP_"))}
    env.update({"DATABASE_URL": cfg["DATABASE_URL"], "SECRET_KEY": cfg["SECRET_KEY"],
                "LABEL_KEYS": cfg["LABEL_KEYS"][0], "DATA_DIR": cfg["DATA_DIR"],
                "PYTHONPATH": str(REPO), "COOKIE_SECURE": "0"},
               **{k: str(v) for k, v in smtp.config().items()})
    return subprocess.Popen([sys.executable, "-m", "leaderboard", "mail-send", "--id", str(oid)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _kill_at(app, smtp, oid: int, gate) -> None:
    gate.set()
    smtp.handler.release.clear()
    proc = _sender(app, smtp, oid)
    try:
        assert smtp.handler.reached.wait(60), proc.communicate(timeout=5)[0]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
        gate.clear()
        smtp.handler.release.set()


def _age_claims(session, app) -> None:
    session.execute(update(Outbox).values(
        claimed_at=utcnow() - timedelta(seconds=app.config["MAIL_LEASE_S"] + 1)))
    session.commit()


def test_sender_killed_before_the_end_of_data_is_recovered_and_sends_once(app, smtp, session):
    oid = _pending(session)
    _kill_at(app, smtp, oid, smtp.handler.hold_rcpt)
    assert _rows(session)[0].status == "sending" and not smtp.messages
    assert _reconcile(app)["requeued"] == 0  # the lease has not run out: the sender may live
    _age_claims(session, app)
    report = _reconcile(app)
    assert report["requeued"] == 1 and report["queued"] == 1
    assert len(smtp.messages) == 1 and _rows(session)[0].status == "sent"
    assert "with a lone dot" in smtp.messages[0].get_content()
    assert "." in smtp.messages[0].get_content().splitlines()  # dot-stuffing undone
    _reconcile(app)
    assert len(smtp.messages) == 1


def test_sender_killed_while_the_server_takes_the_end_is_not_sent_twice(app, smtp, session):
    oid = _pending(session)
    _kill_at(app, smtp, oid, smtp.handler.hold_data)
    assert len(smtp.messages) == 1  # the server has it; the sender died before marking it
    row = _rows(session)[0]
    assert row.status == "committing"
    _age_claims(session, app)
    assert _reconcile(app)["unconfirmed"] == 1
    row = _rows(session)[0]
    assert row.status == "unconfirmed" and "may have arrived" in row.last_error
    _reconcile(app)
    assert len(smtp.messages) == 1  # arrived once: not sent again by itself


def test_without_smtp_messages_are_kept_and_shown_to_admins(app, client, auth, session,
                                                           capfd):
    app.config["SMTP_HOST"] = None
    auth.register()
    err = capfd.readouterr().err
    assert "mail kept in the outbox" in err and "/verify-email/" in err
    row = _rows(session)[0]
    assert row.status == "kept"
    auth.logout()
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        from leaderboard.server.services import accounts
        accounts.create_admin(s, email="root@example.org", display_name="root",
                              password="correct horse battery")
    auth.login("root@example.org")
    page = client.get("/admin/outbox").get_data(as_text=True)
    assert "Confirm your address" in page and "No SMTP server is configured" in page
    one = client.get(f"/admin/outbox/{row.id}").get_data(as_text=True)
    assert "http://lb.example.org/verify-email/" in one
    assert client.post(f"/admin/outbox/{row.id}/resend").status_code == 303
    assert _rows(session)[0].status == "kept"  # still no SMTP: kept again
    assert client.get("/admin/outbox/999999").status_code == 404


def test_starttls_is_required_when_configured(app, smtp, session):
    """A server that offers no STARTTLS never gets the message in clear text: it waits."""
    app.config["SMTP_SECURITY"] = "starttls"
    oid = _pending(session)
    with app.app_context():
        assert mail.send_message(oid) == "pending"
    row = _rows(session)[0]
    assert "STARTTLS" in row.last_error and not smtp.messages


def test_outbox_page_ignores_bad_filters(app, client, auth, smtp):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        from leaderboard.server.services import accounts
        accounts.create_admin(s, email="root@example.org", display_name="root",
                              password="correct horse battery")
    auth.login("root@example.org")
    for query in ("?status=bogus", "?status=%ff"):  # an unknown state: no filter
        assert client.get("/admin/outbox" + query).status_code == 200, query
    for query in ("?before=x", "?before=-1&status=sent", "?before=%C2%B2"):  # 400 naming it
        resp = client.get("/admin/outbox" + query)
        body = resp.get_data(as_text=True)
        assert resp.status_code == 400 and "Before must be a whole number" in body, query
    assert client.post("/admin/outbox/1/resend").status_code in (303, 404)
    auth.logout()
    auth.register()
    assert client.get("/admin/outbox").status_code == 403

