"""`leaderboard.server.ops_counters`: /metrics submission figures without reading finished rows.

Every figure is checked against the old definition (counts per status and kind, a histogram of
``finished_at - started_at`` over finished rows), recomputed here in Python from the rows.
"""
from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import event, select

from leaderboard.server import ops_counters as oc
from leaderboard.server.models import Benchmark, Submission, utcnow
from leaderboard.server.services.scoring_service import request_rescore
from leaderboard.server.services.submissions import mark_failed
from tests.server.conftest import make_config


def _page(client) -> dict[tuple, float]:
    out = {}
    resp = client.get("/metrics")
    assert resp.status_code == 200
    for family in text_string_to_metric_families(resp.get_data(as_text=True)):
        for s in family.samples:
            out[(s.name, *sorted(s.labels.items()))] = s.value
    return out


def _expected(session) -> dict[tuple, float]:
    """The old scrape: every row read into Python."""
    rows = session.execute(select(Submission.status, Submission.kind, Submission.started_at,
                                  Submission.finished_at)).all()
    out: dict[tuple, float] = Counter()
    for status, kind, _, _ in rows:
        out[("lb_submissions", ("kind", kind), ("status", status))] += 1
    for outcome in oc.FINISHED:
        durs = [max((f - s).total_seconds(), 0.0) for st, _, s, f in rows
                if st == outcome and s is not None and f is not None]
        name = "lb_scoring_duration_seconds"
        out[(f"{name}_count", ("outcome", outcome))] = len(durs)
        out[(f"{name}_sum", ("outcome", outcome))] = sum(durs)
        for b in oc.DURATION_BUCKETS:
            out[(f"{name}_bucket", ("le", repr(float(b))), ("outcome", outcome))] = \
                sum(d <= b for d in durs)
        out[(f"{name}_bucket", ("le", "+Inf"), ("outcome", outcome))] = len(durs)
    return out


def _check(page: dict, expected: dict) -> None:
    for key, value in expected.items():
        assert page.get(key, 0.0) == pytest.approx(value, abs=1e-3), key
    for key, value in page.items():
        if key[0] == "lb_submissions":
            assert value == expected.get(key, 0), key


def _bench(session) -> int:
    b = Benchmark(key="demo", title="Demo", version="1", pack_path="/nowhere")
    session.add(b)
    session.flush()
    return b.id


def _sub(session, bench_id, status, *, secs=None, kind="predictions", started=True) -> Submission:
    now = utcnow()
    sub = Submission(benchmark_id=bench_id, split="test", method_name="m", kind=kind,
                     status=status)
    if started and secs is not None:
        sub.started_at, sub.finished_at = now - timedelta(seconds=secs), now
    session.add(sub)
    return sub


def _finish(session, sub_id: int, status: str, secs: float) -> None:
    sub = session.get(Submission, sub_id)
    now = utcnow()
    sub.started_at = now - timedelta(seconds=secs)
    if status == "failed":
        mark_failed(sub, "broken", detail=None, now=now)
    else:
        sub.status, sub.finished_at = "scored", now


@pytest.fixture
def redis_app(db_url, tmp_path, redis_url):
    from leaderboard.server.web import create_app

    app = create_app(make_config(db_url, tmp_path, REDIS_URL=redis_url))
    yield app
    app.extensions["lb_db"].dispose()


def _seed(db) -> list[int]:
    """A mix of states, committed; returns the ids of three waiting submissions."""
    with db.scope() as s:
        bid = _bench(s)
        for secs in (0.2, 0.7, 3.0, 45.0):
            _sub(s, bid, "scored", secs=secs)
        _sub(s, bid, "failed", secs=700.0, kind="container")
        _sub(s, bid, "failed", started=False)  # failed before it started: not timed
        waiting = [_sub(s, bid, st) for st in ("received", "queued", "scoring")]
        s.flush()
        return [w.id for w in waiting]


def test_embedded_scrape_matches_the_rows(app, client):
    db = app.extensions["lb_db"]
    ids = _seed(db)
    with db.scope() as s:
        _finish(s, ids[2], "scored", 12.5)
    with db.scope() as s:
        _check(_page(client), _expected(s))


