"""A scoring worker re-renders the pages a scored submission changed right after it clears them
(issue 39, the deadline rush): a reader then finds a fresh entry instead of recomputing it in the
web process. Not inside a request (inline jobs run in the upload's request), not without a shared
cache, not when ``BOARD_WARM`` is off."""
from __future__ import annotations

import pytest

from leaderboard.server.boards.cache import BoardCache, get_cache, invalidate_boards
from leaderboard.server.jobs import board_warm
from tests.redis_db import redis_test_url


@pytest.fixture
def shared_cache(boards_app):
    import redis as redis_lib
    client = redis_lib.Redis.from_url(redis_test_url(12))
    client.flushdb()
    boards_app.extensions["lb_board_cache"] = BoardCache(redis_client=client, lock_s=2)
    yield boards_app.extensions["lb_board_cache"]
    client.flushdb()


def test_the_changed_pages_are_fresh_for_the_next_reader(boards_app, boards_session, make,
                                                         shared_cache):
    bench = make.benchmark()
    sub = make.submission(bench, make.team(), scores={"public": {"accuracy": 0.8}})
    boards_session.commit()
    with boards_app.app_context():
        paths = board_warm.pages_of(boards_session, sub.id, bench.key)
        assert paths == [f"/benchmarks/{bench.key}/boards/detection/test",
                         f"/api/v1/boards/{bench.key}/detection/test"]
        assert board_warm.should_warm()
        invalidate_boards(bench.key)
        assert board_warm.warm(sub.id, bench.key) == 2
        # another job of the same benchmark and split within the second: no second warm
        assert board_warm.warm(sub.id, bench.key) == 0
    reader = boards_app.test_client()
    before = (shared_cache.hits, shared_cache.misses)
    for path in paths:
        assert reader.get(path).status_code == 200
    assert shared_cache.misses == before[1]  # nothing recomputed by the reader
    assert shared_cache.hits > before[0]


def test_not_in_a_request_nor_without_redis_nor_when_off(boards_app, shared_cache):
    with boards_app.test_request_context("/"):
        assert not board_warm.should_warm()  # an inline job: the upload must not wait
    with boards_app.app_context():
        boards_app.config["BOARD_WARM"] = False
        assert not board_warm.should_warm()
        boards_app.config["BOARD_WARM"] = True
        boards_app.extensions["lb_board_cache"] = BoardCache()
        assert not board_warm.should_warm()  # a cache per process: nothing to share
        assert get_cache().redis is None


def test_a_missing_submission_warms_nothing(boards_app, shared_cache):
    with boards_app.app_context():
        assert board_warm.warm(10**9, "nope") == 0


def test_no_warm_while_jobs_wait_behind(boards_app, boards_session, make, shared_cache,
                                        monkeypatch):
    bench = make.benchmark()
    sub = make.submission(bench, make.team(), scores={"public": {"accuracy": 0.8}})
    boards_session.commit()
    monkeypatch.setattr(board_warm, "_backlog", lambda: 3)  # the next job clears them again
    with boards_app.app_context():
        assert board_warm.warm(sub.id, bench.key) == 0
    monkeypatch.setattr(board_warm, "_backlog", lambda: 0)
    with boards_app.app_context():
        assert board_warm.warm(sub.id, bench.key) == 2
