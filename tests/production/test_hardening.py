"""`leaderboard.server.web.hardening`: headers, body caps, session settings, rate limits, validation."""
from __future__ import annotations

import io
from datetime import timedelta

import pytest
import redis

from tests.production.conftest import PASSWORD, add_member, make_app

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "frame-ancestors 'none'")


@pytest.fixture
def app(tmp_path):
    app = make_app(tmp_path)
    yield app
    app.extensions["lb_db"].dispose()


@pytest.mark.parametrize("path", ["/", "/login", "/api/v1/benchmarks", "/no-such-page",
                                  "/api/v1/nope", "/healthz"])
def test_security_headers_on_every_response(app, path):
    resp = app.test_client().get(path)
    assert resp.headers["Content-Security-Policy"].startswith(CSP)
    assert "unsafe-inline" not in resp.headers["Content-Security-Policy"]
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Referrer-Policy"] == "strict-origin-when-cross-origin"
    assert "Strict-Transport-Security" not in resp.headers  # plain http


def test_hsts_only_over_https(app):
    resp = app.test_client().get("/healthz", base_url="https://lb.example.org")
    assert resp.headers["Strict-Transport-Security"].startswith("max-age=31536000")


def test_non_upload_bodies_are_capped(app):
    client = app.test_client()
    resp = client.post("/login", data={"email": "a@b.org", "password": "x" * (2 << 20)})
    assert resp.status_code == 413
    resp = client.post("/register", data={"email": "a@b.org", "display_name": "x" * (2 << 20),
                                          "password": PASSWORD})
    assert resp.status_code == 413


def test_upload_endpoint_takes_files_up_to_max_upload(app):
    """1.5 MB is over the 1 MiB body cap but within MAX_UPLOAD_MB: reaches the view (401)."""
    from werkzeug.datastructures import FileStorage
    from werkzeug.test import encode_multipart

    upload = FileStorage(io.BytesIO(b"x" * 1_500_000), filename="p.jsonl")
    boundary, body = encode_multipart({"benchmark": "syncred", "split": "test", "file": upload})
    assert len(body) > 1_500_000
    resp = app.test_client().post("/api/v1/submissions", data=body,
                                  content_type=f"multipart/form-data; boundary={boundary}",
                                  headers={"Authorization": "Bearer lb_wrong"})
    assert resp.status_code == 401


def test_session_lifetimes_and_cookie_flags(tmp_path):
    app = make_app(tmp_path, COOKIE_SECURE="1")
    assert app.config["PERMANENT_SESSION_LIFETIME"] == timedelta(hours=12)
    assert app.config["REMEMBER_COOKIE_DURATION"] == timedelta(days=14)
    https = "https://lb.example.org"
    resp = app.test_client().post("/register", base_url=https, data={
        "email": "s@example.org", "display_name": "S", "password": PASSWORD})
    cookies = resp.headers.getlist("Set-Cookie")
    resp = app.test_client().post("/login", base_url=https, data={
        "email": "s@example.org", "password": PASSWORD, "remember": "1"})
    cookies += resp.headers.getlist("Set-Cookie")
    assert any(c.startswith("remember_token=") for c in cookies)
    assert any(c.startswith("session=") for c in cookies)
    for cookie in cookies:
        assert "HttpOnly" in cookie and "Secure" in cookie and "SameSite=Lax" in cookie
    app.extensions["lb_db"].dispose()


def test_registration_is_rate_limited_per_address(tmp_path):
    app = make_app(tmp_path, RATELIMIT_ENABLED=True, REGISTER_RATE_LIMIT="2 per minute")
    client = app.test_client()
    codes = [client.post("/register", data={"email": f"r{i}@example.org", "display_name": "R",
                                            "password": PASSWORD}).status_code
             for i in range(3)]
    client.post("/logout")
    assert codes[:2] != [429, 429] and codes[2] == 429
    assert client.get("/register").status_code == 200  # GET is not limited
    app.extensions["lb_db"].dispose()


@pytest.mark.parametrize("proxies, expected", [(1, [False, False, False, False]),
                                               (0, [False, False, True, True])])
def test_client_address_behind_a_trusted_proxy(tmp_path, proxies, expected):
    """Behind one proxy, each X-Forwarded-For client has its own bucket; without trust, the
    header is ignored (it could be forged) and all share the peer's."""
    app = make_app(tmp_path, RATELIMIT_ENABLED=True, REGISTER_RATE_LIMIT="2 per minute",
                   TRUSTED_PROXY_COUNT=proxies)
    limited = []
    for i, client_ip in enumerate(["203.0.113.1", "203.0.113.1", "203.0.113.2",
                                   "203.0.113.2"]):
        resp = app.test_client().post(
            "/register", headers={"X-Forwarded-For": client_ip},
            data={"email": f"p{i}@example.org", "display_name": "P", "password": PASSWORD})
        limited.append(resp.status_code == 429)
    assert limited == expected
    app.extensions["lb_db"].dispose()


def test_token_creation_is_rate_limited(tmp_path):
    app = make_app(tmp_path, RATELIMIT_ENABLED=True, TOKEN_RATE_LIMIT="2 per minute")
    client = app.test_client()
    client.post("/register", data={"email": "t@example.org", "display_name": "T",
                                   "password": PASSWORD})
    codes = [client.post("/team/tokens", data={"name": f"t{i}"}).status_code for i in range(3)]
    assert codes == [200, 200, 429]
    app.extensions["lb_db"].dispose()


def test_submissions_limited_per_caller_in_redis(tmp_path, redis_server):
    """Two tokens from one address have separate buckets; the counters live in Redis."""
    conn = redis.Redis.from_url(redis_server.url(3))
    conn.flushdb()
    app = make_app(tmp_path, RATELIMIT_ENABLED=True, SUBMIT_RATE_LIMIT="2 per minute",
                   REDIS_URL=redis_server.url(3))
    tokens = [add_member(app), add_member(app)]
    client = app.test_client()

    def post(token):
        return client.post("/api/v1/submissions", data={"benchmark": "nope"},
                           headers={"Authorization": f"Bearer {token}"}).status_code

    assert [post(tokens[0]) == 429 for _ in range(3)] == [False, False, True]
    assert [post(tokens[1]) == 429 for _ in range(2)] == [False, False]
    assert any(b"LIMIT" in k for k in conn.keys("*"))
    conn.flushdb()
    app.extensions["lb_db"].dispose()


@pytest.mark.parametrize("name, value, message", [
    ("MAX_BODY_BYTES", 0, "MAX_BODY_BYTES must be an integer >= 1"),
    ("TRUSTED_PROXY_COUNT", -1, "TRUSTED_PROXY_COUNT must be an integer >= 0"),
    ("SESSION_LIFETIME_S", "soon", "SESSION_LIFETIME_S must be an integer"),
    ("SUBMIT_RATE_LIMIT", "lots", "SUBMIT_RATE_LIMIT is not a rate limit"),
])
def test_bad_settings_are_named(tmp_path, name, value, message):
    with pytest.raises(ValueError, match=message):
        make_app(tmp_path, **{name: value})
