"""Logins are server-side sessions: logout, a password change and a disabled account end every
cookie of the user (session and remember-me), on SQLite and PostgreSQL; the account page lists
the sessions and tokens and ends them."""
from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from leaderboard.server.models import User, utcnow
from leaderboard.server.models.sessions import LoginSession
from leaderboard.server.services import accounts

PASSWORD = "correct horse battery"


def _login(app, email="ada@example.org", password=PASSWORD, remember=True):
    client = app.test_client()
    resp = client.post("/login", data={"email": email, "password": password,
                                       **({"remember": "1"} if remember else {})})
    assert resp.status_code == 302, resp.get_data(as_text=True)[:300]
    return client


def _cookies(client) -> dict[str, str]:
    return {name: client.get_cookie(name).value for name in ("session", "remember_token")
            if client.get_cookie(name) is not None}


def _with(app, cookies: dict[str, str]):
    """A new browser holding only these (copied) cookies."""
    client = app.test_client()
    for name, value in cookies.items():
        client.set_cookie(name, value)
    return client


def _signed_in(client) -> bool:
    return client.get("/team/").status_code == 200


def _register(client, email="ada@example.org"):
    resp = client.post("/register", data={"email": email, "password": PASSWORD,
                                          "display_name": email.split("@")[0]})
    assert resp.status_code == 302


def test_old_cookies_fail_after_logout(app, client):
    _register(client)
    browser = _login(app)
    cookies = _cookies(browser)
    assert set(cookies) == {"session", "remember_token"}
    assert _signed_in(_with(app, cookies))
    assert _signed_in(_with(app, {"remember_token": cookies["remember_token"]}))  # it works...
    assert browser.post("/logout").status_code == 302
    assert not _signed_in(_with(app, cookies))  # ...until logout, for both cookies
    assert not _signed_in(_with(app, {"session": cookies["session"]}))
    assert not _signed_in(_with(app, {"remember_token": cookies["remember_token"]}))
    assert not _signed_in(browser)


def test_password_change_ends_every_session_but_renews_this_one(app, client, session):
    _register(client)
    laptop, phone = _login(app), _login(app, remember=False)
    laptop_cookies, phone_cookies = _cookies(laptop), _cookies(phone)
    resp = laptop.post("/account/password", data={"current_password": "wrong password!",
                                                  "new_password": "a brand new secret"})
    assert resp.status_code == 400 and "current_password" in resp.get_data(as_text=True)
    assert _signed_in(phone)
    resp = laptop.post("/account/password", data={"current_password": PASSWORD,
                                                  "new_password": "a brand new secret"})
    assert resp.status_code == 302
    assert _signed_in(laptop)  # this browser got a new session
    assert not _signed_in(phone)
    assert not _signed_in(_with(app, laptop_cookies)) and not _signed_in(_with(app, phone_cookies))
    assert not _signed_in(_with(app, {"remember_token": laptop_cookies["remember_token"]}))
    assert laptop.post("/login", data={"email": "ada@example.org", "password": PASSWORD}) \
        .status_code in (302, 401)
    assert app.test_client().post("/login", data={"email": "ada@example.org",
                                                  "password": PASSWORD}).status_code == 401


def test_disabled_account_loses_every_cookie_even_once_re_enabled(app, client, session):
    _register(client)
    client.post("/logout")
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        accounts.create_admin(s, email="root@example.org", display_name="root",
                              password=PASSWORD)
    user = _login(app)
    cookies = _cookies(user)
    admin = _login(app, email="root@example.org")
    ada = session.scalar(select(User).where(User.email == "ada@example.org"))
    assert admin.post(f"/admin/users/{ada.id}/active", data={"value": "0"}).status_code == 303
    assert not _signed_in(user) and not _signed_in(_with(app, cookies))
    assert admin.post(f"/admin/users/{ada.id}/active", data={"value": "1"}).status_code == 303
    assert not _signed_in(_with(app, cookies))  # ended, not suspended
    assert not _signed_in(_with(app, {"remember_token": cookies["remember_token"]}))
    assert _signed_in(_login(app))


def test_account_page_lists_and_ends_sessions_and_tokens(app, client, auth, session):
    token = auth.member()
    other = _login(app)
    page = client.get("/account/").get_data(as_text=True)
    rows = session.scalars(select(LoginSession)).all()
    assert len(rows) == 2 and page.count("Sign out</button>") == 2
    assert "this browser" in page and token[:10] in page
    mine = session.scalar(select(LoginSession.id).order_by(LoginSession.id))
    theirs = max(r.id for r in rows)
    assert client.post(f"/account/sessions/{theirs}/revoke").status_code == 302
    assert not _signed_in(other) and _signed_in(client)
    # someone else's session id: 404, nothing changes
    third = _login(app)
    intruder = app.test_client()
    _register(intruder, "eve@example.org")
    assert intruder.post(f"/account/sessions/{mine}/revoke").status_code == 404
    assert client.post("/account/sessions/revoke-others").status_code == 302
    assert not _signed_in(third) and _signed_in(client)
    assert client.post("/account/tokens/1/revoke").status_code == 302
    assert client.get("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"}) \
        .status_code == 401
    assert client.post(f"/account/sessions/{mine}/revoke").status_code == 302
    assert not _signed_in(client)


def test_expired_sessions_are_anonymous(app, client, session):
    _register(client)
    assert _signed_in(client)
    session.execute(update(LoginSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    session.commit()
    assert not _signed_in(client)
