"""With Redis, a committed message is an RQ job on the ``mail`` queue that a real worker
process (``leaderboard worker --burst``, default queues) sends; a lost enqueue is found by the
reconciler's mail pass."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from sqlalchemy import select

from leaderboard.server.jobs import mail
from leaderboard.server.models.mail import Outbox
from tests.server.conftest import make_config

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def app_config(db_url, tmp_path, redis_url, smtp):
    return make_config(db_url, tmp_path, REDIS_URL=redis_url, **smtp.config())


def _worker(app, smtp) -> subprocess.CompletedProcess:
    cfg = app.config
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LB_", "SMTP_"))}
    env.update({"DATABASE_URL": cfg["DATABASE_URL"], "REDIS_URL": cfg["REDIS_URL"],
                "DATA_DIR": cfg["DATA_DIR"], "LABEL_KEYS": ",".join(cfg["LABEL_KEYS"]),
                "SECRET_KEY": cfg["SECRET_KEY"], "PYTHONPATH": str(REPO)},
               **{k: str(v) for k, v in smtp.config().items()})
    return subprocess.run([sys.executable, "-m", "leaderboard", "worker", "--burst"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)


def test_a_worker_sends_the_mail_job_and_the_reconciler_finds_lost_ones(app, auth, smtp,
                                                                        session, redis_url):
    auth.register()
    conn = redis.Redis.from_url(redis_url)
    assert len(conn.lrange("rq:queue:mail", 0, -1)) == 1 and not smtp.messages
    conn.delete("rq:queue:mail")  # a lost enqueue (Redis flushed)
    with app.app_context():
        assert mail.reconcile_mail()["queued"] == 1
    proc = _worker(app, smtp)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [m["To"] for m in smtp.messages] == ["ada@example.org"]
    session.expire_all()
    assert session.scalar(select(Outbox.status)) == "sent"
