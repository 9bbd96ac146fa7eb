"""LOKI's abnormal-explanation rubric (LOKI, section 3.3 and appendix C.2, figure 12).

The authors' GPT-4o judge rates a response against the human annotation on criteria that depend
on the modality; the total is normalized to 0-100. Every modality here sums to 20 points:

- image: overall, completeness, correctness, plausibility (0-5 each)
- 3d: texture_correctness, texture_plausibility, normal_correctness, normal_plausibility (0-5 each)
- video: correctness (0-10), explanation_quality (0-5), plausibility (0-5)

The paper's scale is 1-5; we use 0-5 so that a response that refuses or calls the item authentic
scores 0 on every criterion (the benchmark spec's rule).

The reference annotation is a mapping of annotation groups to lists of ``{"desc": str, ...}``
items (a bare string is accepted as ``{"desc": s}``): "global" and "regional" (image, regions carry
``"region": [x, y, w, h]``), "global" and "segment" (video), "texture" and "normal" (3D).
"""
from __future__ import annotations

import re
from collections.abc import Mapping

CRITERIA: dict[str, dict[str, int]] = {
    "image": {"overall": 5, "completeness": 5, "correctness": 5, "plausibility": 5},
    "3d": {"texture_correctness": 5, "texture_plausibility": 5,
           "normal_correctness": 5, "normal_plausibility": 5},
    "video": {"correctness": 10, "explanation_quality": 5, "plausibility": 5},
}
MODALITIES = tuple(CRITERIA)
REFERENCE_GROUPS = {
    "image": ("global", "regional"),
    "video": ("global", "segment", "regional"),
    "3d": ("texture", "normal"),
}


def check_modality(modality: str) -> str:
    if modality not in CRITERIA:
        raise ValueError(f"modality must be one of {MODALITIES}, got {modality!r}")
    return modality


def normalize_reference(reference: Mapping, *, modality: str) -> dict[str, tuple[str, ...]]:
    """Return ``{group: (desc, ...)}`` for the groups `modality` uses; raise ValueError if invalid.

    Unknown groups are rejected (a typo would silently drop annotations); empty groups are kept
    empty. At least one description is required: a rating against nothing is undefined.
    """
    check_modality(modality)
    if not isinstance(reference, Mapping):
        raise ValueError(f"reference must be a mapping of groups, got {type(reference).__name__}")
    allowed = REFERENCE_GROUPS[modality]
    unknown = sorted(set(reference) - set(allowed))
    if unknown:
        raise ValueError(f"reference group(s) {unknown} not allowed for {modality}; allowed: "
                         f"{list(allowed)}")
    out: dict[str, tuple[str, ...]] = {}
    for group in allowed:
        items = reference.get(group) or []
        if isinstance(items, (str, Mapping)):
            items = [items]
        descs = []
        for i, item in enumerate(items):
            desc = item if isinstance(item, str) else (
                item.get("desc") if isinstance(item, Mapping) else None)
            if not isinstance(desc, str) or not desc.strip():
                raise ValueError(f"reference[{group!r}][{i}] needs a non-empty 'desc' string, "
                                 f"got {item!r}")
            descs.append(desc.strip())
        out[group] = tuple(descs)
    if not any(out.values()):
        raise ValueError(f"reference for {modality} has no descriptions in {list(allowed)}")
    return out


def total_of(scores: Mapping[str, float], *, modality: str) -> float:
    """Sum of the criteria normalized to 0-100; ValueError on a missing or out-of-range one."""
    crit = CRITERIA[check_modality(modality)]
    missing = sorted(set(crit) - set(scores))
    if missing:
        raise ValueError(f"scores for {modality} miss criteria {missing}")
    total = 0.0
    for name, top in crit.items():
        value = float(scores[name])
        if not 0.0 <= value <= top:
            raise ValueError(f"score {name!r} must be in [0, {top}], got {scores[name]!r}")
        total += value
    return 100.0 * total / sum(crit.values())


def zero_scores(modality: str) -> dict[str, float]:
    return {name: 0.0 for name in CRITERIA[check_modality(modality)]}


