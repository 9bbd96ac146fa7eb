"""Fixtures for the boards tests: an app on SQLite and on PostgreSQL, and row factories.

The schema is built with ``alembic upgrade head`` once per database; each test then starts from
empty tables. Names are prefixed ``boards_`` so they never shadow the server-wide fixtures in
``tests/server/conftest.py``.
"""
from __future__ import annotations

import itertools
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, inspect, text

from leaderboard.server.models import Base, Benchmark, Score, Submission, Team
from leaderboard.server.models.transparency import LOG_TABLES

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)

#: metric declarations as `services.benchmarks.pack_meta` stores them
METRICS = {
    "accuracy": {"title": "Accuracy", "higher_is_better": True, "fmt": "pct", "lower": 0.0,
                 "upper": 1.0},
    "fpr": {"title": "FPR", "higher_is_better": False, "fmt": "pct", "lower": 0.0, "upper": 1.0},
    "ap": {"title": "AP", "higher_is_better": True, "fmt": "pct", "lower": 0.0, "upper": 1.0},
    "f_acc": {"title": "f.Acc", "higher_is_better": True, "fmt": "pct", "lower": 0.0,
              "upper": 1.0},
}
TASKS = [{"key": "detection", "kind": "detection", "modalities": ["image", "video"],
          "headline": "accuracy", "title": "Detection", "secondary": ["fpr"]},
         {"key": "judgment", "kind": "yesno", "modalities": ["image"], "headline": "accuracy",
          "title": "Judgment", "secondary": []}]


def _upgrade(url: str) -> None:
    from alembic import command
    from alembic.config import Config

    from leaderboard.server.config import REPO_ROOT
    cfg = Config()
    cfg.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    command.upgrade(cfg, "head")


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def boards_db_url(request, tmp_path_factory):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('boards-db') / 'lb.db'}"
        _upgrade(url)
        yield url
        return
    name = f"lb_test_boards_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    try:
        _upgrade(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def boards_app(boards_db_url, tmp_path):
    from leaderboard.server.db import get_db
    from leaderboard.server.web import create_app

    app = create_app({"DATABASE_URL": boards_db_url, "DATA_DIR": str(tmp_path / "data"),
                      "SECRET_KEY": "test", "TESTING": True, "WTF_CSRF_ENABLED": False,
                      "COOKIE_SECURE": "0", "REDIS_URL": "", "RATELIMIT_ENABLED": "0",
                      "LABEL_KEYS": Fernet.generate_key().decode()})
    db = get_db(app)
    with db.engine.begin() as conn:  # every test starts from empty tables
        present = set(inspect(conn).get_table_names())
        for table in reversed(Base.metadata.sorted_tables):
            if table.name in LOG_TABLES and table.name in present:
                # the transparency log refuses DELETE (its triggers): start it anew
                table.drop(conn)
                table.create(conn)
            elif table.name in present:
                conn.execute(table.delete())
    yield app
    db.dispose()


@pytest.fixture
def boards_client(boards_app):
    return boards_app.test_client()


@pytest.fixture
def boards_session(boards_app):
    from leaderboard.server.db import get_db
    session = get_db(boards_app).session()
    yield session
    session.close()


class Factory:
    """Small row factories; every call flushes so ids exist, the test commits."""

    def __init__(self, session):
        self.session = session
        self._n = itertools.count(1)

    def benchmark(self, key="demo", *, splits=("dev", "test"), revealed=False, tasks=TASKS,
                  metrics=METRICS, description="# Demo\n\nText.") -> Benchmark:
        b = Benchmark(key=key, title=f"{key.upper()} bench", version="1", pack_path="/nowhere",
                      meta_json={"tasks": tasks, "splits": list(splits), "metrics": metrics,
                                 "modalities": sorted({m for t in tasks
                                                       for m in t["modalities"]})},
                      description_md=description, private_revealed=revealed)
        self.session.add(b)
        self.session.flush()
        return b

    def team(self, name=None) -> Team:
        n = next(self._n)
        t = Team(name=name or f"team-{n}", invite_code=f"code-{n}-{uuid.uuid4().hex[:6]}")
        self.session.add(t)
        self.session.flush()
        return t

    def submission(self, bench, team=None, *, split="test", minutes=None, scores=None,
                   task="detection", slice_key="", status="scored", **kw) -> Submission:
        """``scores``: {part: {metric: value or (value, lo, hi)}} for ``task`` / ``slice_key``."""
        n = next(self._n)
        s = Submission(benchmark_id=bench.id, split=split, team_id=team.id if team else None,
                       method_name=kw.pop("method_name", f"method-{n}"), status=status,
                       created_at=T0 + timedelta(minutes=n if minutes is None else minutes),
                       **kw)
        self.session.add(s)
        self.session.flush()
        for part, metrics in (scores or {}).items():
            for metric, v in metrics.items():
                value, lo, hi = v if isinstance(v, tuple) else (v, None, None)
                self.score(s, part=part, task=task, metric=metric, value=value, ci_low=lo,
                           ci_high=hi, slice_key=slice_key)
        self.session.flush()
        return s

    def score(self, sub, *, part, task, metric, value, slice_key="", ci_low=None, ci_high=None,
              n=100, judge=None):
        sl = dict(p.split("=", 1) for p in slice_key.split(";") if p)
        self.session.add(Score(submission_id=sub.id, part=part, task=task, metric=metric,
                               slice_key=slice_key, slice_json=sl, value=value, ci_low=ci_low,
                               ci_high=ci_high, n=n, judge=judge))


@pytest.fixture
def make(boards_session):
    return Factory(boards_session)
