"""Judge output cache: rescoring with the same judge costs nothing and gives the same numbers.

A cache entry is keyed by (item id, sha256 of the response, judge identity, kind), so a changed
response or a new judge version misses. `kind` separates TriDF artifact mappings ("artifacts")
from LOKI ratings ("rating"). Values stored are JSON-ready (`encode`/`decode`), so a DB-backed
cache (the server's) can store them as they are.
"""
from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable

from leaderboard.judges.base import ArtifactCase, ExplanationCase, Judge, Rating

KIND_ARTIFACTS = "artifacts"
KIND_RATING = "rating"


class CacheKey(NamedTuple):
    item_id: str
    response_sha256: str
    judge: str
    kind: str


@runtime_checkable
class JudgeCache(Protocol):
    """What `judge_batch` needs from a cache. `get` returns None on a miss."""

    def get(self, key: CacheKey) -> dict | list | None: ...

    def put(self, key: CacheKey, value: dict | list) -> None: ...


class MemoryJudgeCache:
    """In-process cache (tests, the CLI's offline scoring). Thread-safe."""

    def __init__(self) -> None:
        self._data: dict[CacheKey, dict | list] = {}
        self._lock = threading.Lock()

    def get(self, key: CacheKey) -> dict | list | None:
        with self._lock:
            return self._data.get(key)

    def put(self, key: CacheKey, value: dict | list) -> None:
        with self._lock:
            self._data[key] = value

    def __len__(self) -> int:
        return len(self._data)


def response_sha256(response: str) -> str:
    return hashlib.sha256(response.encode("utf-8")).hexdigest()


def cache_key(case: ArtifactCase | ExplanationCase, judge: Judge) -> CacheKey:
    kind = KIND_RATING if isinstance(case, ExplanationCase) else KIND_ARTIFACTS
    return CacheKey(case.item_id, response_sha256(case.response), judge.identity, kind)


def encode(result: frozenset[str] | Rating) -> dict | list:
    return result.as_dict() if isinstance(result, Rating) else sorted(result)


def decode(value: dict | list, kind: str) -> frozenset[str] | Rating:
    return Rating.from_dict(value) if kind == KIND_RATING else frozenset(value)


def judge_batch(judge: Judge, cases: Sequence[ArtifactCase] | Sequence[ExplanationCase],
                cache: JudgeCache | None = None) -> list:
    """Judge `cases` (all `ArtifactCase` or all `ExplanationCase`), calling the judge only for
    cache misses; results come back in input order (frozensets of keys, or `Rating`s).

    Artifact cases are sent to `map_artifacts` grouped by their `candidates`. Results are stored
    after the judge returns, so a judge failure (JudgeError) stores nothing for that batch.
    """
    cases = list(cases)
    if not cases:
        return []
    rating = isinstance(cases[0], ExplanationCase)
    want = ExplanationCase if rating else ArtifactCase
    for i, case in enumerate(cases):
        if not isinstance(case, want):
            raise ValueError(f"cases[{i}] is a {type(case).__name__}; a batch must be all "
                             f"{want.__name__}")
    keys = [cache_key(c, judge) for c in cases]
    results: list = [None] * len(cases)
    missing: list[int] = []
    for i, key in enumerate(keys):
        hit = cache.get(key) if cache is not None else None
        if hit is None:
            missing.append(i)
        else:
            results[i] = decode(hit, key.kind)
    if rating:
        fresh = judge.rate_explanations([cases[i] for i in missing]) if missing else []
        for i, value in zip(missing, fresh, strict=True):
            results[i] = value
    else:
        groups: dict[tuple[str, ...] | None, list[int]] = {}
        for i in missing:
            groups.setdefault(cases[i].candidates, []).append(i)
        for candidates, idx in groups.items():
            mapped = judge.map_artifacts(
                [cases[i].response for i in idx],
                candidates=list(candidates) if candidates is not None else None)
            for i, value in zip(idx, mapped, strict=True):
                results[i] = value
    if cache is not None:
        for i in missing:
            cache.put(keys[i], encode(results[i]))
    return results
