"""Issue 35, a known identity behind every agreement: normalised addresses, the identity panel's
look-alikes (same normalised address, same submitted file in two teams, same network address),
accounts marked as one person (audited) and quotas counted across them; the request form's role
and the benchmark's own fields. PostgreSQL and SQLite (``db_url``)."""
from __future__ import annotations

import io

import pytest
from sqlalchemy import select

from leaderboard.server.access import agreements
from leaderboard.server.address_keys import address_key, domain_kind
from leaderboard.server.models import Benchmark, User
from leaderboard.server.models.access import AccessRequest, AuditEvent
from leaderboard.server.services import accounts, identity

INTENDED = "Evaluating our synthetic-image detector for a paper."
PASSWORD = "correct horse battery"


@pytest.mark.parametrize("email, key", [
    ("A.Da+news@GoogleMail.com", "ada@gmail.com"),
    ("a.d.a@gmail.com", "ada@gmail.com"),
    ("ada+x@outlook.com", "ada@outlook.com"),
    ("a.da+x@uni.example.edu", "a.da+x@uni.example.edu"),  # other domains keep their spelling
])
def test_address_key(email, key):
    assert address_key(email) == key


def test_domain_kind_reads_the_shipped_list():
    assert domain_kind("x@gmail.com") == "free"
    assert domain_kind("x@mail.yahoo.co.uk") == "free"  # a subdomain of a listed one
    assert domain_kind("x@cs.ox.ac.uk") == "institutional"


def _upload(client, token, data: bytes, split="test", challenge=""):
    return client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                       data={"benchmark": "syncred", "split": split, "method_name": "m",
                             "challenge": challenge, "file": (io.BytesIO(data), "p.jsonl")},
                       content_type="multipart/form-data")


def _user(session, email):
    return session.scalar(select(User).where(User.email == email))


