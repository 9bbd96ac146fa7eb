"""`ensemble@1`: `rules@2`'s mapping plus `local-minilm@2`'s most confident ones (issue 18).

The rules read negation, generic statements and lists well but only know the phrasings they were
written for; the embedding judge knows no phrasing list but reads polarity poorly. The ensemble
keeps every artifact the rules map and adds an artifact the rules did not see when

- MiniLM's best clause reaches the artifact's *high* threshold: the lowest threshold at which
  MiniLM alone was at least `TARGET_PRECISION` precise on the dev part of the evaluation set (with
  at least `MIN_HITS` correct mappings there; otherwise the artifact is never added), shipped in
  ``thresholds/ensemble_v1.json`` (`calibrate.py --ensemble`); and
- the rules did not read the artifact as denied in that response ("no blur", "lighting looks
  consistent"), so the embedding judge never overrides an explicit denial.

LOKI ratings and SynCred causes are the rules judge's. Everything runs offline.
"""
from __future__ import annotations

import json
from pathlib import Path

from leaderboard.core.taxonomy import ARTIFACT_KEYS
from leaderboard.judges.base import Judge, JudgeError, check_candidates, check_responses

VERSION = "1"
THRESHOLDS_PATH = Path(__file__).resolve().parent / "thresholds" / f"ensemble_v{VERSION}.json"
TARGET_PRECISION = 0.9
MIN_HITS = 3


def load_high_thresholds(path: Path = THRESHOLDS_PATH) -> dict[str, float]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        return {k: float(doc["high_thresholds"][k]) for k in ARTIFACT_KEYS}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise JudgeError(f"cannot read ensemble thresholds from {path}: {exc}") from exc


class EnsembleJudge(Judge):
    name = "ensemble"
    version = VERSION

    def __init__(self) -> None:
        from leaderboard.judges.minilm import MiniLMJudge
        from leaderboard.judges.rules import RulesJudge

        self.rules = RulesJudge()
        self.minilm = MiniLMJudge()
        self.high = load_high_thresholds()

    def map_artifacts(self, responses, *, candidates=None):
        from leaderboard.judges.mapping import analyze

        responses = check_responses(responses)
        keys = check_candidates(candidates) if candidates is not None else list(ARTIFACT_KEYS)
        if not responses:
            return []
        col = {k: ARTIFACT_KEYS.index(k) for k in keys}
        scores = self.minilm.artifact_scores(responses, keys)
        out = []
        for response, row in zip(responses, scores, strict=True):
            seen = analyze(response, keys)
            extra = {k for k in keys if k not in seen.denied and row[col[k]] >= self.high[k]}
            out.append(seen.claimed | extra)
        return out

    def rate_explanations(self, items):
        return self.rules.rate_explanations(items)

    def attribute_causes(self, rationales):
        return self.rules.attribute_causes(rationales)
