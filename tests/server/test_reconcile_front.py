"""A recovered job goes to the front of its queue, and every reconciler pass says when it ran,
how long it took and what it did (issue 24). Real Redis (no worker), SQLite and PostgreSQL."""
from __future__ import annotations

import logging
import re

from tests.server.test_reconcile_fast import (  # noqa: F401 - app_config is a fixture
    GRACE,
    _conn,
    _pass,
    _sub,
    _submit,
    app_config,
)


def test_a_lost_job_is_requeued_ahead_of_the_backlog(app, client, auth, imported,
                                                     baseline_files, session, caplog):
    token = auth.member()
    lost = _submit(client, token, baseline_files["dev"], method="lost")
    backlog = [_submit(client, token, baseline_files["dev"], method=f"b{i}") for i in range(3)]
    conn = _conn(app)
    job = _sub(session, lost).job_id.encode()
    # a worker took the first job off the queue and died before it started
    assert conn.lrange("rq:queue:scoring", 0, 0) == [job]  # RQ takes from the left: first
    conn.lrem("rq:queue:scoring", 0, job)
    with caplog.at_level(logging.INFO, logger="leaderboard.server.jobs.reconcile"):
        report = _pass(app, after_s=GRACE + 1)
    assert report.requeued == [lost]
    waiting = [j.decode() for j in conn.lrange("rq:queue:scoring", 0, -1)]
    assert waiting[0] == _sub(session, lost).job_id  # next to be taken, not behind the three
    assert waiting[1:] == [_sub(session, s).job_id for s in backlog]
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("reconcile pass"))
    assert re.fullmatch(r"reconcile pass at=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00 "
                        r"duration_s=\d+\.\d{3} in_flight=4 evidence=redis "
                        rf"requeued=1\[{lost}\] failed=0 still_waiting=0( mail_\w+=\d+)*", line), line


def test_a_pass_without_redis_says_so(app, client, auth, imported, baseline_files, session,
                                      monkeypatch):
    from leaderboard.server.jobs import reconcile as mod

    _submit(client, auth.member(), baseline_files["dev"])
    monkeypatch.setattr(mod, "_gather", lambda *a: None)  # Redis not answering
    report = _pass(app)
    assert not report.evidence and "evidence=none" in report.log_line()


def test_a_lost_backlog_comes_back_oldest_first_ahead_of_newer_work(app, client, auth, imported,
                                                                    baseline_files, session):
    token = auth.member()
    lost = [_submit(client, token, baseline_files["dev"], method=f"l{i}") for i in range(3)]
    conn = _conn(app)
    conn.delete("rq:queue:scoring")  # a flush took the whole backlog
    newer = _submit(client, token, baseline_files["dev"], method="newer")
    assert _pass(app, after_s=GRACE + 1).requeued == lost
    waiting = [j.decode() for j in conn.lrange("rq:queue:scoring", 0, -1)]
    assert waiting == [_sub(session, s).job_id for s in [*lost, newer]]
