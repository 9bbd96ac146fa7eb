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
