"""The judge queue with Redis and a real RQ worker process: scoring enqueues a judge job on the
``judge`` queue, and ``python -m leaderboard worker --queues scoring,judge`` runs both."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sqlalchemy import select

from leaderboard.core.baselines import baseline_rows
from leaderboard.core.packs import load_pack
from leaderboard.server.config import REPO_ROOT
from leaderboard.server.models import Score, Submission
from tests.server.judges.conftest import import_key, submit, write_rows
from tests.redis_db import redis_test_url

REDIS_URL = os.environ.get("LB_TEST_REDIS_JUDGE") or redis_test_url(13)


@pytest.fixture
def app(sqlite_url, tmp_path):
    import redis

    from leaderboard.server.services.scoring_service import clear_caches
    from leaderboard.server.web import create_app
    from tests.server.conftest import make_config

    conn = redis.Redis.from_url(REDIS_URL)
    try:
        conn.ping()
    except redis.exceptions.ConnectionError:
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    conn.flushdb()
    clear_caches()
    app = create_app(make_config(sqlite_url, tmp_path, REDIS_URL=REDIS_URL))
    yield app
    app.extensions["lb_db"].dispose()
    conn.flushdb()
    conn.close()


def _worker(app, queues: str) -> subprocess.CompletedProcess:
    cfg = app.config
    env = {**os.environ, "DATABASE_URL": cfg["DATABASE_URL"], "REDIS_URL": cfg["REDIS_URL"],
           "DATA_DIR": cfg["DATA_DIR"], "LABEL_KEYS": ",".join(cfg["LABEL_KEYS"]),
           "SECRET_KEY": cfg["SECRET_KEY"], "DEFAULT_JUDGE": "rules"}
    return subprocess.run([sys.executable, "-m", "leaderboard", "worker", "--queues", queues,
                           "--burst"], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_worker_runs_scoring_then_judging(app, packs, tmp_path):
    key = import_key(app, packs["loki"])
    path = tmp_path / "p.jsonl"
    write_rows(path, baseline_rows(load_pack(packs["loki"]), "dev", "random", seed=1))
    sid = submit(app, key, "dev", path)
    db = app.extensions["lb_db"]
    proc = _worker(app, "scoring")  # judge jobs wait on their own queue
    assert proc.returncode == 0, proc.stderr[-2000:]
    with db.scope() as s:
        sub = s.get(Submission, sid)
        assert sub.status == "scored" and sub.notes_json["judging"]["state"] == "queued"
        assert not s.scalars(select(Score).where(Score.submission_id == sid,
                                                 Score.metric == "explanation_score")).all()
    proc = _worker(app, "judge")
    assert proc.returncode == 0, proc.stderr[-2000:]
    with db.scope() as s:
        sub = s.get(Submission, sid)
        assert sub.notes_json["judging"]["state"] == "done", proc.stderr[-2000:]
        judges = set(s.scalars(select(Score.judge).where(Score.submission_id == sid,
                                                         Score.metric == "explanation_score")))
        assert judges == {"rules@3"}
