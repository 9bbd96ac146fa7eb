"""Fault tolerance of the scoring pipeline: a worker killed mid-scoring, Redis flushed.

Real processes throughout: the worker is ``python -m leaderboard worker`` (through
`worker_main`, which can slow scoring down so the kill lands mid-run), the database and Redis are
the private servers of `conftest`. The reconciler runs in-process with its clock moved past the
deadlines (minutes in production) instead of the test sleeping through them; before that, a pass
at the real time must leave the in-flight work alone.
"""
from __future__ import annotations

import pytest
import redis

from tests.production.conftest import crash, wait_for

pytestmark = pytest.mark.slow


def test_sigkill_worker_mid_scoring_is_requeued_and_scored(stack, predictions):
    sid = stack.submit(predictions["test"])
    worker = stack.worker(delay_s=30)  # scoring sleeps 30 s first: the kill lands mid-run
    wait_for(lambda: stack.status(sid) == "scoring", timeout_s=30, what="scoring to start")

    crash(worker)  # the worker and its work-horse (SIGKILL), as a host crash
    assert stack.rows()[sid][:1] == ("scoring",)

    report = stack.reconcile()  # before the deadline: the job might still be running
    assert sid not in report.requeued and sid not in report.failed
    report = stack.reconcile(after_s=600)  # past SCORING_TIMEOUT_S + grace
    assert report.requeued == [sid]
    assert stack.status(sid) == "queued"

    stack.drain()
    status, reason, attempts = stack.rows()[sid]
    assert (status, reason) == ("scored", None)
    assert attempts == 2  # the killed attempt and the one that finished


def test_repeated_kills_end_failed_with_a_reason(stack, predictions):
    """A submission that kills every worker (MAX_ATTEMPTS=3) fails with a reason, not forever."""
    sid = stack.submit(predictions["test"])
    for attempt in range(1, 4):
        worker = stack.worker(delay_s=30)
        wait_for(lambda: stack.rows()[sid][0] == "scoring" and stack.rows()[sid][2] == attempt,
                 timeout_s=30, what=f"attempt {attempt} to start")
        crash(worker)
        report = stack.reconcile(after_s=600)
        expected = report.failed if attempt == 3 else report.requeued
        assert expected == [sid]
    status, reason, _ = stack.rows()[sid]
    assert status == "failed"
    assert "did not complete after 3 attempts" in reason


def test_redis_flushed_with_jobs_queued_all_end_scored(stack, predictions, redis_server):
    ids = [stack.submit(predictions[split], split=split, method=f"m{i}")
           for i, split in enumerate(["test", "dev", "test", "dev", "test"])]
    conn = redis.Redis.from_url(redis_server.url())
    assert conn.llen("rq:queue:scoring") == len(ids)

    report = stack.reconcile(after_s=600)  # the jobs are still waiting: deadlines extended
    assert sorted(report.extended) == ids and report.requeued == []

    conn.flushall()  # every queued job is gone
    report = stack.reconcile(after_s=1200)
    assert sorted(report.requeued) == ids
    assert conn.llen("rq:queue:scoring") == len(ids)

    stack.drain()
    assert {sid: row[0] for sid, row in stack.rows().items()} == {sid: "scored" for sid in ids}
