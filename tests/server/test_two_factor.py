"""Issue 35, two-factor sign-in (TOTP with pyotp, recovery codes): enrolment, the login's code
step (right code, wrong code, a code replayed in its window, recovery codes single-use), turning
it off, the admin's enrolment requirement (a setting, off by default) and the code attempts'
rate limit. PostgreSQL and SQLite (``db_url``)."""
from __future__ import annotations

import re
from datetime import timedelta

import pyotp
import pytest
from sqlalchemy import select

from leaderboard.server.models import User, utcnow
from leaderboard.server.models.access import AuditEvent
from leaderboard.server.models.identity import RecoveryCode, UserTotp
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import accounts, two_factor
from tests.server.conftest import LABEL_KEY

PASSWORD = "correct horse battery"


def _enrol(client) -> tuple[str, list[str]]:
    """Enrol the logged-in user through the pages; returns the secret and recovery codes."""
    page = client.post("/account/two-factor/begin").get_data(as_text=True)
    secret = re.search(r'<code id="totp-secret">([A-Z2-7]+)</code>', page).group(1)
    assert "otpauth://totp/" in page
    page = client.post("/account/two-factor/confirm",
                       data={"code": pyotp.TOTP(secret).now()}).get_data(as_text=True)
    codes = re.findall(r"<li><code>([a-z0-9-]{19})</code></li>", page)
    assert len(codes) == 10, page[:2000]
    return secret, codes


def _login(client, email="ada@example.org"):
    return client.post("/login", data={"email": email, "password": PASSWORD})


def _code(client, code):
    return client.post("/login/second-factor", data={"code": code})


def _signed_in(client) -> bool:
    return client.get("/account/").status_code == 200


def test_enrol_then_login_needs_the_code(client, auth, session):
    auth.register()
    secret, codes = _enrol(client)
    row = session.scalar(select(UserTotp))
    assert row.enabled_at is not None and secret.encode() not in row.secret_enc  # encrypted
    stored = set(session.scalars(select(RecoveryCode.code_hash)))
    assert len(stored) == 10 and not stored & {c.replace("-", "") for c in codes}  # hashed
    auth.logout()

    resp = _login(client)
    assert resp.status_code == 303 and resp.headers["Location"].endswith("/login/second-factor")
    assert not _signed_in(client)  # the password alone starts no session
    resp = _code(client, "000000" if pyotp.TOTP(secret).now() != "000000" else "111111")
    assert resp.status_code == 401 and "wrong code" in resp.get_data(as_text=True)
    assert not _signed_in(client)
    # the code of the step enrolment used cannot be replayed within its window
    resp = _code(client, pyotp.TOTP(secret).now())
    if resp.status_code == 401:  # same 30-second step as the enrolment: refused as replay
        assert "already used" in resp.get_data(as_text=True)
        resp = _code(client, codes[0])  # a recovery code gets in instead
        codes = codes[1:]
    assert resp.status_code == 303 and _signed_in(client)
    actions = set(session.scalars(select(AuditEvent.action)))
    assert {"auth.2fa_enable", "auth.2fa_failed"} <= actions


def test_replayed_code_and_single_use_recovery(client, auth, app, session):
    """Service level, with explicit times: a code accepted once is refused in its window, the
    next step's code passes; a recovery code works once."""
    user = accounts.register(session, email="ada@example.org", display_name="Ada",
                             password=PASSWORD)
    session.flush()
    secret, _ = two_factor.begin(session, user, label_keys=[LABEL_KEY], issuer="t")
    now = utcnow()
    codes = two_factor.confirm(session, user, pyotp.TOTP(secret).at(now), label_keys=[LABEL_KEY],
                               now=now)
    later = now + timedelta(seconds=60)
    code = pyotp.TOTP(secret).at(later)
    assert two_factor.verify(session, user, code, label_keys=[LABEL_KEY], now=later) == "totp"
    with pytest.raises(ServiceError, match="already used"):
        two_factor.verify(session, user, code, label_keys=[LABEL_KEY],
                          now=later + timedelta(seconds=5))
    with pytest.raises(ServiceError, match="already used"):  # an older step is a replay too
        two_factor.verify(session, user, pyotp.TOTP(secret).at(later - timedelta(seconds=30)),
                          label_keys=[LABEL_KEY], now=later)
    nxt = later + timedelta(seconds=30)
    assert two_factor.verify(session, user, pyotp.TOTP(secret).at(nxt),
                             label_keys=[LABEL_KEY], now=nxt) == "totp"
    assert two_factor.verify(session, user, codes[3].upper(), label_keys=[LABEL_KEY]) \
        == "recovery"  # case and dashes do not matter
    with pytest.raises(ServiceError, match="wrong or was already used"):
        two_factor.verify(session, user, codes[3], label_keys=[LABEL_KEY])
    assert two_factor.codes_left(session, user) == 9
    with pytest.raises(ServiceError, match="6-digit code"):
        two_factor.verify(session, user, "12", label_keys=[LABEL_KEY])
    session.commit()


