"""The reconciler recovers admin jobs whose worker died (issue 36, item 7): a robustness copy
build or a pack build left "building"/"running" without its lease is failed with the reason and
its partial files removed; one whose job was lost before it started is enqueued again; builds
whose lease is held are left alone. Real Redis (leases, the admin queue), SQLite and PostgreSQL.
"""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import redis
from rq import Queue
from sqlalchemy import select

from leaderboard.server.jobs import builds, lease, robustness
from leaderboard.server.jobs.reconcile import reconcile
from leaderboard.server.models import Benchmark, utcnow
from leaderboard.server.models.robustness import RobustnessBuild


@pytest.fixture
def app_config(app_config, redis_url):
    return {**app_config, "REDIS_URL": redis_url}


def _pack_build(data: Path, name: str, state: str) -> tuple[str, Path]:
    build_id = f"syncred-20261205T000000-{name}"
    out = data / "built" / build_id
    (out / "splits" / "dev").mkdir(parents=True)
    (out / "splits" / "dev" / "items.jsonl").write_text('{"id": "half"}\n')
    now = utcnow().isoformat()
    builds.write_status(builds.status_path(data, build_id), {
        "id": build_id, "benchmark": "syncred", "source": "/nowhere", "out": str(out),
        "options": {}, "actor_id": None, "state": state, "done": 3, "total": 10,
        "message": "writing", "error": None, "report": None, "imported": None,
        "created_at": now, "updated_at": now, "finished_at": None})
    return build_id, out


def test_dead_builds_failed_and_cleaned_lost_ones_requeued_live_ones_kept(app, imported,
                                                                          session, redis_url):
    data = Path(app.config["DATA_DIR"])
    bench = session.scalar(select(Benchmark))
    rows = {name: RobustnessBuild(benchmark_id=bench.id, split="dev", pack_version="1",
                                  cache_key=key, status=status, started_at=utcnow())
            for name, key, status in (("dead", "k-dead", "building"),
                                      ("live", "k-live", "building"), ("lost", "", "queued"))}
    session.add_all(rows.values())
    session.commit()
    ids = {name: row.id for name, row in rows.items()}
    root = data / "robustness" / "syncred"
    partial, live_partial = root / ".k-dead.tmp-0123abcd", root / ".k-live.tmp-4567ef01"
    for folder in (partial, live_partial, root / "k-other"):
        folder.mkdir(parents=True)
        (folder / "a.jpg").write_bytes(b"\xff\xd8")
    dead_pack, dead_out = _pack_build(data, "aaaaaa", "running")
    live_pack, live_out = _pack_build(data, "bbbbbb", "running")

    conn = redis.Redis.from_url(redis_url)
    t0 = utcnow()
    with lease.hold(conn, robustness.LEASE_KIND, ids["live"], "worker-1"), \
            lease.hold(conn, builds.LEASE_KIND, live_pack, "worker-1"):
        with app.app_context():
            first = reconcile(now=t0)
            # one missing lease is not enough (Redis may just have restarted empty)
            assert first.builds_failed == [] and first.builds_requeued == []
            second = reconcile(now=t0 + timedelta(seconds=lease.TTL_S + 1))
    conn.close()

    assert second.builds_failed == [f"robustness-build:{ids['dead']}", f"pack-build:{dead_pack}"]
    assert second.builds_requeued == [f"robustness-build:{ids['lost']}"]
    assert "builds_failed=2" in second.log_line()
    session.expire_all()
    dead = session.get(RobustnessBuild, ids["dead"])
    assert dead.status == "failed" and "worker stopped during the build" in dead.error
    assert dead.finished_at is not None
    assert session.get(RobustnessBuild, ids["live"]).status == "building"
    assert session.get(RobustnessBuild, ids["lost"]).status == "queued"
    assert not partial.exists()  # the dead build's temporary folder
    assert live_partial.exists() and (root / "k-other" / "a.jpg").exists()
    queued = Queue(robustness.BUILD_QUEUE, connection=redis.Redis.from_url(redis_url)).job_ids
    assert f"robustness-build-{ids['lost']}" in queued

    status = builds.read_status(data, dead_pack)
    assert status["state"] == "failed" and "worker stopped" in status["error"]
    assert not dead_out.exists()
    assert builds.read_status(data, live_pack)["state"] == "running" and live_out.exists()
