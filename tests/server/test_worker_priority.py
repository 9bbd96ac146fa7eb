"""Scoring second to the web (issue 39): ``leaderboard worker`` lowers its own CPU priority by
``WORKER_NICE`` (default 10, 0 = off) before it takes a job."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from leaderboard.server.config import REPO_ROOT, load_config
from tests.server.conftest import LABEL_KEY

# the worker command with run_worker replaced: prints the niceness it would run jobs at
_PROBE = """
import os, sys
import leaderboard.server.jobs.worker as w
w.run_worker = lambda *a, **k: print("NICE", os.nice(0), flush=True)
from leaderboard.cli import main
sys.argv = ["leaderboard", "worker", "--burst"]
main()
"""


def test_config_default_and_validation():
    assert load_config(environ={})["WORKER_NICE"] == 10
    assert load_config(environ={"WORKER_NICE": "0"})["WORKER_NICE"] == 0
    with pytest.raises(ValueError, match="WORKER_NICE"):
        load_config(environ={"WORKER_NICE": "-5"})


def test_stale_recheck_setting():
    from leaderboard.server.boards.cache import cache_from_config
    assert load_config(environ={})["BOARD_CACHE_STALE_RECHECK_S"] == 0.05
    cfg = load_config(environ={"BOARD_CACHE_STALE_RECHECK_S": "0"})
    assert cache_from_config(cfg).stale_recheck_s == 0.0
    with pytest.raises(ValueError, match="BOARD_CACHE_STALE_RECHECK_S"):
        load_config(environ={"BOARD_CACHE_STALE_RECHECK_S": "soon"})


def test_lower_priority_in_a_child():
    code = ("import os; from leaderboard.server.jobs.worker import lower_priority; "
            "before = os.nice(0); print(lower_priority(3) - before)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert out.stdout.strip() == "3"
    from leaderboard.server.jobs.worker import lower_priority
    with pytest.raises(ValueError):
        lower_priority(-1)


@pytest.mark.parametrize("setting, added", [(None, 10), ("4", 4), ("0", 0)])
def test_worker_command_lowers_its_priority(tmp_path, redis_url, setting, added):
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "REDIS_URL": redis_url,
           "DATABASE_URL": f"sqlite:///{tmp_path / 'w.db'}", "DATA_DIR": str(tmp_path / "d"),
           "SECRET_KEY": "t", "LABEL_KEYS": LABEL_KEY}
    env.pop("WORKER_NICE", None)
    if setting is not None:
        env["WORKER_NICE"] = setting
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    nice = [int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("NICE")]
    assert nice == [min(19, os.nice(0) + added)]
