"""Server test fixtures (flaskr's shape: ``app``, ``client``, ``runner``, ``auth``).

``db_url`` is parametrized over SQLite and PostgreSQL (127.0.0.1:5432, user postgres): one fresh
PostgreSQL database per test session (``lb_test_<random>``, dropped at the end), emptied before
each test; SQLite gets a new file per test. Redis tests use db 9 (flushed per test) and are
skipped only when no Redis answers. Set ``LB_TEST_NO_PG=1`` to run on SQLite alone.
"""
from __future__ import annotations

import os
import secrets
import threading
import uuid
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, text

from leaderboard.server.models import Base
from tests.redis_db import redis_test_url

PG_ADMIN_URL = os.environ.get("LB_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
REDIS_TEST_URL = os.environ.get("LB_TEST_REDIS") or redis_test_url(9)
LABEL_KEY = Fernet.generate_key().decode()


def _pg_available() -> bool:
    if os.environ.get("LB_TEST_NO_PG"):
        return False
    try:
        engine = create_engine(PG_ADMIN_URL)
        with engine.connect():
            pass
        engine.dispose()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def pg_url():
    """A fresh PostgreSQL database for this test session, with the schema created."""
    if not _pg_available():
        pytest.skip("PostgreSQL is not reachable at 127.0.0.1:5432")
    name = f"lb_test_{secrets.token_hex(4)}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    engine = create_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _empty_pg(url: str) -> None:
    engine = create_engine(url)
    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    with engine.begin() as conn:
        # the audit table refuses TRUNCATE (a trigger); the superuser may skip triggers
        conn.execute(text("SET LOCAL session_replication_role = replica"))
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A database URL with the current schema and no rows (per test)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'test.db'}"
        engine = create_engine(url)
        Base.metadata.create_all(engine)
        engine.dispose()
        return url
    url = request.getfixturevalue("pg_url")
    _empty_pg(url)
    return url


@pytest.fixture
def sqlite_url(tmp_path):
    url = f"sqlite:///{tmp_path / 'test.db'}"
    engine = create_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()
    return url


def make_config(db_url: str, tmp_path: Path, **extra) -> dict:
    cfg = {
        "TESTING": True, "DATABASE_URL": db_url, "DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": "test-" + uuid.uuid4().hex, "LABEL_KEYS": [LABEL_KEY],
        "REDIS_URL": None, "COOKIE_SECURE": "0", "WTF_CSRF_ENABLED": False,
        "RATELIMIT_ENABLED": False, "DAILY_QUOTA": 5, "MAX_UPLOAD_MB": 5,
    }
    cfg.update(extra)
    return cfg


@pytest.fixture
def app_config(db_url, tmp_path):
    """Overrides for `create_app`; tests may change it before asking for ``app``."""
    return make_config(db_url, tmp_path)


@pytest.fixture
def app(app_config):
    from leaderboard.server.services.scoring_service import clear_caches
    from leaderboard.server.web import create_app

    clear_caches()
    app = create_app(app_config)
    yield app
    app.extensions["lb_db"].dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def session(app):
    """A plain session on the app's database (the test commits).

    No app context stays pushed: requests would share its ``g`` (and its logged-in user)."""
    s = app.extensions["lb_db"].session()
    yield s
    s.close()


class AuthActions:
    """Register / log in / log out through the real pages, plus a team and an API token."""

    def __init__(self, client):
        self.client = client

    def register(self, email="ada@example.org", password="correct horse battery",
                 display_name="Ada"):
        return self.client.post("/register", data={"email": email, "password": password,
                                                   "display_name": display_name})

    def login(self, email="ada@example.org", password="correct horse battery"):
        return self.client.post("/login", data={"email": email, "password": password})

    def logout(self):
        return self.client.post("/logout")

    def team(self, name="Team Ada"):
        return self.client.post("/team/create", data={"name": name})

    def token(self, name="cli") -> str:
        import re
        resp = self.client.post("/team/tokens", data={"name": name})
        match = re.search(r'<code id="new-token">([^<]+)</code>', resp.get_data(as_text=True))
        assert match, resp.get_data(as_text=True)[:500]
        return match.group(1)

    def member(self, email="ada@example.org", team="Team Ada", *,
               agreements: bool = True) -> str:
        """Register, log in, create a team; returns an API token. With ``agreements`` the
        member also holds an approved agreement for every benchmark imported so far (what a
        team needs to submit to a held-out split, issue 21); pass False to test the refusal."""
        self.register(email=email, display_name=email.split("@")[0])
        self.team(team)
        if agreements:
            self.approve_all(email)
        return self.token()

    def approve_all(self, email="ada@example.org") -> None:
        """Sign and approve ``email``'s agreement for every imported benchmark
        (`tests.agreements.grant_all`)."""
        from sqlalchemy import select

        from leaderboard.server.models import User
        from tests.agreements import grant_all

        app = self.client.application
        with app.app_context(), app.extensions["lb_db"].scope() as s:
            grant_all(s, s.scalar(select(User).where(User.email == email)))


@pytest.fixture
def auth(client):
    return AuthActions(client)


@pytest.fixture(scope="session")
def demo_packs(tmp_path_factory):
    """Small demo packs (SynCred: one detection task; LOKI: several kinds), made once."""
    from leaderboard.demo import generate

    out = tmp_path_factory.mktemp("packs")
    return {key: generate(key, out, scale="small", seed=0) for key in ("syncred", "loki")}


@pytest.fixture
def imported(app, demo_packs):
    """The SynCred demo pack imported into the app; returns its key."""
    from leaderboard.server.services.benchmarks import import_pack

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            import_pack(s, demo_packs["syncred"], data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
    return "syncred"


@pytest.fixture(scope="session")
def baseline_files(demo_packs, tmp_path_factory):
    """Valid predictions (random baseline) for each split of the SynCred demo pack."""
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack

    out = tmp_path_factory.mktemp("preds")
    pack = load_pack(demo_packs["syncred"])
    files = {}
    for split in pack.splits:
        files[split] = out / f"{split}.jsonl"
        write_baseline(pack, split, "random", files[split], seed=1)
    return files


@pytest.fixture
def redis_url():
    from tests.redis_db import clean_redis_db

    with clean_redis_db(REDIS_TEST_URL) as url:
        yield url


@pytest.fixture
def live_server(app):
    """The app served by werkzeug in a thread (jobs inline); yields its base URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(10)
    server.server_close()
