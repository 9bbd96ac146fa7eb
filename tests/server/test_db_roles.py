"""PostgreSQL: the application's role cannot truncate, alter, drop or rewrite the audit log, and
the whole app still works as that role (the deploy guide's role setup, run for real)."""
from __future__ import annotations

import secrets

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from leaderboard.server.cli import upgrade_database
from leaderboard.server.dbroles import grant_app_role
from leaderboard.server.models.access import APPEND_ONLY_MESSAGE
from tests.server.conftest import PG_ADMIN_URL, _pg_available, make_config


@pytest.fixture
def roles():
    """An owner and an application role, and a database the owner owns, migrated by it."""
    if not _pg_available():
        pytest.skip("PostgreSQL is not reachable at 127.0.0.1:5432")
    tag = secrets.token_hex(4)
    owner, app_role, name = f"lb_owner_{tag}", f"lb_app_{tag}", f"lb_roles_{tag}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE ROLE "{owner}" LOGIN'))
        conn.execute(text(f'CREATE ROLE "{app_role}" LOGIN'))
        conn.execute(text(f'CREATE DATABASE "{name}" OWNER "{owner}"'))
    base = PG_ADMIN_URL.rsplit("@", 1)[1].rsplit("/", 1)[0]
    urls = {who: f"postgresql+psycopg://{who}@{base}/{name}" for who in (owner, app_role)}
    upgrade_database(urls[owner])
    grant_app_role(urls[owner], app_role)
    yield urls[owner], urls[app_role]
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'DROP ROLE IF EXISTS "{app_role}"'))
        conn.execute(text(f'DROP ROLE IF EXISTS "{owner}"'))
    admin.dispose()


def _refused(url: str, sql: str, match: str) -> None:
    engine = create_engine(url)
    try:
        with pytest.raises(DBAPIError, match=match), engine.begin() as conn:
            conn.execute(text(sql))
    finally:
        engine.dispose()


def test_the_app_role_can_only_read_and_append_the_audit_log(roles):
    owner_url, app_url = roles
    engine = create_engine(app_url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO audit_event (at, actor_email, action, target, detail, ip) "
                          "VALUES (now(), '', 'test.event', '', '{}', '')"))
        assert conn.execute(text("SELECT count(*) FROM audit_event")).scalar_one() == 1
    engine.dispose()
    for sql in ("TRUNCATE audit_event", "UPDATE audit_event SET ip = 'x'",
                "DELETE FROM audit_event"):
        _refused(app_url, sql, "permission denied")
    for sql in ("ALTER TABLE audit_event DISABLE TRIGGER ALL",
                "ALTER TABLE audit_event RENAME TO gone", "DROP TABLE audit_event",
                "DROP TRIGGER audit_event_no_truncate ON audit_event"):
        _refused(app_url, sql, "must be (the )?owner")
    _refused(app_url, "CREATE TABLE sneaky (x int)", "permission denied")
    # the owner is refused too, by the triggers: TRUNCATE (0008), UPDATE and DELETE (0003)
    for sql in ("TRUNCATE audit_event", "DELETE FROM audit_event"):
        _refused(owner_url, sql, APPEND_ONLY_MESSAGE)
    engine = create_engine(owner_url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM audit_event")).scalar_one() == 1
    engine.dispose()


def test_the_whole_app_runs_as_the_app_role(roles, tmp_path, demo_packs, baseline_files):
    """Register, log in, form a team, submit and score, log out: every grant the code needs."""
    from leaderboard.server.services.benchmarks import import_pack
    from leaderboard.server.web import create_app
    from tests.server.conftest import AuthActions

    _, app_url = roles
    app = create_app(make_config(app_url, tmp_path))
    try:
        with app.app_context(), app.extensions["lb_db"].scope() as s:
            import_pack(s, demo_packs["syncred"], data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
        client = app.test_client()
        token = AuthActions(client).member()
        with baseline_files["dev"].open("rb") as fh:
            resp = client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                               data={"benchmark": "syncred", "split": "dev", "method_name": "m",
                                     "file": (fh, "p.jsonl")})
        assert resp.status_code == 202, resp.get_data(as_text=True)
        assert resp.json["status"] == "scored"
        assert client.get("/admin/audit").status_code == 403
        assert client.post("/logout").status_code == 302
        assert client.get("/team/").status_code == 302
    finally:
        app.extensions["lb_db"].dispose()
