"""``python tests/production/worker_main.py worker ...``: the real worker command, with faults.

Nothing differs from ``python -m leaderboard worker`` unless one of these is set (each patch is
made before RQ forks its work-horse, which inherits it):

- ``LB_TEST_SCORING_DELAY_S``: every scoring run first sleeps that long (before computing
  anything), so a fault test can kill the worker while a submission is certainly mid-scoring;
  with ``LB_TEST_SCORING_DELAY_JOBS=N``, only the first N runs of this process do;
- ``LB_TEST_DIE_AFTER_DEQUEUE=1``: the worker SIGKILLs itself right after it takes its first job
  off the queue, before the job starts (no claim, no lease: the job is in no queue);
- ``LB_TEST_KILL_AFTER_DEQUEUE=<pid>``: right after taking its first job off the queue, the
  worker SIGKILLs process ``pid`` (the Redis server: "Redis dies during a dequeue").
"""
from __future__ import annotations

import os
import signal
import time


def _slow_down(delay_s: float, jobs: int | None = None) -> None:
    from leaderboard.server.services import scoring_service

    compute = scoring_service.compute
    runs = []

    def slow_compute(*args, **kwargs):
        runs.append(1)  # per process: a forked work-horse counts from its parent's state
        if jobs is None or len(runs) <= jobs:
            time.sleep(delay_s)
        return compute(*args, **kwargs)

    scoring_service.compute = slow_compute


def _after_first_dequeue(action) -> None:
    from rq.queue import Queue

    dequeue_any = Queue.dequeue_any.__func__
    done = []

    def patched(cls, *args, **kwargs):
        result = dequeue_any(cls, *args, **kwargs)
        if result is not None and not done:
            done.append(True)
            action()
        return result

    Queue.dequeue_any = classmethod(patched)


if __name__ == "__main__":
    delay = float(os.environ.get("LB_TEST_SCORING_DELAY_S") or 0)
    if delay > 0:
        only = os.environ.get("LB_TEST_SCORING_DELAY_JOBS")
        _slow_down(delay, int(only) if only else None)
    if os.environ.get("LB_TEST_DIE_AFTER_DEQUEUE") == "1":
        _after_first_dequeue(lambda: os.kill(os.getpid(), signal.SIGKILL))
    victim = os.environ.get("LB_TEST_KILL_AFTER_DEQUEUE")
    if victim:
        _after_first_dequeue(lambda: os.kill(int(victim), signal.SIGKILL))
    from leaderboard.cli import main

    main()
