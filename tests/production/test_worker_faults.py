"""A submission that kills every worker it runs on ends "failed" with a reason, never retried
forever: the ``MAX_ATTEMPTS`` budget, and the deadline path the reconciler keeps as a backstop.

Real processes throughout: the worker is ``python -m leaderboard worker`` (through
`worker_main`, which slows scoring down so the kill lands mid-run), the database and Redis are
the private servers of `conftest`. The reconciler runs in-process with its clock moved past the
deadlines instead of the test sleeping through them. Recovery at production speed from each
single fault (no clock moved) is `test_recovery`.
"""
from __future__ import annotations

import pytest

from tests.production.conftest import crash, descendants, make_stack, wait_for

pytestmark = pytest.mark.slow


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


def test_warm_worker_times_out_a_job_and_goes_on(pg, redis_server, syncred_pack, tmp_path,
                                                 predictions):
    """Jobs run in the worker process (issue 16): the job timeout (RQ's SIGALRM) still ends a
    run that overstays with a reason, and the same process then scores the next submission."""
    # 10 s: the fast run's first (cold) job must fit on a loaded CI machine; the slow one sleeps
    # 30 s before it computes anything, far past it
    with make_stack(pg, redis_server, syncred_pack, tmp_path, SCORING_TIMEOUT_S="10") as st:
        slow = st.submit(predictions["test"], method="slow")
        fast = st.submit(predictions["test"], method="fast")
        worker = st.worker(delay_s=30, burst=True, LB_TEST_SCORING_DELAY_JOBS="1")
        wait_for(lambda: st.rows()[slow][0] == "scoring", timeout_s=30, what="the slow run")
        assert descendants(worker.pid) == []  # no work-horse: the job runs in the worker
        assert worker.wait(timeout=60) == 0, st.logs()
        rows = st.rows()
        assert rows[slow][0] == "failed" and "longer than the 10 s limit" in rows[slow][1]
        assert rows[fast][0] == "scored", st.logs()
