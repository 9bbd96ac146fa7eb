"""An attempt cut by a database outage is given back (issue 36, item 7): only the job's own
failures count toward ``MAX_ATTEMPTS``. The chaos run had two kills of a job's database
connection take a submission that never failed by itself to attempt 3 of 3.

Real PostgreSQL: the job's own connection is killed with ``pg_terminate_backend`` while it
writes the scores (twice), then the job runs as RQ's retry or the reconciler would run it again.
Real Redis for the queue and the leases.
"""
from __future__ import annotations

import io
import time
from datetime import timedelta

import pytest
from sqlalchemy import create_engine, event, text
from sqlalchemy.exc import OperationalError

from leaderboard.server.jobs.reconcile import reconcile
from leaderboard.server.jobs.scoring import score_submission
from leaderboard.server.models import Submission, utcnow
from tests.server.conftest import _empty_pg, make_config


@pytest.fixture
def app_config(pg_url, tmp_path, redis_url):
    _empty_pg(pg_url)
    return make_config(pg_url, tmp_path, REDIS_URL=redis_url, MAX_ATTEMPTS=3)


def test_connection_kills_give_their_attempts_back(app, client, auth, imported, session,
                                                   baseline_files, pg_url):
    token = auth.member()
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "test", "method_name": "outage",
        "file": (io.BytesIO(baseline_files["test"].read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202, resp.get_json()
    sid = resp.get_json()["id"]

    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    kills: list[int] = []

    def kill_while_writing_scores(conn, cursor, statement, params, context, executemany):
        if len(kills) < 2 and statement.startswith("INSERT INTO score "):
            pid = conn.connection.dbapi_connection.info.backend_pid
            with admin.connect() as a:
                a.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            kills.append(pid)

    engine = app.extensions["lb_db"].engine
    event.listen(engine, "before_cursor_execute", kill_while_writing_scores)
    try:
        with app.app_context():
            for cut in range(2):
                with pytest.raises(OperationalError):
                    score_submission(sid)  # RQ would retry it; the reconciler backs that up
                session.expire_all()
                sub = session.get(Submission, sid)
                assert (sub.status, sub.attempts) == ("queued", 0), cut
                reconcile(now=utcnow() + timedelta(seconds=app.config["RECOVERY_GRACE_S"] + 1))
            assert score_submission(sid)["status"] == "scored"
    finally:
        event.remove(engine, "before_cursor_execute", kill_while_writing_scores)
        admin.dispose()
    assert len(kills) == 2
    session.expire_all()
    sub = session.get(Submission, sid)
    assert sub.status == "scored" and sub.attempts == 1  # the two cut attempts were given back


def test_an_attempt_noted_in_redis_is_given_back_by_the_reconciler(app, client, auth, imported,
                                                                  session, baseline_files,
                                                                  redis_url):
    """When the database could not even take the give-back, the job notes the attempt in Redis;
    the reconciler gives it back as it re-queues the row (and uses the note once)."""
    import redis

    from leaderboard.server.jobs.scoring import give_back_key

    token = auth.member()
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "test", "method_name": "noted",
        "file": (io.BytesIO(baseline_files["test"].read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"})
    sid = resp.get_json()["id"]
    sub = session.get(Submission, sid)
    sub.status, sub.attempts, sub.started_at = "scoring", 3, utcnow() - timedelta(minutes=5)
    session.commit()
    conn = redis.Redis.from_url(redis_url)
    conn.set(give_back_key(sid), 3)
    with app.app_context():
        report = reconcile()
    assert report.requeued == [sid] and report.failed == []
    session.expire_all()
    assert session.get(Submission, sid).attempts == 2 and not conn.exists(give_back_key(sid))
    conn.close()


@pytest.fixture
def own_redis():
    """A redis-server of this test's own, which it restarts (empty) mid-test."""
    import shutil

    from tests.production.services import RedisServer

    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed")
    server = RedisServer(exe)
    yield server
    server.close()


def test_a_redis_restart_costs_a_running_job_no_attempt(app_config, own_redis, tmp_path,
                                                        baseline_files, demo_packs):
    """Redis restarts empty while a job runs: its lease is gone until the job writes it again
    (within 5 s). The reconciler does not take that for a dead worker (which re-queued the job
    and cost it an attempt); a row claimed after the restart with no lease is re-queued."""
    from leaderboard.server.services.benchmarks import import_pack
    from leaderboard.server.web import create_app
    from tests.server.conftest import AuthActions

    app = create_app({**app_config, "REDIS_URL": own_redis.url()})
    try:
        with app.app_context(), app.extensions["lb_db"].scope() as s:
            import_pack(s, demo_packs["syncred"], data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
        client = app.test_client()
        token = AuthActions(client).member()
        ids = []
        for method in ("running", "orphan"):
            resp = client.post("/api/v1/submissions", data={
                "benchmark": "syncred", "split": "dev", "method_name": method,
                "file": (io.BytesIO(baseline_files["dev"].read_bytes()), "p.jsonl")},
                headers={"Authorization": f"Bearer {token}"})
            ids.append(resp.get_json()["id"])
        db = app.extensions["lb_db"]
        with db.scope() as s:  # claimed a minute ago, its lease lost with Redis
            sub = s.get(Submission, ids[0])
            sub.status, sub.attempts, sub.started_at = "scoring", 1, utcnow() - timedelta(minutes=1)
        own_redis.kill()
        own_redis.start()
        time.sleep(1.1)  # Redis tells its uptime in whole seconds
        with db.scope() as s:  # claimed after the restart and never leased: its worker died
            sub = s.get(Submission, ids[1])
            sub.status, sub.attempts, sub.started_at = "scoring", 1, utcnow()
        with app.app_context():
            report = reconcile(now=utcnow() + timedelta(seconds=60))
        assert report.requeued == [ids[1]]
        with db.scope() as s:
            assert (s.get(Submission, ids[0]).status, s.get(Submission, ids[0]).attempts) == \
                ("scoring", 1)
    finally:
        conn = app.extensions.get("lb_redis")
        if conn is not None:
            conn.close()
        app.extensions["lb_db"].dispose()
