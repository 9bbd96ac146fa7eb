"""The judge interface: what every backend promises (benchmark spec, "Judges").

A judge reads free text. It does two jobs:

- `map_artifacts`: TriDF OEQ (section 3.4): map each response onto the 27-artifact taxonomy
  (`leaderboard.core.taxonomy`), restricted to `candidates` when given (the item's modality).
- `rate_explanations`: LOKI abnormal explanation (appendix C.2): rate each response against the
  human annotation on the modality's rubric (`rubric.CRITERIA`), total normalized to 0-100.

Every number a judge produces carries `identity` (``name@version``). The version changes whenever
the prompts, thresholds, rules or model change, so a leaderboard column never mixes judges.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from leaderboard.core import rubric

# The cases a judge reads are part of the benchmarks' definitions, so they live in the core.
from leaderboard.core.judge_cases import (  # noqa: F401
    ArtifactCase,
    ExplanationCase,
    check_candidates,
)


class JudgeError(RuntimeError):
    """A judge could not produce an answer: endpoint down, malformed output after retries,
    model files missing, unknown judge name. The message says which and what to check."""


@dataclass(frozen=True)
class Rating:
    """Per-criterion scores on each criterion's own scale, and their total normalized to 0-100.

    `refused` is True when the response refused or called the item authentic (all scores 0).
    """

    modality: str
    scores: Mapping[str, float]
    total: float
    refused: bool = False
    rationale: str | None = None

    @classmethod
    def from_scores(cls, scores: Mapping[str, float], *, modality: str, refused: bool = False,
                    rationale: str | None = None) -> Rating:
        total = rubric.total_of(scores, modality=modality)
        crit = rubric.CRITERIA[modality]
        clean = {name: round(float(scores[name]), 4) for name in crit}
        return cls(modality, MappingProxyType(clean), round(total, 4), refused, rationale)

    @classmethod
    def refusal(cls, modality: str, rationale: str = "refused or called the item authentic"
                ) -> Rating:
        return cls.from_scores(rubric.zero_scores(modality), modality=modality, refused=True,
                               rationale=rationale)

    def as_dict(self) -> dict:
        return {"modality": self.modality, "scores": dict(self.scores), "total": self.total,
                "refused": self.refused, "rationale": self.rationale}

    @classmethod
    def from_dict(cls, data: Mapping) -> Rating:
        return cls.from_scores(data["scores"], modality=data["modality"],
                               refused=bool(data.get("refused", False)),
                               rationale=data.get("rationale"))


class Judge:
    """Base class of every judge backend. Subclasses set `name` and `version` and implement the
    two methods; both return one result per input, in input order."""

    name: str = ""
    version: str = ""

    @property
    def identity(self) -> str:
        return f"{self.name}@{self.version}"

    def map_artifacts(self, responses: list[str], *, candidates: list[str] | None = None
                      ) -> list[frozenset[str]]:
        raise NotImplementedError

    def rate_explanations(self, items: list[ExplanationCase]) -> list[Rating]:
        raise NotImplementedError

    def attribute_causes(self, rationales: list[str]) -> list[frozenset[str]]:
        """SynCred false-negative causes named by each rationale (`judges.causes.CAUSES` keys).
        Optional: a backend without it raises NotImplementedError and the metric stays pending."""
        raise NotImplementedError(f"judge {self.identity} does not attribute SynCred causes")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identity}>"


def check_responses(responses) -> list[str]:
    if isinstance(responses, str):
        raise ValueError("responses must be a list of strings, got a single string")
    responses = list(responses)
    for i, r in enumerate(responses):
        if not isinstance(r, str):
            raise ValueError(f"responses[{i}] must be a string, got {type(r).__name__}")
    return responses
