"""A Redis database emptied before and after a test (each test folder uses its own db number)."""
from contextlib import contextmanager

import pytest
import redis


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
