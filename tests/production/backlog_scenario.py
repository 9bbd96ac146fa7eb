"""Killed workers under a backlog (issue 24): run by ``perf/bench_faults.py --backlog``, not by the
test suite (the file name keeps pytest from collecting it: it takes about three minutes).

The production shape of `faults.Production` (gunicorn, the reconciler every 10 s, production
deadlines, clients on the real CLI client) with two warm workers whose every scoring run takes
`SCORE_S` (so they score about 1/s together) while uploads are offered at 2/s for `OFFER_S`:
the queue grows the whole time. `KILLS` times, a worker is SIGKILLed (with anything below it)
while it scores, and a new one starts (the restart policy). For every killed job it asserts the
issue's promises: re-queued within `REQUEUE_S` (35 s: lease 15 s + one 10 s pass + the pass)
and scored within `SCORED_S` (60 s) of the kill, although the backlog is far longer than that:
a recovered job goes to the front of its queue. Then every upload ends scored, once.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time

import redis
from rq import Worker
from sqlalchemy import select

from tests.production.conftest import crash, wait_for
from tests.production.test_recovery import prod  # noqa: F401 - a fixture

SCORE_S = 2.0
WORKERS = 2
OFFER_EVERY_S = 0.5
OFFER_S = 60.0
KILL_AT_S = (15.0, 30.0, 45.0)
KILLS = len(KILL_AT_S)
REQUEUE_S = 35.0
SCORED_S = 60.0
_JOB = re.compile(r"^score-(\d+)-")


def _rows(stack):
    from leaderboard.server.models import Submission

    with stack.app.extensions["lb_db"].scope() as s:
        return {i: (st, q, f) for i, st, q, f in s.execute(
            select(Submission.id, Submission.status, Submission.queued_at,
                   Submission.finished_at))}


def _scoring_job_of(conn: redis.Redis, pid: int) -> int | None:
    """The submission the RQ worker with this pid is running, if any."""
    for w in Worker.all(connection=conn):
        if w.pid == pid:
            job = w.get_current_job_id()
            match = _JOB.match(job or "")
            return int(match[1]) if match else None
    return None


def test_killed_jobs_jump_the_backlog(prod):  # noqa: F811
    stack = prod.stack
    prod.web()
    prod.reconciler()
    workers = [stack.worker(delay_s=SCORE_S) for _ in range(WORKERS)]
    tokens = [stack.member() for _ in range(6)]  # six callers: SUBMIT_RATE_LIMIT is per caller
    conn = redis.Redis.from_url(stack.env["REDIS_URL"])
    started = time.time()
    threads: list[threading.Thread] = []

    def offer():
        n = 0
        while time.time() - started < OFFER_S:
            threads.append(prod.upload_in_background(f"b{n:03d}", token=tokens[n % len(tokens)]))
            n += 1
            time.sleep(OFFER_EVERY_S)

    offering = threading.Thread(target=offer, daemon=True)
    offering.start()
    kills = []
    for k, at in enumerate(KILL_AT_S):
        time.sleep(max(0.0, started + at - time.time()))
        victim = workers[k % WORKERS]
        sid = wait_for(lambda: _scoring_job_of(conn, victim.pid), timeout_s=20, interval_s=0.05,
                       what="the victim to be scoring", context=stack.logs)
        backlog = conn.llen("rq:queue:scoring")
        crash(victim)
        kills.append({"submission": sid, "killed_at": time.time(), "backlog": backlog})
        workers[k % WORKERS] = stack.worker(delay_s=SCORE_S)  # the restart policy
    offering.join()
    for t in threads:
        t.join(120)

    def settled():
        rows = _rows(stack)
        return rows if all(st in ("scored", "failed") for st, _, _ in rows.values()) else None

    rows = wait_for(settled, timeout_s=300, interval_s=1.0, what="the backlog to drain",
                    context=stack.logs)
    assert {st for st, _, _ in rows.values()} == {"scored"}, rows
    assert len(rows) == len({u.method for u in prod.uploads}) == len(prod.uploads)
    last = max(f.timestamp() for _, _, f in rows.values())
    for kill in kills:
        _, queued_at, finished_at = rows[kill["submission"]]
        kill["requeue_s"] = round(queued_at.timestamp() - kill["killed_at"], 1)
        kill["scored_s"] = round(finished_at.timestamp() - kill["killed_at"], 1)
    result = {"fault": f"backlog: worker SIGKILLed mid-scoring ({KILLS}x, offered 2/s, "
                       f"scored ~{WORKERS / SCORE_S:.0f}/s)",
              "recovery_s": max(k["scored_s"] for k in kills),
              "requeue_s": max(k["requeue_s"] for k in kills),
              "submissions": len(rows), "acknowledged": sum(u.doc is not None
                                                             for u in prod.uploads),
              "lost_answers": sum(u.doc is None for u in prod.uploads),
              "client_retries": sum(len(u.events) for u in prod.uploads),
              "answers_503": sum(e.status == 503 for u in prod.uploads for e in u.events),
              "backlog_max": max(k["backlog"] for k in kills),
              "drained_s": round(last - started, 1), "kills": kills}
    report = os.environ.get("LB_FAULT_REPORT")
    if report:
        with open(report, "a") as fh:
            fh.write(json.dumps(result, default=str) + "\n")
    print(json.dumps(result, default=str))
    for kill in kills:
        assert 0 < kill["requeue_s"] <= REQUEUE_S, (kill, stack.logs()[-4000:])
        assert kill["scored_s"] <= SCORED_S, (kill, stack.logs()[-4000:])