def test_lookalikes_and_review_page(app, client, auth, imported, baseline_files, session):
    """Three accounts look like Ada, each for its own reason; the review page shows them and
    marking one as the same person is audited."""
    data = baseline_files["test"].read_bytes()

    def at(address):  # each account signs up and logs in from its own address
        client.environ_base["REMOTE_ADDR"] = address

    at("203.0.113.9")
    ada = auth.member(email="ada@gmail.com", team="Ada Labs")
    assert _upload(client, ada, data).status_code == 202
    auth.logout()
    at("198.51.100.1")
    auth.member(email="a.d.a+two@googlemail.com", team="Dots")   # same normalised address
    auth.logout()
    at("198.51.100.2")
    twin = auth.member(email="bob@example.org", team="Twin Labs")  # same file, other team
    assert _upload(client, twin, data).status_code == 202
    auth.logout()
    at("203.0.113.9")
    auth.register(email="cy@example.net", display_name="Cy")      # same network address
    auth.logout()
    at("198.51.100.4")
    auth.register(email="dee@example.com", display_name="Dee")     # nothing in common
    auth.logout()
    ada_user = _user(session, "ada@gmail.com")
    req = session.scalar(select(AccessRequest).where(AccessRequest.user_id == ada_user.id))
    cy = _user(session, "cy@example.net")
    agreements.sign(session, cy, session.scalar(select(Benchmark)), full_name="Cy",
                    affiliation="Elsewhere", role="Student", intended_use=INTENDED,
                    accepted=True, ip="198.51.100.77")
    session.commit()

    found = {x.user.email: x.reasons for x in identity.lookalikes(session, req.user)}
    assert any("same normalised address" in r for r in found["a.d.a+two@googlemail.com"])
    assert any("same submitted file" in r and "Twin Labs" in r
               for r in found["bob@example.org"])
    assert any("same network address (203.0.113.9)" in r for r in found["cy@example.net"])
    assert "dee@example.com" not in found

    accounts.register(session, email="root@example.org", display_name="root",
                      password=PASSWORD, is_admin=True)
    session.commit()
    auth.login("root@example.org")
    page = client.get(f"/admin/requests/{req.id}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "free-mail domain" in html and "Ada Labs" in html and "Researcher" in html
    # the address's state, as the mail branch records it (issue 35 item 5: "whether verified")
    verified = session.get(type(req.user), req.user_id).email_verified_at
    assert 'id="identity-verified"' in html
    assert ("verified on" in html) if verified else ("not verified" in html)
    # (the flashes of the registrations above name every address; the panel must not)
    assert "dee@example.com" not in html[html.index('id="identity-panel"'):]
    assert 'id="lookalike-' in html and "same submitted file" in html
    twin_id = _user(session, "bob@example.org").id
    resp = client.post("/admin/persons/link", data={
        "users": [str(req.user_id), str(twin_id)], "note": "same lab, two teams",
        "next": f"/admin/requests/{req.id}"})
    assert resp.status_code == 303
    session.expire_all()
    assert _user(session, "bob@example.org").person_id == req.user.person_id is not None
    event = session.scalar(select(AuditEvent).where(AuditEvent.action == "identity.link"))
    assert event.detail["users"] == sorted([req.user_id, twin_id])
    html = client.get(f"/admin/requests/{req.id}").get_data(as_text=True)
    assert 'id="linked-accounts"' in html and "bob@example.org" in html
    audit_page = client.get("/admin/audit?action=identity.").get_data(as_text=True)
    assert "identity.link" in audit_page
    # bad input: a clear message, never a 500
    resp = client.post("/admin/persons/link", data={"users": ["x"]}, follow_redirects=True)
    assert "user must be a whole number" in resp.get_data(as_text=True)
    resp = client.post("/admin/persons/link", data={"users": [str(twin_id)]},
                       follow_redirects=True)
    assert "at least two different accounts" in resp.get_data(as_text=True)


def test_quota_counts_across_linked_accounts(app_config, app, client, auth, imported,
                                             baseline_files, session):
    """Two accounts in two teams share the daily test quota once an admin links them, and
    have their own again once unlinked."""
    app.config["DAILY_QUOTA"] = 2
    data = baseline_files["test"].read_bytes()
    ada = auth.member(email="ada@example.org", team="Team A")
    auth.logout()
    bob = auth.member(email="bob@example.org", team="Team B")
    auth.logout()  # the API calls below carry their tokens only
    assert _upload(client, ada, data).status_code == 202
    assert _upload(client, ada, data).status_code == 202
    assert _upload(client, bob, data).status_code == 202  # not linked: team B's own quota
    from leaderboard.server.services import persons
    admin = accounts.register(session, email="root@example.org", display_name="root",
                              password=PASSWORD, is_admin=True)
    persons.link(session, admin, [_user(session, "ada@example.org"),
                                  _user(session, "bob@example.org")])
    session.commit()
    resp = _upload(client, bob, data)
    assert resp.status_code == 429, resp.json
    assert "marked as one person" in resp.json["message"] and resp.json["linked_accounts"] == 2
    # the dev split's own (generous) limit is not used up by the test split's submissions
    assert _upload(client, bob, baseline_files["dev"].read_bytes(), split="dev").status_code \
        == 202
    # unlinking gives Bob his team's own quota back
    persons.unlink(session, admin, _user(session, "bob@example.org"))
    session.commit()
    assert _upload(client, bob, data).status_code == 202


def test_phase_cap_counts_across_linked_accounts(app, client, auth, imported, baseline_files,
                                                 session):
    from datetime import timedelta

    from leaderboard.server.models import utcnow
    from leaderboard.server.models.challenges import Challenge, ChallengeEntrant, ChallengePhase
    from leaderboard.server.services import persons

    data = baseline_files["test"].read_bytes()
    ada = auth.member(email="ada@example.org", team="Team A")
    auth.logout()
    bob = auth.member(email="bob@example.org", team="Team B")
    auth.logout()
    bench = session.scalar(select(Benchmark))
    now = utcnow()
    ch = Challenge(benchmark_id=bench.id, key="c1", title="C1")
    session.add(ch)
    session.flush()
    session.add(ChallengePhase(challenge_id=ch.id, position=0, name="final", split="test",
                               opens_at=now - timedelta(days=1),
                               closes_at=now + timedelta(days=1), max_submissions=1))
    admin = accounts.register(session, email="root@example.org", display_name="root",
                              password=PASSWORD, is_admin=True)
    persons.link(session, admin, [_user(session, "ada@example.org"),
                                  _user(session, "bob@example.org")])
    for email in ("ada@example.org", "bob@example.org"):  # both teams entered the challenge
        session.add(ChallengeEntrant(challenge_id=ch.id, team_id=_user(session, email).team_id))
    session.commit()
    assert _upload(client, ada, data, challenge="c1").status_code == 202
    resp = _upload(client, bob, data, challenge="c1")
    assert resp.status_code == 429 and "phase 'final'" in resp.json["message"], resp.json


def test_request_form_asks_role_and_benchmark_fields(app, client, auth, imported, session):
    bench = session.scalar(select(Benchmark))
    bench.meta_json = {**bench.meta_json, "request_fields": [
        {"key": "ethics", "label": "Ethics approval number", "required": True, "help": "",
         "max_length": 20, "multiline": False}]}
    session.commit()
    auth.register()
    page = client.get("/data/syncred").get_data(as_text=True)
    assert 'name="role"' in page and 'name="field_ethics"' in page
    form = {"full_name": "Ada Lovelace", "affiliation": "Analytical Engines", "role": "",
            "intended_use": INTENDED, "accept": "1", "field_ethics": "x" * 21}
    resp = client.post("/data/syncred/sign", data=form)
    assert resp.status_code == 400
    html = resp.get_data(as_text=True)
    assert "at most 20 characters" in html and "Ethics approval number" in html
    resp = client.post("/data/syncred/sign", data={**form, "role": "PhD student",
                                                   "field_ethics": "IRB-42"})
    assert resp.status_code == 303
    req = session.scalar(select(AccessRequest))
    assert (req.role, req.answers_json) == ("PhD student", {"ethics": "IRB-42"})
