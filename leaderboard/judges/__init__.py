"""Judges for explanation metrics (benchmark spec, "Judges"): TriDF artifact mapping and LOKI
explanation rating. See `base.Judge` for the contract and `registry.get_judge` for the backends
(`rules`, `local-minilm`, `openai`)."""
from leaderboard.judges.base import ArtifactCase, ExplanationCase, Judge, JudgeError, Rating
from leaderboard.judges.cache import CacheKey, JudgeCache, MemoryJudgeCache, judge_batch
from leaderboard.judges.registry import JUDGES, get_judge

__all__ = ["ArtifactCase", "CacheKey", "ExplanationCase", "JUDGES", "Judge", "JudgeCache",
           "JudgeError", "MemoryJudgeCache", "Rating", "get_judge", "judge_batch"]