def test_counters_follow_commits_and_skip_rollbacks(redis_app):
    client, db = redis_app.test_client(), redis_app.extensions["lb_db"]
    conn = redis.Redis.from_url(redis_app.config["REDIS_URL"])
    ids = _seed(db)
    with db.scope() as s:
        _check(_page(client), _expected(s))  # the first scrape initialised the counters
    assert conn.exists(oc.READY_KEY)

    with db.scope() as s:
        _finish(s, ids[2], "scored", 12.5)
        _finish(s, ids[1], "failed", 0.3)
    s = db.session()
    _finish(s, ids[0], "scored", 1.0)
    s.flush()
    s.rollback()  # never committed: never counted
    s.close()
    with db.scope() as s:
        _check(_page(client), _expected(s))
    with db.scope() as s:  # a rescore moves one back to "queued"; scored again later
        request_rescore(s, s.get(Submission, ids[2]), deadline_s=60)
    page = _page(client)
    assert page[("lb_submissions", ("kind", "predictions"), ("status", "scored"))] == 4
    assert page[("lb_submissions", ("kind", "predictions"), ("status", "queued"))] == 1
    assert oc.read(conn).counts[("scored", "predictions")] == 4
    with db.scope() as s:
        _finish(s, ids[2], "scored", 2.0)
    page = _page(client)
    # the rescore is a second run: observed again (a counter only grows), the rows hold one
    assert page[("lb_scoring_duration_seconds_count", ("outcome", "scored"))] == 6
    assert page[("lb_submissions", ("kind", "predictions"), ("status", "scored"))] == 5
    assert page[("lb_submissions", ("kind", "predictions"), ("status", "queued"))] == 0
    with db.scope() as s:
        s.delete(s.get(Submission, ids[2]))
    assert _page(client)[("lb_submissions", ("kind", "predictions"), ("status", "scored"))] == 4


def test_scrape_reads_no_finished_rows(redis_app):
    client, db = redis_app.test_client(), redis_app.extensions["lb_db"]
    _seed(db)
    _page(client)  # initialises
    statements = []
    event.listen(db.engine, "before_cursor_execute",
                 lambda conn, cur, stmt, *a: statements.append(stmt))
    _page(client)
    assert statements, "the in-flight query still runs"
    assert not [s for s in statements if "finished_at" in s or "'scored'" in s], statements


def test_missing_counters_are_rebuilt_once_under_a_lock(redis_app):
    client, db = redis_app.test_client(), redis_app.extensions["lb_db"]
    conn = redis.Redis.from_url(redis_app.config["REDIS_URL"])
    _seed(db)
    _page(client)
    conn.flushdb()  # Redis restarted without its data
    conn.set(oc.LOCK_KEY, "someone-else", ex=30)  # another process is rebuilding
    with db.scope() as s:
        expected = _expected(s)
    _check(_page(client), expected)  # read from the database meanwhile
    assert not conn.exists(oc.READY_KEY)
    conn.delete(oc.LOCK_KEY)
    _check(_page(client), expected)
    assert conn.exists(oc.READY_KEY) and not conn.exists(oc.LOCK_KEY)


def test_rebuild_command(redis_app, app):
    from leaderboard.server.cli import server

    db = redis_app.extensions["lb_db"]
    conn = redis.Redis.from_url(redis_app.config["REDIS_URL"])
    _seed(db)
    conn.hset(oc.HASH_KEY, "n|scored|predictions", 99)  # drift
    conn.set(oc.READY_KEY, "1")
    res = redis_app.test_cli_runner().invoke(server, ["metrics-rebuild"])
    assert res.exit_code == 0, res.output
    assert "6 finished submissions, 5 timed" in res.output
    assert oc.read(conn).counts[("scored", "predictions")] == 4
    res = app.test_cli_runner().invoke(server, ["metrics-rebuild"])  # no REDIS_URL
    assert res.exit_code == 2 and "REDIS_URL is not set" in res.output


class _FlakyRedis:
    """Fails the first ``eval``, then passes calls to a real client."""

    def __init__(self, conn):
        self.conn, self.failed = conn, False

    def eval(self, *args):
        if not self.failed:
            self.failed = True
            raise redis.exceptions.ConnectionError("down")
        return self.conn.eval(*args)


def test_deltas_survive_a_redis_outage(redis_url):
    conn = redis.Redis.from_url(redis_url)
    conn.set(oc.READY_KEY, "1")
    pub = oc._Publisher(_FlakyRedis(conn))
    pub.publish(Counter({"n|scored|predictions": 1}))  # Redis down: kept
    assert not conn.hget(oc.HASH_KEY, "n|scored|predictions")
    pub.publish(Counter({"n|failed|predictions": 1}))  # within RETRY_S: not even tried
    assert not conn.hget(oc.HASH_KEY, "n|failed|predictions")
    pub._quiet_until = 0.0  # RETRY_S later
    pub.publish(Counter({"n|scored|predictions": 1}))
    assert float(conn.hget(oc.HASH_KEY, "n|scored|predictions")) == 2
    assert float(conn.hget(oc.HASH_KEY, "n|failed|predictions")) == 1
