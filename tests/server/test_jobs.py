"""Jobs, queue and reconciler: a real RQ worker process, Redis flushed under us, workers killed
mid-job, attempts exhausted. No accepted submission is ever lost."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from leaderboard.server.config import REPO_ROOT
from leaderboard.server.models import Score, Submission, utcnow
from tests.server.conftest import make_config


def _submit(client, token, path, split="dev"):
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": split, "method_name": "m",
        "file": (io.BytesIO(path.read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202, resp.json
    return resp.json["id"]


def _status(session, sid):
    session.expire_all()
    return session.get(Submission, sid)


def _run_worker(app) -> subprocess.CompletedProcess:
    cfg = app.config
    env = {**os.environ, "DATABASE_URL": cfg["DATABASE_URL"], "REDIS_URL": cfg["REDIS_URL"],
           "DATA_DIR": cfg["DATA_DIR"], "LABEL_KEYS": ",".join(cfg["LABEL_KEYS"]),
           "SECRET_KEY": cfg["SECRET_KEY"]}
    return subprocess.run([sys.executable, "-m", "leaderboard", "worker", "--queues",
                           "scoring", "--burst"], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def app_config(db_url, tmp_path, redis_url):
    return make_config(db_url, tmp_path, REDIS_URL=redis_url)


def test_real_worker_scores_and_reconciler_recovers_flushed_redis(
        app, client, auth, imported, baseline_files, session, redis_url):
    token = auth.member()
    sid = _submit(client, token, baseline_files["test"], split="test")
    assert _status(session, sid).status == "queued"  # written before the enqueue
    proc = _run_worker(app)
    assert proc.returncode == 0, proc.stderr[-2000:]
    sub = _status(session, sid)
    assert sub.status == "scored", (sub.failure_reason, proc.stderr[-2000:])
    assert sub.attempts == 1
    assert session.scalar(select(func.count()).select_from(Score)
                          .where(Score.submission_id == sid)) > 0

    # Redis is flushed while a second submission waits: the reconciler re-queues it.
    sid2 = _submit(client, token, baseline_files["dev"])
    app.extensions["lb_redis"].flushdb()
    from leaderboard.server.jobs.reconcile import reconcile
    with app.app_context():
        assert reconcile().requeued == []  # not past its deadline yet
        report = reconcile(now=utcnow() + timedelta(seconds=app.config["QUEUE_DEADLINE_S"] + 1))
    assert report.requeued == [sid2]
    assert _run_worker(app).returncode == 0
    assert _status(session, sid2).status == "scored"


def test_backlog_is_not_duplicated(app, client, auth, imported, baseline_files, session):
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    from leaderboard.server.jobs.reconcile import reconcile
    with app.app_context():
        later = utcnow() + timedelta(seconds=app.config["QUEUE_DEADLINE_S"] + 1)
        report = reconcile(now=later)
    assert report.extended == [sid] and report.requeued == []
    assert len(app.extensions["lb_redis"].lrange("rq:queue:scoring", 0, -1)) == 1


def test_unreachable_redis_loses_nothing(imported, baseline_files, app, client, auth, session):
    token = auth.member()
    good = app.config["REDIS_URL"]
    app.config["REDIS_URL"] = "redis://127.0.0.1:1/0"
    app.extensions.pop("lb_redis", None)
    sid = _submit(client, token, baseline_files["dev"])  # accepted although Redis is down
    assert _status(session, sid).status == "queued"
    app.config["REDIS_URL"] = good
    app.extensions.pop("lb_redis", None)
    session.execute(update(Submission).values(deadline_at=utcnow() - timedelta(seconds=1)))
    session.commit()
    from leaderboard.server.jobs.reconcile import reconcile
    with app.app_context():
        assert reconcile().requeued == [sid]
    assert _run_worker(app).returncode == 0
    assert _status(session, sid).status == "scored"