def test_disable_needs_password_and_code(client, auth, session):
    auth.register()
    secret, codes = _enrol(client)
    resp = client.post("/account/two-factor/disable", data={"password": "nope",
                                                            "code": codes[0]})
    assert resp.status_code == 401 and "wrong password" in resp.get_data(as_text=True)
    resp = client.post("/account/two-factor/disable", data={"password": PASSWORD,
                                                            "code": codes[1]})
    assert resp.status_code == 303
    assert session.scalar(select(UserTotp)) is None
    assert session.scalar(select(RecoveryCode)) is None
    auth.logout()
    assert _login(client).status_code == 302 and _signed_in(client)  # password alone again


def test_pending_login_expires_and_bad_codes_never_500(client, auth):
    auth.register()
    _enrol(client)
    auth.logout()
    # no pending login: sent back to the login page
    resp = _code(client, "123456")
    assert resp.status_code == 303 and "/login" in resp.headers["Location"]
    _login(client)
    for bad in ("", "x" * 40, "12 34 56", "zzzz-zzzz-zzzz-zzzz"):
        assert _code(client, bad).status_code == 401


@pytest.fixture
def admin_2fa_config(app_config):
    app_config["ADMIN_REQUIRE_2FA"] = True
    return app_config


def test_admin_must_enrol_when_required(admin_2fa_config, app, client, session):
    accounts.register(session, email="root@example.org", display_name="root",
                      password=PASSWORD, is_admin=True)
    session.commit()
    resp = _login(client, "root@example.org")
    assert resp.status_code == 302  # no factor yet: a session, but no admin page
    resp = client.get("/admin/requests")
    assert resp.status_code == 302 and "/account/two-factor" in resp.headers["Location"]
    assert "next=/admin/requests" in resp.headers["Location"]
    page = client.get(resp.headers["Location"]).get_data(as_text=True)
    assert 'id="enrol-required"' in page
    _, codes = _enrol(client)
    assert client.get("/admin/requests").status_code == 200
    client.post("/logout")
    _login(client, "root@example.org")
    assert client.get("/admin/requests").status_code == 302  # half-way: not signed in
    # (the TOTP code of this 30-second step was spent by enrolment: a recovery code instead)
    resp = _code(client, codes[0])
    assert resp.status_code == 303 and resp.headers["Location"].endswith("/admin/")
    assert client.get("/admin/requests").status_code == 200


def test_admin_pages_open_without_factor_by_default(client, session, app):
    assert app.config["ADMIN_REQUIRE_2FA"] is False
    accounts.register(session, email="root@example.org", display_name="root",
                      password=PASSWORD, is_admin=True)
    session.commit()
    _login(client, "root@example.org")
    assert client.get("/admin/requests").status_code == 200


@pytest.fixture
def limited_config(app_config):
    app_config["RATELIMIT_ENABLED"] = True
    app_config["TWO_FACTOR_RATE_LIMIT"] = "3 per minute"
    return app_config


def test_code_attempts_are_rate_limited(limited_config, app, client, auth, session):
    auth.register()
    _enrol(client)
    auth.logout()
    _login(client)
    codes = [_code(client, "000001").status_code for _ in range(4)]
    assert codes[:3] == [401, 401, 401] and codes[3] == 429
    assert session.scalar(select(User)).is_active  # limited, not locked out
