"""Server commands through the real entry point (``python -m leaderboard``'s group)."""
from __future__ import annotations

from sqlalchemy import select

from leaderboard.server.cli import server
from leaderboard.server.models import Benchmark, LabelSet, Submission, User


def test_import_admin_rotate_reconcile(runner, session, demo_packs, app):
    res = runner.invoke(server, ["import-pack", str(demo_packs["syncred"])])
    assert res.exit_code == 0, res.output
    assert "imported syncred" in res.output
    res = runner.invoke(server, ["create-admin", "--email", "root@example.org"],
                        env={"LB_ADMIN_PASSWORD": "a very long password"})
    assert res.exit_code == 0, res.output
    assert session.scalar(select(User.is_admin)) is True
    res = runner.invoke(server, ["create-admin", "--email", "bad"],
                        env={"LB_ADMIN_PASSWORD": "a very long password"})
    assert res.exit_code == 2 and "email" in res.output
    res = runner.invoke(server, ["rotate-label-keys"])
    assert res.exit_code == 0 and "re-encrypted 2" in res.output
    res = runner.invoke(server, ["reconcile"])
    assert res.exit_code == 0 and "requeued=0" in res.output
    res = runner.invoke(server, ["import-pack", str(demo_packs["syncred"] / "splits")])
    assert res.exit_code == 2 and "benchmark.yaml is missing" in res.output
    res = runner.invoke(server, ["worker"])
    assert res.exit_code == 2 and "REDIS_URL" in res.output


def test_seed_demo_scores_baselines(runner, session, app):
    res = runner.invoke(server, ["seed-demo", "--only", "syncred"])
    assert res.exit_code == 0, res.output
    subs = session.scalars(select(Submission)).all()
    assert len(subs) == 4 and all(s.is_baseline for s in subs)
    assert {s.baseline_kind for s in subs} == {"random", "all-fake"}
    assert all(s.status == "scored" for s in subs), [s.failure_reason for s in subs]
    assert all(not s.counts_toward_quota and s.team_id is None for s in subs)
    assert session.scalar(select(Benchmark.key)) == "syncred"
    assert len(session.scalars(select(LabelSet)).all()) == 2
    # make run prints how to log in as the demo admin (issue 21)
    assert "demo admin created: log in as admin@example.org with password" in res.output
    assert session.scalar(select(User).where(User.email == "admin@example.org")).is_admin
