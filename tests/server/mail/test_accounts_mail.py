"""Verified addresses, recovery and mail settings (issue 35) through the real pages, with the
messages read from a real SMTP server, on SQLite and PostgreSQL."""
from __future__ import annotations

import io
import re
import time

from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from sqlalchemy import select

from leaderboard.server.models import User
from leaderboard.server.models.mail import MailOptOut, Outbox
from leaderboard.server.services import notices
from leaderboard.server.services.mail_links import SALTS

PASSWORD = "correct horse battery"
SITE = "http://lb.example.org"


def _link(msg, path: str) -> str:
    """The path of the first link in ``msg`` that starts with ``path``."""
    found = re.search(re.escape(SITE + path) + r"\S+", msg.get_content())
    assert found, msg.get_content()
    return found.group(0).removeprefix(SITE)


def _to(smtp, addr: str, subject: str):
    got = [m for m in smtp.messages if m["To"] == addr and m["Subject"] == subject]
    assert got, [(m["To"], m["Subject"]) for m in smtp.messages]
    return got[-1]


def _user(session, email="ada@example.org") -> User:
    session.expire_all()
    return session.scalar(select(User).where(User.email == email))


def _submit(client, token, split):
    return client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                       content_type="multipart/form-data",
                       data={"benchmark": "syncred", "split": split, "method_name": "m",
                             "file": (io.BytesIO(b'{"id": "x"}\n'), "p.jsonl")})


