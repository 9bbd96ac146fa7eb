"""An agreement revoked while a held-out submission waits in the queue stops its scoring
(issue 36, item 6): the scoring job asks the gate again when it starts. The submission ends
"failed" with "agreement revoked on <date>", its daily quota and its challenge phase's cap are
given back, and the team reads a notice. SQLite and PostgreSQL, a real Redis queue (so the upload
waits instead of being scored inline), the real scoring job.
"""
from __future__ import annotations

import io
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from leaderboard.server.services import decisions
from leaderboard.server.access.gate import latest_request
from leaderboard.server.models import Benchmark, QuotaUsage, Score, Submission, User, utcnow
from leaderboard.server.models.challenges import (
    Challenge,
    ChallengeEntrant,
    ChallengePhase,
    PhaseDayUsage,
    PhaseUsage,
)
from leaderboard.server.models.notices import Notice


@pytest.fixture
def app_config(app_config, redis_url):
    return {**app_config, "REDIS_URL": redis_url}


def _phase_on_test(session, team_id: int) -> None:
    """A challenge phase on the test split that the team has entered (a phase binds only the
    submissions made to its challenge, issue 33)."""
    now = utcnow()
    bench = session.scalar(select(Benchmark))
    challenge = Challenge(key="capped", benchmark_id=bench.id, title="Capped", phases=[
        ChallengePhase(position=0, name="Test", split="test", part="private",
                       opens_at=now - timedelta(hours=1), closes_at=now + timedelta(hours=1),
                       max_submissions=3)])
    session.add(challenge)
    session.flush()
    session.add(ChallengeEntrant(challenge_id=challenge.id, team_id=team_id))
    session.commit()


def _submit(client, token, path, method):
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "test", "method_name": method, "challenge": "capped",
        "file": (io.BytesIO(path.read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202, resp.get_json()
    assert resp.get_json()["status"] == "queued"
    return resp.get_json()["id"]


def test_revoked_while_queued_is_refused_refunded_and_told(app, client, auth, imported, session,
                                                          baseline_files):
    from leaderboard.server.jobs.scoring import score_submission

    token = auth.member()
    _phase_on_test(session, session.scalar(select(User.team_id).where(
        User.email == "ada@example.org")))
    kept = _submit(client, token, baseline_files["test"], "kept")
    with app.app_context():
        assert score_submission(kept)["status"] == "scored"  # entitled: scored as usual
    sid = _submit(client, token, baseline_files["test"], "waiting")
    assert session.scalar(select(PhaseUsage.count)) == 2
    assert session.scalar(select(PhaseDayUsage.count)) == 2  # the phase's day, not the board's
    assert session.scalar(select(QuotaUsage.count)) is None

    ada = session.scalar(select(User).where(User.email == "ada@example.org"))
    bench = session.scalar(select(Benchmark))
    admin = session.scalar(select(User).where(User.is_admin.is_(True)))
    req = decisions.revoke(session, admin, latest_request(session, ada.id, bench.id),
                           reason="terms breached")
    session.commit()
    when = f"{req.decided_at:%Y-%m-%d %H:%M} UTC"

    with app.app_context():
        assert score_submission(sid)["status"] == "refused"
    session.expire_all()
    sub = session.get(Submission, sid)
    assert sub.status == "failed"
    assert f"agreement revoked on {when}: terms breached" in sub.failure_reason
    assert sub.failure_detail["reason"] == "access_denied"
    assert not sub.counts_toward_quota
    assert session.scalar(select(func.count()).select_from(Score)
                          .where(Score.submission_id == sid)) == 0
    # the refused one's units are back; the scored one's stay
    assert session.scalar(select(PhaseUsage.count)) == 1
    assert session.scalar(select(PhaseDayUsage.count)) == 1
    notice = session.scalar(select(Notice).where(Notice.subject == f"submission:{sid}"))
    assert notice.team_id == ada.team_id and f"agreement revoked on {when}" in notice.message
    status = client.get(f"/api/v1/submissions/{sid}",
                        headers={"Authorization": f"Bearer {token}"}).get_json()
    assert status["status"] == "failed" and "agreement revoked on" in status["failure_reason"]

    # an admin rescore of the submission scored while entitled is not refused
    with app.app_context():
        from leaderboard.server.services.scoring_service import request_rescore
        with app.extensions["lb_db"].scope() as s:
            request_rescore(s, s.get(Submission, kept), deadline_s=600)
        assert score_submission(kept)["status"] == "scored"
