"""Agreement between artifact-mapping judges: per-artifact Cohen's kappa (issue 18).

An organiser who has an LLM judge configured (the papers' protocol: TriDF 3.4 maps free text with
an external LLM) wants to know how far an offline judge is from it on *their* submissions before
making either official. `compare` takes the mappings of a reference judge and of other judges on
the same responses and reports, per artifact and pooled over all (response, artifact) pairs:

- Cohen's kappa (`cohen_kappa`): (p_o - p_e) / (1 - p_e) on the binary "artifact mapped"
  decisions, chance agreement p_e from both judges' marginals. Undefined (None) when p_e = 1,
  i.e. both judges never (or always) map the artifact: nothing to agree on beyond chance.
- raw agreement p_o, how often each judge maps the artifact, and the other judge's precision and
  recall taking the reference as truth.

Only pairs where the artifact is a candidate of the response (its item's modality) count.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two binary raters; None when chance agreement is 1 (see module doc).

    >>> cohen_kappa([True, True, False, False], [True, False, False, False])
    0.5
    """
    if len(a) != len(b):
        raise ValueError(f"raters must rate the same items, got {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return None
    both = sum(1 for x, y in zip(a, b, strict=True) if x and y)
    neither = sum(1 for x, y in zip(a, b, strict=True) if not x and not y)
    pa, pb = sum(map(bool, a)) / n, sum(map(bool, b)) / n
    p_o = (both + neither) / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1 - p_e)


@dataclass(frozen=True)
class Stats:
    n: int
    kappa: float | None
    agreement: float | None
    reference_rate: float | None
    other_rate: float | None
    precision: float | None
    recall: float | None

    def as_dict(self) -> dict:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in vars(self).items()}


def _stats(ref: list[bool], other: list[bool]) -> Stats:
    n = len(ref)
    if n == 0:
        return Stats(0, None, None, None, None, None, None)
    tp = sum(1 for r, o in zip(ref, other, strict=True) if r and o)
    agree = sum(1 for r, o in zip(ref, other, strict=True) if r == o)
    return Stats(n, cohen_kappa(ref, other), agree / n, sum(ref) / n, sum(other) / n,
                 tp / sum(other) if any(other) else None, tp / sum(ref) if any(ref) else None)


def compare(candidates: Sequence[Sequence[str]], reference: Sequence[frozenset[str]],
            other: Sequence[frozenset[str]]) -> dict:
    """Per-artifact and pooled `Stats` of ``other`` against ``reference``: one mapping per
    response, ``candidates[i]`` the artifact keys response i could be mapped to."""
    if not len(candidates) == len(reference) == len(other):
        raise ValueError("candidates, reference and other must have one entry per response")
    per: dict[str, tuple[list[bool], list[bool]]] = {}
    pooled: tuple[list[bool], list[bool]] = ([], [])
    for keys, ref, oth in zip(candidates, reference, other, strict=True):
        for key in keys:
            r, o = key in ref, key in oth
            bucket = per.setdefault(key, ([], []))
            for target in (bucket, pooled):
                target[0].append(r)
                target[1].append(o)
    return {"responses": len(candidates), "overall": _stats(*pooled).as_dict(),
            "per_artifact": {k: _stats(*v).as_dict() for k, v in per.items()}}