def test_forgot_password_answers_alike_and_the_link_resets_once(app, client, auth, smtp,
                                                                session):
    auth.register()
    auth.team()
    token = auth.token()
    other = app.test_client()
    assert other.post("/login", data={"email": "ada@example.org",
                                      "password": PASSWORD}).status_code == 302
    stranger = app.test_client()
    known = stranger.post("/forgot-password", data={"email": "Ada@Example.org"})
    unknown = stranger.post("/forgot-password", data={"email": "nobody@example.org"})
    assert known.status_code == unknown.status_code == 200
    assert known.get_data() == unknown.get_data()  # no account enumeration
    assert [m["To"] for m in smtp.messages if m["Subject"] == "Reset your password"] == \
        ["ada@example.org"]
    path = _link(_to(smtp, "ada@example.org", "Reset your password"), "/reset-password/")
    page = stranger.get(path)
    assert page.status_code == 200 and "revokes every API token" in page.get_data(as_text=True)
    bad = stranger.post(path, data={"new_password": "a brand new secret",
                                    "confirm_password": "something else entirely"})
    assert bad.status_code == 400 and "the two passwords differ" in bad.get_data(as_text=True)
    short = stranger.post(path, data={"new_password": "short", "confirm_password": "short"})
    assert short.status_code == 400 and "new_password" in short.get_data(as_text=True)
    done = stranger.post(path, data={"new_password": "a brand new secret",
                                     "confirm_password": "a brand new secret"})
    assert done.status_code == 302 and done.location.endswith("/login")
    assert client.get("/api/v1/submissions?mine=1",
                      headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert other.get("/team/").status_code != 200  # every session ended
    again = stranger.post(path, data={"new_password": "another new secret",
                                      "confirm_password": "another new secret"})
    assert again.status_code == 400 and "already used" in again.get_data(as_text=True)
    assert stranger.post("/login", data={"email": "ada@example.org",
                                         "password": "a brand new secret"}).status_code == 302
    assert _user(session).email_verified_at is not None  # the reset link proved the address


def test_links_cannot_be_forged_expired_or_used_for_another_account(app, client, auth, smtp,
                                                                    session):
    auth.register()
    verify = _link(_to(smtp, "ada@example.org", "Confirm your address"), "/verify-email/")
    token = verify.removeprefix("/verify-email/")
    secret = app.config["SECRET_KEY"]
    ada = _user(session)
    tampered = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    forged = URLSafeTimedSerializer("not-the-secret", salt=SALTS["verify"]).dumps(
        {"u": ada.id, "e": ada.email})

    class Past(TimestampSigner):
        def get_timestamp(self):
            return int(time.time()) - app.config["VERIFY_LINK_TTL_S"] - 10

    expired = URLSafeTimedSerializer(secret, salt=SALTS["verify"], signer=Past).dumps(
        {"u": ada.id, "e": ada.email})
    other_purpose = URLSafeTimedSerializer(secret, salt=SALTS["reset"]).dumps(
        {"u": ada.id, "p": "x"})
    for bad, words in ((tampered, "not valid"), (forged, "not valid"), (expired, "expired"),
                       (other_purpose, "not valid"), ("", "not valid")):
        resp = client.get("/verify-email/" + bad) if bad else client.get("/verify-email/x")
        assert resp.status_code == 400 and words in resp.get_data(as_text=True), bad
        assert client.get("/reset-password/" + (bad or "x")).status_code == 400
    # bob, signed in, follows ada's link: it verifies ada's address, never bob's
    auth.logout()
    auth.register(email="bob@example.org", display_name="Bob")
    assert client.get(verify).status_code == 200
    assert _user(session).email_verified_at is not None
    assert _user(session, "bob@example.org").email_verified_at is None
    # a link for an address the account no longer has
    bob = _user(session, "bob@example.org")
    stale = URLSafeTimedSerializer(secret, salt=SALTS["verify"]).dumps(
        {"u": bob.id, "e": "old@example.org"})
    resp = client.get("/verify-email/" + stale)
    assert resp.status_code == 400 and "no longer uses" in resp.get_data(as_text=True)


def test_unverified_account_is_held_back_until_the_link_is_followed(app, client, auth, smtp,
                                                                    imported, session):
    auth.register()
    auth.team()
    token = auth.token()
    page = client.get("/data/syncred").get_data(as_text=True)
    assert "Verify your address" in page and "Send the link again" in page
    resp = client.post("/data/syncred/sign", data={
        "full_name": "Ada Lovelace", "affiliation": "Example University",
        "intended_use": "Evaluating our detector for a paper.", "accept": "1"})
    assert resp.status_code == 303
    assert "verify your address" in client.get("/data/syncred").get_data(as_text=True)
    held = _submit(client, token, "test")
    assert held.status_code == 403 and held.json["error"] == "email_unverified"
    assert held.json["verify_url"] == "/account/"
    assert _submit(client, token, "dev").status_code != 403  # offline-like dev scoring stays
    assert "Verify your address" in client.get("/submit").get_data(as_text=True)
    before = len(smtp.messages)
    assert client.post("/verify-email/resend").status_code == 302
    assert len(smtp.messages) == before + 1
    assert client.get(_link(smtp.messages[-1], "/verify-email/")).status_code == 200
    assert "Verify your address" not in client.get("/data/syncred").get_data(as_text=True)
    assert _submit(client, token, "test").json.get("error") != "email_unverified"


def test_changing_the_address_verifies_it_again(app, client, auth, smtp, session):
    auth.register()
    assert client.get(_link(smtp.messages[-1], "/verify-email/")).status_code == 200
    bad = client.post("/account/email", data={"new_email": "not an address",
                                              "password": "wrong"})
    text = bad.get_data(as_text=True)
    assert bad.status_code == 400 and "not a valid email address" in text
    assert "is not your current password" in text
    taken = client.post("/account/email", data={"new_email": "ada@example.org",
                                                "password": PASSWORD})
    assert taken.status_code == 400 and "already your address" in taken.get_data(as_text=True)
    resp = client.post("/account/email", data={"new_email": "Ada.New@Example.org",
                                               "password": PASSWORD})
    assert resp.status_code == 302
    ada = _user(session, "ada.new@example.org")
    assert ada is not None and ada.email_verified_at is None
    assert "ada.new@example.org" in _to(smtp, "ada.new@example.org",
                                        "Confirm your address").get_content()
    _to(smtp, "ada@example.org", "Your address was changed")
    assert client.get(_link(_to(smtp, "ada.new@example.org", "Confirm your address"),
                            "/verify-email/")).status_code == 200


def _verified_member(app, client, auth, smtp, session) -> User:
    auth.register()
    auth.team()
    client.get(_link(smtp.messages[-1], "/verify-email/"))
    return _user(session)


def test_a_burst_of_notices_is_one_message_with_one_click_unsubscribe(app, client, auth, smtp,
                                                                       session):
    ada = _verified_member(app, client, auth, smtp, session)
    before = len(smtp.messages)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        for i in range(5):
            notices.post(s, "submission.scored", f"Submission {i} was scored",
                         team_id=ada.team_id, subject=f"submission:{i + 1}")
        notices.post(s, "submission.failed", "Submission 9 failed: line 3, field 'score'",
                     team_id=ada.team_id, subject="submission:9")
    assert len(smtp.messages) == before + 1
    msg = smtp.messages[-1]
    body = msg.get_content()
    assert msg["Subject"].startswith("6 updates on the leaderboard")
    assert body.count("\n- Submission") == 6 and f"{SITE}/submissions/9" in body
    assert "line 3, field 'score'" in body
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    stop = re.fullmatch(r"<(\S+)>", msg["List-Unsubscribe"]).group(1).removeprefix(SITE)
    anonymous = app.test_client()
    page = anonymous.get(stop)  # a GET (a link scanner) changes nothing
    assert page.status_code == 200 and not session.scalars(select(MailOptOut)).all()
    resp = anonymous.post(stop, data="List-Unsubscribe=One-Click",
                          content_type="application/x-www-form-urlencoded")
    assert resp.status_code == 200
    session.expire_all()
    assert sorted(session.scalars(select(MailOptOut.kind))) == ["submission_failed",
                                                                 "submission_scored"]
    assert anonymous.post(stop, data="List-Unsubscribe=One-Click",
                          content_type="application/x-www-form-urlencoded").status_code == 200
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        notices.post(s, "submission.scored", "Submission 7 was scored", team_id=ada.team_id)
    assert len(smtp.messages) == before + 1  # turned off: nothing more
    settings = client.get("/account/mail").get_data(as_text=True)
    assert 'value="submission_scored"' in settings and 'value="agreement_decision" checked' \
        in settings
    client.post("/account/mail", data={"kind": ["submission_scored", "bogus"]})
    session.expire_all()
    assert "submission_scored" not in set(session.scalars(select(MailOptOut.kind)))


def test_unverified_readers_get_no_notices_by_mail(app, client, auth, smtp, session):
    auth.register()
    auth.team()
    ada = _user(session)
    before = len(smtp.messages)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        notices.post(s, "submission.scored", "Submission 1 was scored", team_id=ada.team_id)
    assert len(smtp.messages) == before
    assert not [r for r in session.scalars(select(Outbox)) if r.kind == "digest"]


def test_new_forms_refuse_bad_input_plainly(app, client, auth, smtp):
    for email, words in (("", "required"), ("not an address", "not a valid email address"),
                         ("a@b", "not a valid email address"), ("x" * 300 + "@example.org",
                                                                "longer than 254")):
        resp = client.post("/forgot-password", data={"email": email})
        assert resp.status_code == 400 and words in resp.get_data(as_text=True), email
    for path in ("/mail/unsubscribe/garbage", "/reset-password/garbage",
                 "/verify-email/" + "x" * 2000):
        assert client.get(path).status_code == 400
        if not path.startswith("/verify-email/"):  # GET only there
            assert client.post(path).status_code == 400
    assert client.post("/verify-email/resend").status_code == 302  # to the login page
    auth.register()
    resp = client.post("/account/email", data={})
    assert resp.status_code == 400 and "new_email" in resp.get_data(as_text=True)
    assert client.post("/account/mail", data={"kind": "\x00"}).status_code == 400


def test_reset_and_resend_are_rate_limited(app_config):
    from leaderboard.server.web import create_app

    app = create_app({**app_config, "RATELIMIT_ENABLED": True})
    client = app.test_client()
    codes = [client.post("/forgot-password", data={"email": "ada@example.org"}).status_code
             for _ in range(4)]
    assert codes == [200, 200, 200, 429]  # per address: 3 an hour
    codes = [client.post("/forgot-password", data={"email": f"u{i}@example.org"}).status_code
             for i in range(3)]
    assert codes[-1] == 429  # per caller: 5 a minute
    client.post("/register", data={"email": "ada@example.org", "password": PASSWORD,
                                   "display_name": "Ada"})
    codes = [client.post("/verify-email/resend").status_code for _ in range(4)]
    assert codes == [302, 302, 302, 429]
    app.extensions["lb_db"].dispose()
