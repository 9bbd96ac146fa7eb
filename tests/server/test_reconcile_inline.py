"""Reconciler and job idempotency with inline jobs (no Redis)."""
from __future__ import annotations

import io
from datetime import timedelta

from sqlalchemy import func, select, update

from leaderboard.server.models import QuotaUsage, Score, Submission, utcnow


def _submit(client, token, path):
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "dev", "method_name": "m",
        "file": (io.BytesIO(path.read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202, resp.json
    return resp.json["id"]


def _stick(session, sid, *, attempts):
    """Pretend the worker died while scoring."""
    session.execute(update(Submission).where(Submission.id == sid).values(
        status="scoring", attempts=attempts, deadline_at=utcnow() - timedelta(seconds=5)))
    session.commit()


def test_killed_worker_is_requeued_then_failed_after_max_attempts(
        app, client, auth, imported, baseline_files, session):
    from leaderboard.server.jobs.reconcile import reconcile
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    _stick(session, sid, attempts=1)
    with app.app_context():
        report = reconcile()
    assert report.requeued == [sid]
    session.expire_all()
    sub = session.get(Submission, sid)
    assert sub.status == "scored" and sub.attempts == 2

    sid2 = _submit(client, token, baseline_files["dev"])
    _stick(session, sid2, attempts=app.config["MAX_ATTEMPTS"])
    with app.app_context():
        assert reconcile().failed == [sid2]
    session.expire_all()
    sub = session.get(Submission, sid2)
    assert sub.status == "failed" and "platform error" in sub.failure_reason
    assert "does not count toward your quota" in sub.failure_reason
    assert sub.counts_toward_quota is False
    assert session.scalar(select(QuotaUsage.count)) == 1  # refunded
    with app.app_context():
        assert str(reconcile()) == "requeued=0 failed=0 still_waiting=0"


def test_job_is_idempotent_and_rescore_replaces_rows(app, client, auth, imported,
                                                      baseline_files, session):
    from leaderboard.server.jobs import scoring as jobs
    from leaderboard.server.services.scoring_service import request_rescore
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    count = session.scalar(select(func.count()).select_from(Score))
    with app.app_context():
        assert jobs.score_submission(sid)["status"] == "skipped"
        sub = session.get(Submission, sid)
        request_rescore(session, sub, deadline_s=60)
        session.commit()
        assert jobs.score_submission(sid)["status"] == "scored"
    assert session.scalar(select(func.count()).select_from(Score)) == count


def test_platform_error_is_refunded_and_explained(app, client, auth, imported, baseline_files,
                                                   session):
    token = auth.member()
    app.config["LABEL_KEYS"] = ["MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI="]  # wrong key
    sid = _submit(client, token, baseline_files["dev"])
    session.expire_all()
    sub = session.get(Submission, sid)
    assert sub.status == "failed" and sub.failure_reason.startswith("platform error")
    assert session.scalar(select(QuotaUsage.count)) == 0


def test_unstartable_job_fails_instead_of_looping(app, client, auth, imported, baseline_files,
                                                  session):
    from sqlalchemy import delete

    from leaderboard.server.models import LabelSet
    token = auth.member()
    session.execute(delete(LabelSet).where(LabelSet.split == "dev"))
    session.commit()
    sid = _submit(client, token, baseline_files["dev"])
    session.expire_all()
    sub = session.get(Submission, sid)
    assert sub.status == "failed" and "could not start" in sub.failure_reason


def test_transient_error_requeues_and_raises(app, client, auth, imported, baseline_files,
                                             session, monkeypatch):
    import pytest
    from sqlalchemy.exc import OperationalError

    from leaderboard.server.jobs import scoring as jobs
    from leaderboard.server.services import scoring_service
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    session.execute(update(Submission).where(Submission.id == sid).values(status="queued"))
    session.commit()

    def flaky(*a, **k):
        raise OperationalError("SELECT 1", {}, Exception("server closed the connection"))

    monkeypatch.setattr(scoring_service, "compute", flaky)
    with app.app_context(), pytest.raises(OperationalError):
        jobs.score_submission(sid)
    session.expire_all()
    sub = session.get(Submission, sid)
    assert sub.status == "queued" and sub.deadline_at is not None  # waits for its retry


def test_only_one_job_claims_a_submission(app, client, auth, imported, baseline_files, session):
    from leaderboard.server.services.scoring_service import claim
    token = auth.member()
    sid = _submit(client, token, baseline_files["dev"])
    session.execute(update(Submission).where(Submission.id == sid).values(status="queued"))
    session.commit()
    kw = {"data_dir": app.config["DATA_DIR"], "timeout_s": 10}
    assert claim(session, sid, **kw) is not None
    assert claim(session, sid, **kw) is None
    session.rollback()
