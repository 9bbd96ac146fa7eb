"""A worker started while Redis is away waits for it (issue 36, item 7a): it used to exit with
rc 1 within seconds, because building the RQ worker already talks to Redis.

A real ``python -m leaderboard worker`` process and a real ``redis-server`` that the test stops
before the worker starts and starts again on the same port.
"""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
import redis
from rq import Worker

from tests.production.conftest import REPO, _missing, make_env, wait_for
from tests.production.services import RedisServer


@pytest.fixture
def stopped_redis():
    exe = shutil.which("redis-server")
    if exe is None:
        _missing("redis-server is not installed")
    server = RedisServer(exe)
    server.kill()  # its port is now closed; start() brings it back on the same one
    yield server
    server.close()


def test_worker_started_without_redis_waits_and_then_works(stopped_redis, tmp_path):
    env = make_env(db_url=f"sqlite:///{tmp_path / 'w.db'}", redis_url=stopped_redis.url(),
                   data_dir=tmp_path / "data")
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "leaderboard", "worker", "--queues",
                                 "scoring"], cwd=REPO, env=env, stdout=log, stderr=log)
    try:
        def text() -> str:
            return log_path.read_text(errors="replace")

        wait_for(lambda: "Redis is not answering" in text() or proc.poll() is not None,
                 timeout_s=60, what="the worker to report Redis missing", context=text)
        assert proc.poll() is None, f"the worker exited rc={proc.returncode}:\n{text()}"
        stopped_redis.start()
        conn = redis.Redis.from_url(stopped_redis.url())
        try:
            wait_for(lambda: Worker.all(connection=conn), timeout_s=30,
                     what="the worker to register once Redis answers", context=text)
        finally:
            conn.close()
        assert "starting a new worker" in text()
        proc.terminate()
        # RQ's warm shutdown also stops the worker's scheduler process: on a loaded machine
        # (CI beside other work) that took over 30 s once
        try:
            rc = proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the worker did not stop within 90 s of SIGTERM:\n{text()}")
        assert rc == 0, text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
