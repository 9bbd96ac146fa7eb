"""A database or Redis outage answers 503 with Retry-After (JSON under /api, a standalone HTML
page elsewhere), and nothing escapes Flask: not the error handlers, not the teardown rollback on
a connection that died under the request (issue 17)."""
from __future__ import annotations

import pytest
import redis
from sqlalchemy import create_engine, text

from leaderboard.server.db import Database
from tests.server.conftest import PG_ADMIN_URL, _empty_pg

DEAD_DB = "postgresql+psycopg://postgres@127.0.0.1:1/nothing"


def _assert_503(resp, *, json: bool):
    assert resp.status_code == 503, resp.get_data(as_text=True)[:300]
    assert resp.headers["Retry-After"] == "5"
    if json:
        assert resp.json["error"] == "unavailable" and resp.json["retry_after"] == 5
        assert "try again in 5 seconds" in resp.json["message"]
    else:
        assert resp.mimetype == "text/html"
        assert "temporarily unavailable" in resp.get_data(as_text=True)


@pytest.fixture
def dead_database(app):
    """From here on, the app's database refuses every connection."""
    alive = app.extensions["lb_db"]
    app.extensions["lb_db"] = Database(DEAD_DB)
    yield
    app.extensions["lb_db"].dispose()
    app.extensions["lb_db"] = alive


def test_database_down_is_503_everywhere(app, client, auth, imported, request):
    token = auth.member()  # logged in: pages will need the user from the database
    request.getfixturevalue("dead_database")
    _assert_503(client.get("/api/v1/submissions",
                           headers={"Authorization": f"Bearer {token}"}), json=True)
    _assert_503(client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                            data={"benchmark": "syncred"}), json=True)
    _assert_503(client.get("/submit"), json=False)  # loading the session user fails first
    _assert_503(client.get("/"), json=False)
    _assert_503(client.get("/benchmarks/syncred", headers={"Accept": "application/json"}),
                json=True)
    assert client.get("/healthz").status_code == 200  # the process itself is fine


def test_rate_limit_headers_keep_the_outage_retry_after(auth_token_app):
    """Flask-Limiter sets Retry-After on every answer of a rate-limited endpoint (the end of
    its window, up to a minute): an outage answer keeps its own 5 s. Registration is limited by
    address before the view touches the database (an upload's limit needs the caller, so a dead
    database answers there before the limiter does)."""
    app, token = auth_token_app
    alive = app.extensions["lb_db"]
    app.extensions["lb_db"] = Database(DEAD_DB)
    try:
        resp = app.test_client().post("/register", data={
            "email": "new@example.org", "display_name": "New", "password": "correct horse battery",
            "confirm": "correct horse battery"})
    finally:
        app.extensions["lb_db"].dispose()
        app.extensions["lb_db"] = alive
    _assert_503(resp, json=False)
    assert "X-RateLimit-Limit" in resp.headers  # the limiter did answer


@pytest.fixture
def auth_token_app(app_config):
    """An app with its rate limits on, and a team member's API token."""
    from leaderboard.server.services import accounts, teams, tokens
    from leaderboard.server.web import create_app

    app = create_app({**app_config, "RATELIMIT_ENABLED": True})
    try:
        with app.app_context(), app.extensions["lb_db"].scope() as s:
            user = accounts.register(s, email="rate@example.org", display_name="Rate",
                                     password="correct horse battery")
            teams.create_team(s, user, name="Team Rate")
            token = tokens.create_token(s, user, name="cli")[1]
        yield app, token
    finally:
        app.extensions["lb_db"].dispose()


def test_redis_errors_are_503_naming_the_queue(app):
    @app.get("/api/v1/redis-boom")
    def boom():
        raise redis.exceptions.ConnectionError("Error 111 connecting to redis:6379")

    @app.get("/redis-boom")
    def boom_html():
        raise redis.exceptions.TimeoutError("Timeout reading from socket")

    client = app.test_client()
    resp = client.get("/api/v1/redis-boom")
    _assert_503(resp, json=True)
    assert resp.json["message"].startswith("the job queue is not answering")
    assert "6379" not in resp.get_data(as_text=True)  # no internals
    _assert_503(client.get("/redis-boom"), json=False)


def test_outage_in_an_after_request_hook_is_503(app):
    from sqlalchemy.exc import OperationalError

    @app.get("/api/v1/ok")
    def ok():
        return {"ok": True}

    @app.after_request
    def broken(response):
        raise OperationalError("SELECT 1", {}, Exception("connection reset"))

    app.config["PROPAGATE_EXCEPTIONS"] = False  # as in production (TESTING re-raises)
    _assert_503(app.test_client().get("/api/v1/ok"), json=True)


@pytest.fixture
def db_url(pg_url):  # a connection killed under a request needs PostgreSQL (emptied per test)
    _empty_pg(pg_url)
    return pg_url


def test_connection_terminated_under_a_request_nothing_escapes(app):
    """The request's connection is terminated by the server mid-request (as
    ``pg_terminate_backend`` or a PostgreSQL restart does): the view's next query fails, the
    error handler and the teardown roll back on the dead connection, and the client still gets
    the 503 JSON (the test client re-raises anything that escapes Flask)."""
    from leaderboard.server.db import get_session

    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")

    @app.get("/api/v1/terminated")
    def terminated():
        session = get_session()
        pid = session.execute(text("SELECT pg_backend_pid()")).scalar()
        with admin.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
        session.execute(text("SELECT 1"))  # the connection is gone
        return {"unreachable": True}

    @app.get("/terminated-page")
    def terminated_page():
        return terminated()

    client = app.test_client()
    try:
        _assert_503(client.get("/api/v1/terminated"), json=True)
        _assert_503(client.get("/terminated-page"), json=False)
        assert client.get("/api/v1/benchmarks").status_code == 200  # the pool recovered
    finally:
        admin.dispose()


def test_failed_rollback_in_the_error_handler_does_not_escape(app, monkeypatch):
    """A session whose rollback and close both fail (the connection died) escapes neither the
    error handler nor the teardown: the 500 JSON goes out (the issue's gunicorn HTML 500)."""
    from sqlalchemy.exc import OperationalError

    from leaderboard.server.db import get_session

    def dead(*args, **kwargs):
        raise OperationalError("ROLLBACK", {}, Exception("server closed the connection"))

    @app.get("/api/v1/then-fails")
    def then_fails():
        session = get_session()
        monkeypatch.setattr(session, "rollback", dead)
        monkeypatch.setattr(session, "close", dead)
        raise RuntimeError("a bug, after which the session must be rolled back")

    resp = app.test_client().get("/api/v1/then-fails")
    assert resp.status_code == 500 and resp.json["error"] == "internal_error"


def test_teardown_close_failure_does_not_escape(app, monkeypatch):
    """The view answered; closing its session at teardown fails (the connection died just
    then): the answer still goes out."""
    from sqlalchemy.exc import OperationalError

    from leaderboard.server.db import get_session

    def dead(*args, **kwargs):
        raise OperationalError("ROLLBACK", {}, Exception("server closed the connection"))

    @app.get("/api/v1/answered")
    def answered():
        session = get_session()
        monkeypatch.setattr(session, "close", dead)
        return {"ok": True}

    resp = app.test_client().get("/api/v1/answered")
    assert resp.status_code == 200 and resp.json == {"ok": True}
