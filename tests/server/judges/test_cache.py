"""The database judge cache (SQLite and PostgreSQL) and the caching judge wrapper."""
from __future__ import annotations

import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from leaderboard.judges import MemoryJudgeCache
from leaderboard.judges.base import ExplanationCase
from leaderboard.judges.cache import CacheKey, JudgeCache
from leaderboard.judges.caching import CachingJudge, candidates_tag
from leaderboard.server.models.judges import JudgeOutput
from leaderboard.server.services.judge_cache import DbJudgeCache
from tests.server.judges.conftest import CountingJudge


@pytest.fixture(params=["sqlite", "postgresql"])
def cache_url(request, sqlite_url):
    if request.param == "sqlite":
        return sqlite_url
    from tests.server.conftest import _empty_pg
    url = request.getfixturevalue("pg_url")
    _empty_pg(url)
    return url


def test_db_cache_hit_miss_and_insert_or_ignore(cache_url):
    engine = create_engine(cache_url)
    k1 = CacheKey("item/1", "a" * 64, "rules@1", "artifacts")
    k2 = CacheKey("item/2", "b" * 64, "rules@1", "rating")
    other_judge = k1._replace(judge="rules@2")
    with Session(engine) as s:
        cache = DbJudgeCache(s)
        assert isinstance(cache, JudgeCache)
        assert cache.get(k1) is None
        cache.put_many({k1: ["blurriness"], k2: {"total": 50.0}})
        s.commit()
    with Session(engine) as s:
        cache = DbJudgeCache(s)
        assert cache.get(k1) == ["blurriness"]
        assert cache.get_many([k1, k2, other_judge]) == {k1: ["blurriness"],
                                                         k2: {"total": 50.0}}
        cache.put(k1, ["noise"])  # a second answer for the same key is ignored, not an error
        s.commit()
        assert cache.get(k1) == ["blurriness"]
        assert s.scalar(select(func.count(JudgeOutput.id))) == 2
        with pytest.raises(ValueError, match="kind"):
            cache.put(k1._replace(kind=""), [])
    engine.dispose()


def test_db_cache_bulk_get_beyond_one_chunk(sqlite_url):
    engine = create_engine(sqlite_url)
    keys = [CacheKey(f"i{n}", f"{n:064x}", "rules@1", "artifacts") for n in range(900)]
    with Session(engine) as s:
        DbJudgeCache(s).put_many({k: [] for k in keys[::2]})
        s.commit()
        got = DbJudgeCache(s).get_many(keys)
    assert set(got) == set(keys[::2])
    engine.dispose()


def test_caching_judge_calls_the_judge_only_for_misses():
    CountingJudge.calls = 0
    cache = MemoryJudgeCache()
    seen = []
    judge = CachingJudge(CountingJudge(), cache, batch_size=2,
                         on_batch=lambda kind, done, total: seen.append((kind, done, total)))
    assert judge.identity == "counting@1"
    responses = ["The edges are blurred.", "No visible noise.", "The edges are blurred.",
                 "The text is garbled."]
    first = judge.map_artifacts(responses, candidates=["blurriness", "noise",
                                                        "unrecognizable_text"])
    assert first[0] == frozenset({"blurriness"}) and first[1] == frozenset()
    assert CountingJudge.calls == 3  # the repeated response is judged once
    assert seen == [("artifacts", 2, 3), ("artifacts", 3, 3)]
    again = judge.map_artifacts(responses, candidates=["noise", "blurriness",
                                                        "unrecognizable_text"])
    assert again == first and CountingJudge.calls == 3
    # another candidate set is another key: a mapping depends on the candidates
    judge.map_artifacts(responses[:1], candidates=["noise"])
    assert CountingJudge.calls == 4
    assert candidates_tag(["a", "b"]) == candidates_tag(["b", "a"]) != candidates_tag(None)

    case = ExplanationCase("loki/1", "The hand has six fingers.", "image",
                           {"regional": ["six fingers on the left hand"]})
    r1 = judge.rate_explanations([case])
    r2 = judge.rate_explanations([case])
    assert r1 == r2 and CountingJudge.calls == 5 and judge.hits >= 5


def test_caching_judge_rejects_bad_arguments():
    with pytest.raises(ValueError, match="batch_size"):
        CachingJudge(CountingJudge(), MemoryJudgeCache(), batch_size=0)
    with pytest.raises(ValueError, match="cache"):
        CachingJudge(CountingJudge(), object())
