"""``python tests/production/worker_main.py worker ...``: the real worker command, maybe slowed.

With ``LB_TEST_SCORING_DELAY_S`` set, every scoring run first sleeps that long (before computing
anything), so a fault test can kill the worker while a submission is certainly mid-scoring. The
patch is made before RQ forks its work-horse, which inherits it. Nothing else differs from
``python -m leaderboard worker``.
"""
from __future__ import annotations

import os
import time


def _slow_down(delay_s: float) -> None:
    from leaderboard.server.services import scoring_service

    compute = scoring_service.compute

    def slow_compute(*args, **kwargs):
        time.sleep(delay_s)
        return compute(*args, **kwargs)

    scoring_service.compute = slow_compute


if __name__ == "__main__":
    delay = float(os.environ.get("LB_TEST_SCORING_DELAY_S") or 0)
    if delay > 0:
        _slow_down(delay)
    from leaderboard.cli import main

    main()
