"""A judge wrapper that answers from a cache and sends only the misses to the judge, in batches.

`CachingJudge(judge, cache)` is itself a `Judge` with the inner judge's identity, so the scoring
core (`score_predictions(..., judge=...)`) uses it unchanged and its records name the real judge.
Rescoring a submission whose responses were judged before costs cache reads only.

Cache keys (`cache.CacheKey`: item, sha256 of the response, judge identity, kind):

- "rating" (LOKI explanation): the pack item id; the rating depends on the item's annotation.
- "artifacts" (TriDF OEQ): ``@candidates:<digest>`` instead of the item id, because the scoring
  core calls `map_artifacts` without item ids and a mapping depends only on the response and the
  candidate keys (the item's modality, `judges.base.ArtifactCase`). Identical answers to
  different items are judged once.
- "causes" (SynCred false-negative attribution): ``@syncred-causes``; depends on the text only.

The cache needs bulk access (`BulkJudgeCache`); a plain `JudgeCache` (get/put) is adapted.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from leaderboard.core.taxonomy import ARTIFACT_KEYS
from leaderboard.judges.base import ExplanationCase, Judge, Rating, check_responses
from leaderboard.judges.cache import (
    KIND_ARTIFACTS,
    KIND_RATING,
    CacheKey,
    JudgeCache,
    response_sha256,
)

KIND_CAUSES = "causes"
CAUSES_ITEM = "@syncred-causes"
DEFAULT_BATCH = 64


@runtime_checkable
class BulkJudgeCache(Protocol):
    """Bulk cache access: one round trip per batch (the server's database cache)."""

    def get_many(self, keys: Sequence[CacheKey]) -> dict[CacheKey, dict | list]: ...

    def put_many(self, entries: Mapping[CacheKey, dict | list]) -> None: ...


class _Adapter:
    """`BulkJudgeCache` over a get/put `JudgeCache` (e.g. `MemoryJudgeCache`)."""

    def __init__(self, cache: JudgeCache):
        self.cache = cache

    def get_many(self, keys):
        out = {}
        for key in keys:
            hit = self.cache.get(key)
            if hit is not None:
                out[key] = hit
        return out

    def put_many(self, entries):
        for key, value in entries.items():
            self.cache.put(key, value)


def candidates_tag(candidates: Sequence[str] | None) -> str:
    """Stand-in item id of an artifact mapping: a digest of the candidate keys (None = all)."""
    keys = ",".join(sorted(candidates) if candidates is not None else ARTIFACT_KEYS)
    return "@candidates:" + hashlib.sha256(keys.encode()).hexdigest()[:16]


class CachingJudge(Judge):
    """`judge` behind `cache`. Misses go to the judge in batches of `batch_size`; each batch's
    answers are stored as soon as it returns (a failure later keeps the earlier batches), and
    `on_batch(kind, done, total)` reports progress. `judged` counts responses sent to the judge,
    `hits` those answered by the cache (both cumulative)."""

    def __init__(self, judge: Judge, cache: BulkJudgeCache | JudgeCache, *,
                 batch_size: int = DEFAULT_BATCH,
                 on_batch: Callable[[str, int, int], None] | None = None):
        if not isinstance(judge, Judge):
            raise ValueError(f"judge must be a Judge, got {type(judge).__name__}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        if isinstance(cache, BulkJudgeCache):
            self.cache = cache
        elif isinstance(cache, JudgeCache):
            self.cache = _Adapter(cache)
        else:
            raise ValueError(f"cache must offer get_many/put_many or get/put, got "
                             f"{type(cache).__name__}")
        self.inner, self.batch_size, self.on_batch = judge, batch_size, on_batch
        self.name, self.version = judge.name, judge.version
        self.judged = 0
        self.hits = 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    def _run(self, kind: str, keys: list[CacheKey], payloads: list, call, encode, decode) -> list:
        """Answer every key: cache first, then the judge for the distinct misses, in batches."""
        found = self.cache.get_many(list(dict.fromkeys(keys)))
        todo: dict[CacheKey, object] = {}
        for key, payload in zip(keys, payloads):
            if key not in found and key not in todo:
                todo[key] = payload
        self.hits += sum(1 for k in keys if k in found)
        pending = list(todo.items())
        for start in range(0, len(pending), self.batch_size):
            chunk = pending[start:start + self.batch_size]
            answers = call([p for _, p in chunk])
            if len(answers) != len(chunk):
                raise RuntimeError(f"judge {self.identity} returned {len(answers)} answers for "
                                   f"{len(chunk)} inputs")
            fresh = {key: encode(a) for (key, _), a in zip(chunk, answers)}
            self.cache.put_many(fresh)
            found.update(fresh)
            self.judged += len(chunk)
            if self.on_batch is not None:
                self.on_batch(kind, start + len(chunk), len(pending))
        return [decode(found[k]) for k in keys]

    def map_artifacts(self, responses, *, candidates=None):
        responses = check_responses(responses)
        tag = candidates_tag(candidates)
        keys = [CacheKey(tag, response_sha256(r), self.identity, KIND_ARTIFACTS)
                for r in responses]
        return self._run(KIND_ARTIFACTS, keys, responses,
                         lambda batch: self.inner.map_artifacts(batch, candidates=candidates),
                         sorted, frozenset)

    def rate_explanations(self, items: list[ExplanationCase]) -> list[Rating]:
        items = list(items)
        keys = [CacheKey(c.item_id, response_sha256(c.response), self.identity, KIND_RATING)
                for c in items]
        return self._run(KIND_RATING, keys, items, self.inner.rate_explanations,
                         Rating.as_dict, Rating.from_dict)

    def attribute_causes(self, rationales) -> list[frozenset[str]]:
        rationales = check_responses(rationales)
        keys = [CacheKey(CAUSES_ITEM, response_sha256(r), self.identity, KIND_CAUSES)
                for r in rationales]
        return self._run(KIND_CAUSES, keys, rationales, self.inner.attribute_causes,
                         sorted, frozenset)