# A refusal, or a verdict that the item is real, earns 0 (LOKI C.2 / benchmark spec). Only the
# opening of the response is inspected, where models state the verdict; the patterns are
# anchored on whole phrases so "not authentic" or "not real" never count as "authentic".
_REFUSAL = re.compile(
    r"\b(i\s*(?:can(?:not|'t|\u2019t)|am\s+unable|'m\s+unable|\u2019m\s+unable|am\s+not\s+able|"
    r"won't|will\s+not)\s+(?:help|assist|determine|analy[sz]e|tell|say|answer|comply|provide|"
    r"identify|verify|evaluate|assess|view|see)|as\s+an\s+ai\b[^.]*\b(?:can(?:not|'t)|unable))",
    re.I)
_SUBJECT = (r"(?:the\s+|this\s+)?(?:image|video|picture|photo(?:graph)?|content|3d\s+model|model|"
            r"object|clip|footage|item|media|sample|it|this)")
_AUTHENTIC = re.compile(
    _SUBJECT + r"\s+(?:is|'s|\u2019s|appears(?:\s+to\s+be)?|seems(?:\s+to\s+be)?|looks|"
    r"is\s+(?:most\s+)?likely|is\s+probably)\s+(?:\w+ly\s+)?(?:an?\s+)?"
    r"(?:authentic|real|genuine|not\s+(?:ai[- ]generated|synthetic|fake|manipulated|generated))\b"
    r"(?!-)|^\W*(?:likely\s+)?(?:authentic|real|genuine)\b(?!-)|"
    r"\bno\s+(?:clear\s+|obvious\s+|visible\s+)?(?:signs?|evidence|indications?)\s+of\s+"
    r"(?:ai[- ]generation|ai|manipulation|synthesis|generation|tampering|being\s+ai[- ]generated)"
    r"\s*[.!]",
    re.I)


def is_refusal_or_authentic(response: str, *, head_chars: int = 300) -> bool:
    """True when the response refuses to answer or claims the item is authentic.

    Empty responses count as refusals. Deterministic and conservative: it looks only at the first
    `head_chars` characters, where the verdict normally sits.
    """
    head = response.strip()[:head_chars]
    if not head:
        return True
    return bool(_REFUSAL.search(head) or _AUTHENTIC.search(head))


def scores_from_support(groups: Mapping[str, list[float]], *, modality: str, hits: float,
                        precision: float) -> dict[str, float]:
    """Rubric scores from evidence measured by an offline judge (rules or embeddings).

    `groups` maps each annotation group to the support of each of its items in [0, 1] (how well
    the response covers that annotated anomaly); `hits` is the fraction of all items whose support
    passed the judge's hit threshold; `precision` is the fraction of the response's claims that
    some annotation supports. The mapping onto LOKI's criteria (C.2: identification, explanation,
    plausibility) is ours:

    - image: overall = mean support of "global" items (all items if none), completeness = hits,
      correctness = mean support of all items, plausibility = precision.
    - video: correctness (0-10) = mean support, explanation_quality = hits,
      plausibility = precision.
    - 3d: <part>_correctness = mean support of that part's items (precision when the part has no
      annotation: nothing to find, only invented flaws to avoid), <part>_plausibility = precision.
    """
    check_modality(modality)
    for name, value in (("hits", hits), ("precision", precision)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    every = [s for group in groups.values() for s in group]
    if not every:
        raise ValueError("support needs at least one annotation item")
    mean_all = sum(every) / len(every)

    def mean(group: str, fallback: float) -> float:
        items = groups.get(group) or []
        return sum(items) / len(items) if items else fallback

    if modality == "image":
        return {"overall": 5 * mean("global", mean_all), "completeness": 5 * hits,
                "correctness": 5 * mean_all, "plausibility": 5 * precision}
    if modality == "video":
        return {"correctness": 10 * mean_all, "explanation_quality": 5 * hits,
                "plausibility": 5 * precision}
    return {"texture_correctness": 5 * mean("texture", precision),
            "texture_plausibility": 5 * precision,
            "normal_correctness": 5 * mean("normal", precision),
            "normal_plausibility": 5 * precision}
