"""The reconciler acts on what Redis shows, not on deadlines (issue 17): a committed submission
never handed to a queue, a queued job that is in no queue (flushed, lost mid-dequeue), a retry
whose scheduler is gone, a claimed submission whose lease lapsed (its worker died), lost judge
jobs. Each is re-queued once ``RECOVERY_GRACE_S`` has passed, long before any deadline, and a job
that is only waiting or running is left alone. A run that lost its claim stores nothing.

Real Redis (no worker runs: the jobs stay where the test puts them), SQLite and PostgreSQL.
"""
from __future__ import annotations

import io
import time
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from leaderboard.server.jobs import lease, queue
from leaderboard.server.models import Score, Submission, utcnow
from tests.server.conftest import make_config

GRACE = 10  # the default RECOVERY_GRACE_S


@pytest.fixture
def app_config(db_url, tmp_path, redis_url):
    return make_config(db_url, tmp_path, REDIS_URL=redis_url)


def _submit(client, token, path, method="m"):
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "dev", "method_name": method,
        "file": (io.BytesIO(path.read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202, resp.json
    return resp.json["id"]


def _sub(session, sid) -> Submission:
    session.expire_all()
    return session.get(Submission, sid)


def _pass(app, *, after_s: float = 0.0):
    from leaderboard.server.jobs.reconcile import reconcile
    with app.app_context():
        return reconcile(now=utcnow() + timedelta(seconds=after_s))


def _conn(app):
    with app.app_context():
        return queue.redis_connection()


def test_waiting_job_is_left_alone_a_lost_one_requeued_at_once(app, client, auth, imported,
                                                                baseline_files, session):
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    job = _sub(session, sid).job_id
    conn = _conn(app)
    assert conn.lrange("rq:queue:scoring", 0, -1) == [job.encode()]
    assert _pass(app, after_s=GRACE + 1).requeued == []  # waiting: nothing to do
    # a worker took it off the queue and died (or Redis died) before the job started: the job
    # record still says "queued", the job is in no queue
    assert conn.lmove("rq:queue:scoring", "rq:queue:scoring:intermediate") == job.encode()
    assert _pass(app).requeued == []  # within the grace a worker may be starting it
    report = _pass(app, after_s=GRACE + 1)  # long before QUEUE_DEADLINE_S (an hour)
    assert report.requeued == [sid]
    fresh = _sub(session, sid)
    assert fresh.status == "queued" and fresh.job_id != job
    assert conn.lrange("rq:queue:scoring", 0, -1) == [fresh.job_id.encode()]


def test_committed_but_never_enqueued_is_swept(app, client, auth, imported, baseline_files,
                                               session):
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    _conn(app).flushdb()
    session.execute(update(Submission).where(Submission.id == sid).values(
        status="received", job_id=None, queued_at=None, deadline_at=None))
    session.commit()  # as if the web worker died between the commit and the enqueue
    assert _pass(app).requeued == []
    assert _pass(app, after_s=GRACE + 1).requeued == [sid]
    assert _sub(session, sid).status == "queued"


def test_scheduled_retry_counts_until_it_is_overdue(app, client, auth, imported,
                                                    baseline_files, session):
    from rq.registry import ScheduledJobRegistry
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    job = _sub(session, sid).job_id
    conn = _conn(app)
    conn.lrem("rq:queue:scoring", 0, job)
    registry = ScheduledJobRegistry("scoring", connection=conn)
    conn.zadd(registry.key, {job: time.time() + 60})  # a retry due in a minute
    assert _pass(app, after_s=GRACE + 1).requeued == []
    # no scheduler moved it when it fell due: it will not run by itself
    assert _pass(app, after_s=60 + GRACE + 1).requeued == [sid]


def test_claimed_without_a_lease_is_requeued_a_lease_keeps_it(app, client, auth, imported,
                                                              baseline_files, session,
                                                              monkeypatch):
    monkeypatch.setattr(lease, "RENEW_S", 0.5)  # the test waits for one renewal
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    conn = _conn(app)
    conn.flushdb()
    session.execute(update(Submission).where(Submission.id == sid).values(
        status="scoring", attempts=1, started_at=utcnow(),
        deadline_at=utcnow() + timedelta(seconds=660)))
    session.commit()  # claimed by a worker
    with lease.hold(conn, "score", sid, "job-1"):
        assert _pass(app, after_s=GRACE + 100).requeued == []  # it runs: its lease says so
        conn.flushdb()  # even a flush does not stop a live job renewing its lease
        time.sleep(lease.RENEW_S + 0.5)
        assert conn.exists(lease.lease_key("score", sid))
        assert _pass(app, after_s=GRACE + 100).requeued == []
    assert not conn.exists(lease.lease_key("score", sid))  # released at the end
    assert _pass(app).requeued == []  # claimed just now: within the grace
    report = _pass(app, after_s=GRACE + 1)  # its worker died: no lease, not its deadline
    assert report.requeued == [sid]
    assert _sub(session, sid).status == "queued"


def test_redis_down_only_deadlines_count(app, client, auth, imported, baseline_files, session):
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    _conn(app).flushdb()  # the job is lost ...
    app.config["REDIS_URL"] = "redis://127.0.0.1:1/0"  # ... and Redis is not answering
    app.extensions.pop("lb_redis", None)
    try:
        assert _pass(app, after_s=GRACE + 1).requeued == []  # no evidence is not a lost job
        deadline = app.config["QUEUE_DEADLINE_S"]
        assert _pass(app, after_s=deadline + 1).requeued == [sid]  # the backstop
    finally:
        app.extensions.pop("lb_redis", None)


def test_a_run_that_lost_its_claim_stores_nothing(app, client, auth, imported, baseline_files,
                                                  session):
    from leaderboard.server.jobs.scoring import store_scores
    from leaderboard.server.services import scoring_service as svc
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    session.execute(update(Submission).where(Submission.id == sid).values(status="queued"))
    session.commit()
    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            first = svc.claim(s, sid, data_dir=app.config["DATA_DIR"], timeout_s=600)
        result = svc.compute(first, label_keys=app.config["LABEL_KEYS"])
        # its lease lapsed; the reconciler re-queued it and another run claimed it
        session.execute(update(Submission).where(Submission.id == sid).values(status="queued"))
        session.commit()
        with app.extensions["lb_db"].scope() as s:
            second = svc.claim(s, sid, data_dir=app.config["DATA_DIR"], timeout_s=600)
        assert (first.attempt, second.attempt) == (first.attempt, first.attempt + 1)
        before = session.scalar(select(func.count()).select_from(Score))
        assert store_scores(sid, "syncred", result, job="score", attempt=first.attempt) is None
        assert session.scalar(select(func.count()).select_from(Score)) == before
        assert _sub(session, sid).status == "scoring"
        assert store_scores(sid, "syncred", result, job="score", attempt=second.attempt) > 0
    assert _sub(session, sid).status == "scored"


def test_transient_failure_gives_the_attempt_back(app, client, auth, imported, baseline_files,
                                                  session):
    from leaderboard.server.services import scoring_service as svc
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    session.execute(update(Submission).where(Submission.id == sid).values(
        status="scoring", attempts=2))
    session.commit()
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        svc.back_to_queue(s, sid, deadline_s=60, attempt=1)  # not its claim: no change
    assert (_sub(session, sid).status, _sub(session, sid).attempts) == ("scoring", 2)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        svc.back_to_queue(s, sid, deadline_s=60, attempt=2)
    assert (_sub(session, sid).status, _sub(session, sid).attempts) == ("queued", 1)


def test_lost_judge_job_is_requeued_after_the_grace_not_the_deadline(
        app, client, auth, imported, baseline_files, session, monkeypatch):
    from leaderboard.server.jobs import judging as judge_jobs
    from leaderboard.server.jobs import reconcile as reconcile_mod
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    _conn(app).flushdb()
    session.execute(update(Submission).where(Submission.id == sid).values(status="scored"))
    session.commit()
    sub = _sub(session, sid)
    notes = {**(sub.notes_json or {}),
             "judging": {"state": "running", "judge": "rules@1", "reason": None}}
    session.execute(update(Submission).where(Submission.id == sid).values(notes_json=notes))
    session.commit()  # its judge worker died: no job in Redis, no lease
    runs = []
    monkeypatch.setattr(reconcile_mod, "enqueue_judging", lambda s, mark, at_front=False: runs.append(s))
    t0 = utcnow()
    with app.app_context():
        assert reconcile_mod.reconcile(now=t0).judging_requeued == []  # first sight
        with lease.hold(queue.redis_connection(), "judge", sid, "judge-job"):  # it runs
            assert reconcile_mod.reconcile(
                now=t0 + timedelta(seconds=GRACE + 1)).judging_requeued == []
        report = reconcile_mod.reconcile(now=t0 + timedelta(seconds=2 * GRACE + 2))
    assert report.judging_requeued == [sid] and runs == [sid]
    assert app.config["JUDGE_DEADLINE_S"] == 1800 and judge_jobs.JUDGE_QUEUE == "judge"


def test_lease_hold_renews_and_releases(app, monkeypatch):
    monkeypatch.setattr(lease, "TTL_S", 2)
    monkeypatch.setattr(lease, "RENEW_S", 0.5)
    conn = _conn(app)
    with lease.hold(conn, "score", 7, "owner-a"):
        time.sleep(2.5)  # longer than the TTL: renewed meanwhile
        assert lease.held(conn, "score", [7, 8]) == {7}
    assert lease.held(conn, "score", [7]) == set()
    with lease.hold(None, "score", 7, "inline"):  # no Redis: nothing to hold
        pass
