"""The production shape the recovery tests run, and the checks every fault must pass (issue 17).

`Production` starts, on a `Stack`: gunicorn (``app:app``, or `web_main` with its kill-after-commit
fault), RQ workers (`worker_main`, the real command with optional faults) and the reconciler
(``python -m leaderboard reconcile --every 10``, the production period), all with the production
deadlines (`PRODUCTION`): nothing recovers because a test moved a clock. Clients upload through
the real CLI client (`leaderboard.client.submit`: derived idempotency key, retries), in threads.

`Production.check` is the issue's definition of "works", asserted after each fault:
1. every acknowledged upload (and every row a lost answer left behind) ends "scored", each within
   `BUDGET_S` (60 s) of the end of the fault (``finished_at`` against the fault's wall clock);
2. one row per upload, and each upload sent again with its key returns the same submission
   (``Idempotent-Replayed``), adding no row and no quota unit;
3. every error a client saw was a 503 JSON answer with ``Retry-After``, or a connection error
   (which the client retried).
With ``LB_FAULT_REPORT=<file>`` each check appends its measurements (JSON lines) to that file:
``perf/bench_faults.py`` builds the table in docs/operations.md from them. With
``LB_FAULT_DEBUG=1`` each upload prints its duration and retries (``pytest -s``).
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests
from sqlalchemy import func, select

from leaderboard import client as lbclient
from tests.production.conftest import Stack, wait_for
from tests.production.services import free_port, wait_port

#: the deadlines of docker/env.example: recovery must not wait for any of them
PRODUCTION = {"SCORING_TIMEOUT_S": "600", "QUEUE_DEADLINE_S": "3600",
              "JUDGE_DEADLINE_S": "1800", "MAX_ATTEMPTS": "3", "RECOVERY_GRACE_S": "10"}
RECONCILE_EVERY_S = 10  # docker/compose.yaml's RECONCILE_EVERY_S
BUDGET_S = 60.0


@dataclass
class Upload:
    """One upload by one client: its outcome and every retry it made."""

    method: str
    split: str
    path: Path
    token: str
    tries: int
    doc: dict | None = None
    error: BaseException | None = None
    events: list = field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0


class Production:
    def __init__(self, stack: Stack, predictions: dict[str, Path]):
        self.stack, self.predictions = stack, predictions
        self.base: str | None = None
        self.uploads: list[Upload] = []
        self._lock = threading.Lock()

    # -- processes -------------------------------------------------------------------------
    def web(self, *, module: str = "app:app", workers: int = 2, **env: str) -> str:
        port = free_port()
        self.stack.start([sys.executable, "-m", "gunicorn", "--workers", str(workers),
                          "--threads", "4", "--worker-class", "gthread", "--bind",
                          f"127.0.0.1:{port}", "--timeout", "60", module], **env)
        wait_port(port)
        self.base = f"http://127.0.0.1:{port}"
        wait_for(lambda: _ready(self.base), timeout_s=60, what="gunicorn ready",
                 context=self.stack.logs)
        return self.base

    def worker(self, **env: str):
        return self.stack.worker(**env)

    def reconciler(self):
        return self.stack.start([sys.executable, "-m", "leaderboard", "reconcile", "--every",
                                 str(RECONCILE_EVERY_S)])

    # -- clients ---------------------------------------------------------------------------
    def upload(self, method: str, *, split: str = "dev", token: str | None = None,
               tries: int = 9) -> Upload:
        """Upload through the CLI client (blocking); the outcome is kept for `check`."""
        up = Upload(method, split, self.predictions[split], token or self.stack.token, tries,
                    started=time.time())
        with self._lock:
            self.uploads.append(up)
        try:
            up.doc = lbclient.submit(self.base, up.token, benchmark=self.stack.benchmark,
                                     split=split, path=up.path, method_name=method,
                                     progress=False, retry=lbclient.RetryPolicy(tries=tries),
                                     on_retry=up.events.append)
        except (lbclient.ClientError, *lbclient.TRANSIENT_ERRORS) as exc:
            up.error = exc
        up.ended = time.time()
        if os.environ.get("LB_FAULT_DEBUG"):
            print(f"upload {method}: {up.ended - up.started:.1f}s "
                  f"events={[(e.status, e.reason[:80], round(e.delay_s, 1)) for e in up.events]}"
                  f" error={up.error!r}", flush=True)
        return up

    def upload_in_background(self, method: str, **kw) -> threading.Thread:
        thread = threading.Thread(target=self.upload, args=(method,), kwargs=kw, daemon=True)
        thread.start()
        return thread

    # -- the checks ------------------------------------------------------------------------
    def rows(self) -> dict[int, tuple]:
        """id -> (method_name, status, finished_at) of every submission."""
        return {i: row[:3] for i, row in self._rows().items()}

    def _rows(self) -> dict[int, tuple]:
        from leaderboard.server.models import Submission

        with self.stack.app.extensions["lb_db"].scope() as s:
            return {i: (m, st, f, why) for i, m, st, f, why in s.execute(
                select(Submission.id, Submission.method_name, Submission.status,
                       Submission.finished_at, Submission.failure_reason))}

    def quota_used(self) -> int:
        from leaderboard.server.models import QuotaUsage

        with self.stack.app.extensions["lb_db"].scope() as s:
            return s.scalar(select(func.coalesce(func.sum(QuotaUsage.count), 0)))

    def check(self, fault: str, fault_end: float, *, given_up: int = 0) -> dict:
        """Assert the three properties (module docstring) and return the measurements.
        ``given_up``: uploads whose client was told not to retry (``tries=1``) and so may end
        with a connection error; their rows must still be scored."""
        errors = [u for u in self.uploads if u.error is not None]
        assert all(isinstance(u.error, lbclient.TRANSIENT_ERRORS) and u.tries == 1
                   for u in errors), [(u.method, repr(u.error)) for u in errors]
        assert len(errors) <= given_up
        for u in self.uploads:
            for e in u.events:
                if e.status is None:
                    assert e.reason.startswith("connection error"), e
                    continue
                assert e.status == 503 and e.retry_after, (u.method, e)
                assert {"error", "message"} <= set(json.loads(e.body)), e.body

        def settled():
            rows = self.rows()
            return rows if all(st in ("scored", "failed") for _, st, _ in rows.values()) \
                else None

        rows = wait_for(settled, timeout_s=BUDGET_S + 30, interval_s=0.5,
                        what="every submission to finish", context=self.stack.logs)
        assert {st for _, st, _ in rows.values()} == {"scored"}, self._rows()
        delays = [f.timestamp() - fault_end for _, _, f in rows.values()]
        recovery = max(0.0, *delays)
        assert recovery <= BUDGET_S, (fault, recovery, self.stack.logs())
        acknowledged = {u.doc["id"] for u in self.uploads if u.doc is not None}
        assert acknowledged <= set(rows)
        methods = [m for m, _, _ in rows.values()]
        assert sorted(methods) == sorted({u.method for u in self.uploads}), methods

        quota = self.quota_used()
        assert quota == len(rows)
        by_method = {m: i for i, (m, _, _) in rows.items()}
        for u in self.uploads:  # the same upload again, as a user re-running the command
            again = lbclient.submit(self.base, u.token, benchmark=self.stack.benchmark,
                                    split=u.split, path=u.path, method_name=u.method,
                                    progress=False)
            assert again["id"] == by_method[u.method] and again["replayed"] is True
        assert len(self.rows()) == len(rows) and self.quota_used() == quota

        result = {"fault": fault, "recovery_s": round(recovery, 1), "submissions": len(rows),
                  "acknowledged": len(acknowledged),
                  "lost_answers": sum(u.doc is None or any(e.status is None for e in u.events)
                                      for u in self.uploads),
                  "client_retries": sum(len(u.events) for u in self.uploads),
                  "answers_503": sum(e.status == 503 for u in self.uploads for e in u.events)}
        report = os.environ.get("LB_FAULT_REPORT")
        if report:
            with open(report, "a") as fh:
                fh.write(json.dumps(result) + "\n")
        return result


def _ready(base: str) -> bool:
    try:
        return requests.get(base + "/readyz", timeout=5).status_code == 200
    except requests.RequestException:
        return False

