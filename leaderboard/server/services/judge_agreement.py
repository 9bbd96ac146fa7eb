"""How far the offline judges are from the LLM judge on a benchmark's stored responses (issue 18).

An organiser deciding which judge is official (TriDF's open-ended answers; `docs/judges.md`)
compares the offline judges (`rules`, `local-minilm`) with the configured
OpenAI-compatible judge on the free-text answers teams actually submitted:

- `stored_responses`: the (candidates, response) pairs a judge would map, collected by scoring
  each scored submission with a recording judge that answers nothing (the scoring core decides
  which answers need a judge and with which candidates: the item's modality).
- `report`: per-artifact Cohen's kappa of each offline judge against the reference judge
  (`leaderboard.judges.agreement`). The reference's mappings come from the judge cache
  (`judge_output`); with ``fill=True`` the responses it has not judged yet are sent to it (at most
  ``limit`` responses in all; that costs API calls), and its answers are cached for scoring too.
  Without ``fill`` (the admin page) nothing is sent anywhere: the report covers the responses the
  reference judge has already mapped.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.taxonomy import ARTIFACT_KEYS
from leaderboard.judges.agreement import compare
from leaderboard.judges.base import Judge, JudgeError, Rating, check_candidates, check_responses
from leaderboard.judges.cache import KIND_ARTIFACTS, CacheKey, response_sha256
from leaderboard.judges.caching import CachingJudge, candidates_tag
from leaderboard.server.db import get_db
from leaderboard.server.models import Benchmark, LabelSet, Submission
from leaderboard.server.services import judging
from leaderboard.server.services import scoring_service as svc
from leaderboard.server.services.judge_cache import ShortSessionCache

DEFAULT_LIMIT = 300
OFFLINE = ("rules", "local-minilm")


class _Recorder(Judge):
    """Answers nothing and remembers what it was asked to map, in first-seen order."""

    name, version = "recorder", "0"

    def __init__(self) -> None:
        self.seen: dict[tuple[tuple[str, ...], str], None] = {}

    def map_artifacts(self, responses, *, candidates=None):
        keys = tuple(check_candidates(candidates)) if candidates is not None else ARTIFACT_KEYS
        responses = check_responses(responses)
        for response in responses:
            if response.strip():
                self.seen.setdefault((tuple(keys), response), None)
        return [frozenset()] * len(responses)

    def rate_explanations(self, items):
        return [Rating.refusal(case.modality) for case in items]

    def attribute_causes(self, rationales):
        return [frozenset()] * len(check_responses(rationales))


def stored_responses(session: Session, bench: Benchmark, cfg: Mapping, *,
                     limit: int | None = None) -> list[tuple[tuple[str, ...], str]]:
    """Distinct (candidates, response) pairs of the benchmark's scored submissions that need a
    judge, ordered by a digest of the response (a stable sample when ``limit`` cuts)."""
    from pathlib import Path

    recorder = _Recorder()
    subs = session.scalars(select(Submission).where(
        Submission.benchmark_id == bench.id, Submission.status == "scored",
        Submission.kind == "predictions").order_by(Submission.id)).all()
    for sub in subs:
        ls = session.scalar(select(LabelSet).where(LabelSet.benchmark_id == bench.id,
                                                   LabelSet.split == sub.split))
        if ls is None:
            continue
        claim = svc.Claim(sub.id, bench.key, sub.split, bench.pack_path,
                          Path(cfg["DATA_DIR"]) / sub.file_path, ls.ciphertext, ls.id)
        svc.compute(claim, label_keys=cfg["LABEL_KEYS"], judge=recorder)
    pairs = sorted(recorder.seen, key=lambda p: hashlib.sha256(
        (",".join(p[0]) + "\n" + p[1]).encode()).hexdigest())
    return pairs[:limit] if limit is not None else pairs


def _map(judge: Judge, pairs) -> list[frozenset[str]]:
    """The judge's mapping of every pair, one call per candidate set."""
    out: list[frozenset[str] | None] = [None] * len(pairs)
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, (cands, _) in enumerate(pairs):
        groups.setdefault(cands, []).append(i)
    for cands, idx in groups.items():
        for i, mapped in zip(idx, judge.map_artifacts([pairs[i][1] for i in idx],
                                                      candidates=list(cands)), strict=True):
            out[i] = frozenset(mapped)
    return out


def cached_mappings(cache, identity: str, pairs) -> dict[int, frozenset[str]]:
    """Mappings of ``pairs`` (by index) that ``identity`` has in ``cache`` (misses left out)."""
    keys = [CacheKey(candidates_tag(list(c)), response_sha256(r), identity, KIND_ARTIFACTS)
            for c, r in pairs]
    found = cache.get_many(keys)
    return {i: frozenset(found[k]) for i, k in enumerate(keys) if k in found}


def report(session: Session, bench: Benchmark, cfg: Mapping, *, reference: str = "openai",
           judges=OFFLINE, limit: int = DEFAULT_LIMIT, fill: bool = False, cache=None) -> dict:
    """Agreement of each judge in ``judges`` with ``reference`` (module docstring). ``cache``:
    a bulk judge cache (default: the server's database cache in short transactions)."""
    cache = cache if cache is not None else ShortSessionCache(get_db())
    ref_identity = judging.identity_for(reference, cfg)
    pairs = stored_responses(session, bench, cfg, limit=limit)
    if fill and pairs:
        ref = CachingJudge(judging.build_judge(ref_identity, cfg), cache)
        _map(ref, pairs)
    have = cached_mappings(cache, ref_identity, pairs)
    used = [pairs[i] for i in sorted(have)]
    ref_maps = [have[i] for i in sorted(have)]
    out = {"benchmark": bench.key, "reference": ref_identity, "responses": len(pairs),
           "judged_by_reference": len(used), "judges": {}}
    for spec in judges:
        try:
            identity = judging.identity_for(spec, cfg)
            if identity == ref_identity:
                continue
            mapped = _map(judging.build_judge(identity, cfg), used) if used else []
        except JudgeError as exc:  # e.g. the MiniLM model is not installed on this server
            out["judges"][str(spec)] = {"error": str(exc)}
            continue
        out["judges"][identity] = compare([c for c, _ in used], ref_maps, mapped)
    return out
