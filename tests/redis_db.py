"""Redis for tests: one server for the whole suite, a database number per test folder.

``LB_TEST_REDIS_HOST`` (default ``127.0.0.1:6379``) picks the server, so that two test runs on
one machine can each use their own Redis; each folder's fixture empties its own database.
"""
import os
from contextlib import contextmanager

import pytest
import redis


def redis_test_url(db: int) -> str:
    """The URL of database ``db`` on the suite's Redis server."""
    return f"redis://{os.environ.get('LB_TEST_REDIS_HOST', '127.0.0.1:6379')}/{db}"


@contextmanager
def clean_redis_db(url: str):
    conn = redis.Redis.from_url(url)
    try:
        conn.ping()
    except redis.exceptions.ConnectionError:
        pytest.skip(f"Redis is not reachable at {url}")
    conn.flushdb()
    try:
        yield url
    finally:
        conn.flushdb()
        conn.close()
