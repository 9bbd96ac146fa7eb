"""Register, log in, log out; teams; API tokens; cookie flags; login rate limit."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from leaderboard.server.models import ApiToken, User
from leaderboard.server.security import hash_token, verify_password


def test_register_login_logout(client, auth, session):
    resp = auth.register()
    assert resp.status_code == 302 and resp.headers["Location"].endswith("/team/")
    user = session.scalar(select(User))
    assert user.email == "ada@example.org"
    assert user.password_hash.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    assert verify_password(user.password_hash, "correct horse battery")
    assert client.get("/team/").status_code == 200
    auth.logout()
    assert client.get("/team/").status_code == 302
    assert auth.login(password="wrong password!").status_code == 401
    resp = auth.login()
    assert resp.status_code == 302
    assert client.get("/team/").status_code == 200


def test_register_errors_name_fields(client, auth):
    resp = auth.register(email="not-an-email", password="short", display_name="")
    assert resp.status_code == 400
    page = resp.get_data(as_text=True)
    for field in ("email", "password", "display_name"):
        assert f"field &#39;{field}&#39;" in page or f"field '{field}'" in page
    auth.register()
    auth.logout()
    resp = auth.register(email="ADA@example.org")
    assert resp.status_code == 409 and "already exists" in resp.get_data(as_text=True)


def test_login_next_is_not_an_open_redirect(client, auth):
    auth.register()
    auth.logout()
    resp = client.post("/login?next=https://evil.example/", data={
        "email": "ada@example.org", "password": "correct horse battery"})
    assert resp.headers["Location"] == "/team/"


def test_team_create_join_leave(client, auth, app, session):
    auth.register()
    assert auth.team("Blue").status_code == 302
    code = session.scalar(select(User)).team.invite_code
    resp = auth.team("Second")  # one team at a time
    assert resp.status_code == 302
    assert "already in team" in client.get("/team/").get_data(as_text=True)

    other = app.test_client()
    other.post("/register", data={"email": "bob@example.org", "password": "another long pw",
                                  "display_name": "Bob"})
    other.post("/team/join", data={"invite_code": "wrong"})
    assert "no team has this invite code" in other.get("/team/").get_data(as_text=True)
    other.post("/team/join", data={"invite_code": code})
    page = other.get("/team/").get_data(as_text=True)
    assert "Team Blue" in page and "Ada" in page
    other.post("/team/leave")
    session.expire_all()
    bob = session.scalar(select(User).where(User.email == "bob@example.org"))
    assert bob.team_id is None
    resp = client.post("/team/create", data={"name": "x"})
    assert resp.status_code == 302


def test_tokens_shown_once_hashed_and_revocable(client, auth, session, imported):
    auth.register()
    auth.team()
    token = auth.token("laptop")
    row = session.scalar(select(ApiToken))
    assert row.token_hash == hash_token(token) and token not in (row.token_hash, row.prefix)
    page = client.get("/team/").get_data(as_text=True)
    assert token not in page and row.prefix in page
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/submissions", headers=headers).status_code == 200
    session.expire_all()
    assert session.scalar(select(ApiToken)).last_used_at is not None
    client.post(f"/team/tokens/{row.id}/revoke")
    resp = client.get("/api/v1/submissions", headers=headers)
    assert resp.status_code == 401 and resp.json["error"] == "unauthorized"


def test_cannot_revoke_someone_elses_token(client, auth, app, session):
    auth.register()
    auth.token()
    tid = session.scalar(select(ApiToken.id))
    other = app.test_client()
    other.post("/register", data={"email": "eve@example.org", "password": "another long pw",
                                  "display_name": "Eve"})
    other.post(f"/team/tokens/{tid}/revoke")
    session.expire_all()
    assert session.scalar(select(ApiToken.revoked_at)) is None


@pytest.fixture
def strict_config(sqlite_url, tmp_path):
    from tests.server.conftest import make_config
    return make_config(sqlite_url, tmp_path, COOKIE_SECURE="1", WTF_CSRF_ENABLED=True,
                       RATELIMIT_ENABLED=True, LOGIN_RATE_LIMIT="3 per minute")


def test_csrf_cookie_flags_and_login_rate_limit(strict_config):
    from leaderboard.server.web import create_app
    app = create_app(strict_config)
    client = app.test_client()
    resp = client.post("/register", data={"email": "a@b.org", "password": "long enough pw",
                                          "display_name": "A"})
    assert resp.status_code == 400 and "CSRF" in resp.get_data(as_text=True)
    page = client.get("/login", base_url="https://localhost").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    cookie = client.get_cookie("session", domain="localhost")
    assert cookie is not None
    assert cookie.secure and cookie.http_only and cookie.same_site == "Lax"
    codes = [client.post("/login", data={"email": "x@y.org", "password": "p",
                                               "csrf_token": csrf},
                         base_url="https://localhost",
                         headers={"Referer": "https://localhost/login"}).status_code
             for _ in range(4)]
    assert codes == [401, 401, 401, 429]
    app.extensions["lb_db"].dispose()


def test_public_pages_mint_no_session_for_visitors(strict_config):
    """A visitor's public page carries no CSRF token and sets no cookie (issue 39: a session
    signed and sent per anonymous request was a seventh of the page's cost); a page with a
    form still mints one, and a signed-in page still has the token for its scripts."""
    from leaderboard.server.web import create_app
    app = create_app(strict_config)
    client = app.test_client()
    for path in ("/", "/challenges/"):
        resp = client.get(path, base_url="https://localhost")
        assert resp.status_code == 200, path
        assert "Set-Cookie" not in resp.headers, path
        assert 'name="csrf-token"' not in resp.get_data(as_text=True), path
    page = client.get("/register", base_url="https://localhost")
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.get_data(as_text=True)).group(1)
    assert "Set-Cookie" in page.headers
    resp = client.post("/register", data={"email": "a@b.org", "password": "long enough pw",
                                          "display_name": "A", "csrf_token": csrf},
                       base_url="https://localhost",
                       headers={"Referer": "https://localhost/register"})
    assert resp.status_code == 302, resp.get_data(as_text=True)[:300]
    html = client.get("/", base_url="https://localhost").get_data(as_text=True)
    assert re.search(r'<meta name="csrf-token" content="[^"]+">', html)
    app.extensions["lb_db"].dispose()
