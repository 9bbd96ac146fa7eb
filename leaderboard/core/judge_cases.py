"""What the scoring core hands a judge: one case per free-text answer (benchmark spec, "Judges").

These are part of the benchmarks' definitions (a LOKI explanation is rated against its human
annotation on the modality's rubric, `leaderboard.core.rubric`; a TriDF OEQ response is mapped
onto the artifact taxonomy, `leaderboard.core.taxonomy`), so they live in the core; the judges
(`leaderboard.judges`) import them from here and the core never imports a judge.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from leaderboard.core import rubric
from leaderboard.core.taxonomy import ARTIFACT_KEYS, validate_keys


@dataclass(frozen=True)
class ExplanationCase:
    """One LOKI abnormal-explanation item: the response and the human annotation it is rated on.

    `reference` is validated at construction (`rubric.normalize_reference`); `groups` holds the
    normalized ``{group: (desc, ...)}`` form every backend reads.
    """

    item_id: str
    response: str
    modality: str
    reference: Mapping
    groups: Mapping[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.item_id, str) or not self.item_id:
            raise ValueError(f"item_id must be a non-empty string, got {self.item_id!r}")
        if not isinstance(self.response, str):
            raise ValueError(f"response of item {self.item_id!r} must be a string, "
                             f"got {type(self.response).__name__}")
        groups = rubric.normalize_reference(self.reference, modality=self.modality)
        object.__setattr__(self, "groups", MappingProxyType(groups))


@dataclass(frozen=True)
class ArtifactCase:
    """One TriDF OEQ response to map. `candidates` must depend only on the item (its modality),
    because cached mappings are keyed by item, response and judge, not by candidates."""

    item_id: str
    response: str
    candidates: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.item_id, str) or not self.item_id:
            raise ValueError(f"item_id must be a non-empty string, got {self.item_id!r}")
        if not isinstance(self.response, str):
            raise ValueError(f"response of item {self.item_id!r} must be a string")
        if self.candidates is not None:
            object.__setattr__(self, "candidates", tuple(check_candidates(self.candidates)))



def check_candidates(candidates) -> list[str]:
    """Validate candidate artifact keys (taxonomy order kept); ValueError on unknown keys."""
    keys = validate_keys(candidates, what="candidates")
    if not keys:
        raise ValueError("candidates must name at least one artifact key")
    return [k for k in ARTIFACT_KEYS if k in keys]
