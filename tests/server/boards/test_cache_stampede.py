"""The board cache under load (issue 16): one rebuild at a time per entry, the previous version
served meanwhile, and superseded versions replaced rather than left to expire."""
from __future__ import annotations

import threading
import time

import pytest

from tests.redis_db import redis_test_url


@pytest.fixture
def r():
    import redis as redis_lib
    client = redis_lib.Redis.from_url(redis_test_url(11))
    client.flushdb()
    yield client
    client.flushdb()


def _rebuilding(cache, calls: list) -> tuple[threading.Event, threading.Thread]:
    """``cache`` rebuilding entry ("demo", ("k",)) as "v2" in a thread, held until the returned
    event is set (each compute call appends 1 to ``calls``); returns once it has started."""
    started, release = threading.Event(), threading.Event()

    def slow():
        calls.append(1)
        started.set()
        release.wait(5)
        return "v2"

    t = threading.Thread(target=lambda: cache.get_or_compute("demo", ("k",), slow))
    t.start()
    started.wait(5)
    return release, t


def test_stale_version_served_while_another_process_rebuilds(r):
    from leaderboard.server.boards.cache import BoardCache
    a, b = BoardCache(redis_client=r, lock_s=2), BoardCache(redis_client=r, lock_s=2)
    assert a.get_or_compute("demo", ("k",), lambda: "v1") == "v1"
    b.invalidate("demo")
    calls = []
    release, t = _rebuilding(a, calls)
    t0 = time.monotonic()
    assert b.get_or_compute("demo", ("k",), lambda: calls.append(2) or "dup") == "v1"
    assert time.monotonic() - t0 < 0.5 and b.stale_served == 1
    release.set()
    t.join(5)
    assert calls == [1]  # one rebuild, not one per reader
    time.sleep(b.stale_recheck_s)  # b looks at Redis again after stale_recheck_s (issue 39)
    assert b.get_or_compute("demo", ("k",), lambda: "never") == "v2"


class _Counting:
    """A Redis client that counts the commands sent (pipelines count once)."""

    def __init__(self, client):
        self.client, self.calls = client, 0

    def __getattr__(self, name):
        attr = getattr(self.client, name)
        if callable(attr):
            def call(*a, **k):
                self.calls += 1
                return attr(*a, **k)
            return call
        return attr


def test_stale_reads_skip_redis_while_another_process_rebuilds(r):
    """Issue 39: while another process recomputes an entry, a process serving the previous
    version keeps it in its own dict and asks Redis again only every stale_recheck_s, instead
    of two round trips per request; once the new version is published it is served."""
    from leaderboard.server.boards.cache import BoardCache
    a = BoardCache(redis_client=r, lock_s=3)
    counting = _Counting(r)
    b = BoardCache(redis_client=counting, lock_s=3, stale_recheck_s=0.2, gen_ttl_s=10)
    assert b.get_or_compute("demo", ("k",), lambda: "v1") == "v1"
    b.invalidate("demo")  # as a scoring process would: b's own memo is dropped
    release, t = _rebuilding(a, [])
    assert b.get_or_compute("demo", ("k",), lambda: "dup") == "v1"  # stale, from Redis
    before = counting.calls
    for _ in range(50):
        assert b.get_or_compute("demo", ("k",), lambda: "dup") == "v1"
    assert counting.calls == before  # generations memoised, the stale value from the dict
    assert b.stale_served == 51
    release.set()
    t.join(5)
    assert b.get_or_compute("demo", ("k",), lambda: "dup") == "v1"  # within the recheck
    time.sleep(0.25)
    assert b.get_or_compute("demo", ("k",), lambda: "never") == "v2"
    assert b.get_or_compute("demo", ("k",), lambda: "never") == "v2"
    b.invalidate("demo")  # an invalidation forgets the stale copy and its recheck time
    assert b._recheck == {}


def test_cold_readers_wait_for_the_one_rebuild(r):
    from leaderboard.server.boards.cache import BoardCache
    caches = [BoardCache(redis_client=r, lock_s=3) for _ in range(6)]
    calls, out = [], []

    def compute():
        calls.append(1)
        time.sleep(0.3)
        return {"rows": [1]}

    threads = [threading.Thread(target=lambda c=c: out.append(
        c.get_or_compute("demo", ("cold",), compute))) for c in caches]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert out == [{"rows": [1]}] * 6 and calls == [1]


def test_superseded_versions_are_replaced(r):
    from leaderboard.server.boards.cache import BoardCache
    a = BoardCache(redis_client=r)
    for i in range(5):
        assert a.get_or_compute("demo", ("k",), lambda i=i: i) == i
        a.invalidate("demo")
    entries = [k for k in r.scan_iter("lb:boards:v:*")]
    assert len(entries) == 1


def test_a_rebuild_never_decodes_the_previous_version(r, monkeypatch):
    """Issue 37: the generations are compared without decoding the value; the previous version
    is decoded only when it is served; an entry of the former format (one JSON list) is a miss."""
    import json

    from leaderboard.server.boards import cache as mod
    a = mod.BoardCache(redis_client=r)
    a.get_or_compute("demo", ("k",), lambda: {"v": 1})
    a.invalidate("demo")
    decoded = []
    real = mod._value
    monkeypatch.setattr(mod, "_value", lambda e: decoded.append(1) or real(e))
    assert a.get_or_compute("demo", ("k",), lambda: {"v": 2}) == {"v": 2}
    assert decoded == []
    b = mod.BoardCache(redis_client=r)
    assert b.get_or_compute("demo", ("k",), lambda: 1 / 0) == {"v": 2}
    assert decoded == [1]
    r.set(a._redis_key("demo", ("old",)), json.dumps([list(a._generations("demo")), 5]))
    assert b.get_or_compute("demo", ("old",), lambda: 6) == 6
