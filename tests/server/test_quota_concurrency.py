"""Quotas under concurrent submissions: exactly the quota is accepted, on both databases."""
from __future__ import annotations

import io
import threading

from sqlalchemy import func, select

from leaderboard.server.models import QuotaUsage, Submission


def test_concurrent_uploads_take_exactly_the_quota(app, auth, imported, session, baseline_files):
    app.config["DEV_DAILY_QUOTA"] = 3
    token = auth.member()
    n = 10
    barrier = threading.Barrier(n)
    codes: list[int] = []
    lock = threading.Lock()

    valid = baseline_files["dev"].read_bytes()  # invalid files would be refunded (issue 12)

    def worker():
        client = app.test_client()
        barrier.wait()
        resp = client.post("/api/v1/submissions", data={
            "benchmark": "syncred", "split": "dev", "method_name": "race",
            "file": (io.BytesIO(valid), "p.jsonl")},
            headers={"Authorization": f"Bearer {token}"})
        with lock:
            codes.append(resp.status_code)

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(codes) == [202] * 3 + [429] * 7
    assert session.scalar(select(func.count()).select_from(Submission)) == 3
    assert session.scalar(select(QuotaUsage.count)) == 3


def test_concurrent_uploads_take_exactly_the_phase_cap(app, auth, imported, session,
                                                       baseline_files):
    """Issue 24: 20 parallel uploads to a phase capped at 5 accept exactly 5 (the cap is taken
    atomically with the phase's daily unit); a refund gives both units back to the phase."""
    from datetime import timedelta

    from leaderboard.server.models import Benchmark, User, utcnow
    from leaderboard.server.models.challenges import (
        Challenge,
        ChallengeEntrant,
        ChallengePhase,
        PhaseDayUsage,
        PhaseUsage,
    )
    from leaderboard.server.services.submissions import refund_quota

    token = auth.member()
    now = utcnow()
    bench = session.scalar(select(Benchmark))
    ch = Challenge(key="capped", benchmark_id=bench.id, title="Capped", phases=[
        ChallengePhase(position=0, name="Dev", split="dev", part="all",
                       opens_at=now - timedelta(hours=1), closes_at=now + timedelta(hours=1),
                       max_submissions=5)])
    session.add(ch)
    session.flush()
    team_id = session.scalar(select(User.team_id).where(User.email == "ada@example.org"))
    session.add(ChallengeEntrant(challenge_id=ch.id, team_id=team_id))
    session.commit()
    n = 20
    barrier = threading.Barrier(n)
    codes: list[int] = []
    lock = threading.Lock()
    valid = baseline_files["dev"].read_bytes()

    def worker():
        client = app.test_client()
        barrier.wait()
        resp = client.post("/api/v1/submissions", data={
            "benchmark": "syncred", "split": "dev", "method_name": "race", "challenge": "capped",
            "file": (io.BytesIO(valid), "p.jsonl")},
            headers={"Authorization": f"Bearer {token}"})
        with lock:
            codes.append(resp.status_code)

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(codes) == [202] * 5 + [429] * 15
    subs = session.scalars(select(Submission)).all()
    assert len(subs) == 5 and all(s.phase_id is not None for s in subs)
    assert session.scalar(select(PhaseUsage.count)) == 5
    assert session.scalar(select(PhaseDayUsage.count)) == 5  # the refused ones took no day unit
    assert session.scalar(select(QuotaUsage.count)) is None  # the standing board's: untouched
    refund_quota(session, subs[0])
    session.commit()
    assert session.scalar(select(PhaseUsage.count)) == 4
    assert session.scalar(select(PhaseDayUsage.count)) == 4
