"""What happens on a clock reaches people once (issue 35, item 4): a challenge phase that opens
or is about to close, a challenge's final results, an agreement about to expire; found by the
reconciler's mail pass, one line per person and event however many passes run, batched into
one message per person."""
from __future__ import annotations

import time
from datetime import timedelta

from sqlalchemy import select, update

from leaderboard.server.jobs import mail
from leaderboard.server.models import Benchmark, User, utcnow
from leaderboard.server.models.access import AccessRequest
from leaderboard.server.models.challenges import Challenge, ChallengePhase
from leaderboard.server.services import accounts, decisions
from tests.agreements import grant_all


def test_phase_results_and_expiry_are_mailed_once_per_person(app, app_config, imported, smtp,
                                                              session):
    app.config["MAIL_DIGEST_WINDOW_S"] = 1
    now = utcnow()
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        ada = accounts.register(s, email="ada@example.org", display_name="Ada",
                                password="correct horse battery")
        grant_all(s, ada)  # verified, with an approved agreement for syncred
        bench = s.scalar(select(Benchmark).where(Benchmark.key == imported))
        ch = Challenge(key="spring", benchmark_id=bench.id, title="Spring challenge")
        s.add(ch)
        s.flush()
        s.add(ChallengePhase(challenge_id=ch.id, position=1, name="Final", split="test",
                             part="all", opens_at=now - timedelta(hours=1),
                             closes_at=now + timedelta(hours=5)))
        done = Challenge(key="autumn", benchmark_id=bench.id, title="Autumn challenge",
                         finalized_at=now - timedelta(hours=2))
        s.add(done)
        s.execute(update(AccessRequest).values(expires_at=now + timedelta(days=3)))
        # someone who never asked for the data hears nothing
        accounts.mark_verified(accounts.register(s, email="bob@example.org",
                                                 display_name="Bob",
                                                 password="correct horse battery"))
    before = len(smtp.messages)
    with app.app_context():
        assert mail.reconcile_mail()["timed"] == 4
    time.sleep(1.1)
    with app.app_context():
        report = mail.reconcile_mail()
    assert report["timed"] == 0 and report["digests"] == 1
    new = smtp.messages[before:]
    assert [m["To"] for m in new] == ["ada@example.org"]
    body = new[0].get_content()
    for words in ("Phase Final of Spring challenge is open", "Phase Final of Spring challenge "
                  "closes at", "The results of Autumn challenge are final",
                  "Your access to syncred expires on"):
        assert words in body, body
    assert "/challenges/spring" in body and "/data/syncred" in body
    time.sleep(1.1)
    with app.app_context():
        mail.reconcile_mail()
    assert len(smtp.messages) == before + 1  # once per person and event
    session.expire_all()
    assert session.scalar(select(User.id).where(User.email == "bob@example.org"))


def test_admins_hear_of_requests_and_the_signer_of_the_decision(app, client, auth, imported,
                                                                smtp, session):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        accounts.create_admin(s, email="root@example.org", display_name="root",
                              password="correct horse battery")
    auth.register()
    verify = [m for m in smtp.messages if m["To"] == "ada@example.org"][-1]
    link = next(w for w in verify.get_content().split() if "/verify-email/" in w)
    client.get(link.removeprefix("http://lb.example.org"))
    resp = client.post("/data/syncred/sign", data={
        "full_name": "Ada Lovelace", "affiliation": "Example University", "role": "Researcher",
        "intended_use": "Evaluating our detector for a paper.", "accept": "1"})
    assert resp.status_code == 303
    to_admin = [m for m in smtp.messages if m["To"] == "root@example.org"]
    assert len(to_admin) == 1 and "Ada Lovelace (Example University) asks for access to " \
        "syncred" in to_admin[0].get_content()
    assert "http://lb.example.org/admin/requests" in to_admin[0].get_content()
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        req = s.scalar(select(AccessRequest))
        decisions.approve(s, s.scalar(select(User).where(User.email == "root@example.org")),
                          req)
    mine = [m for m in smtp.messages if m["To"] == "ada@example.org"]
    assert "approved" in mine[-1].get_content() and "/data/syncred" in mine[-1].get_content()
