"""What a modality board compares: task kinds, chance levels and the per-task normalisation.

**Kinds.** A modality board is one modality x one *board kind* x one split. The board kind of a
task comes from its ``kind`` in the benchmark definition (`leaderboard.core.benchmarks.base.KINDS`):
``detection`` -> detection; ``artifacts`` (TriDF's open-ended questions: name and place the
artifacts) -> localization; ``yesno``, ``choice``, ``multiselect`` -> question answering;
``explanation`` -> explanation. Readers compare detectors within a kind of task, not across them.

**Normalisation.** Each task's headline ``v`` is mapped so that chance is 0 and perfect is 1:
``(v - chance) / (perfect - chance)``, capped at 1 and *not* floored (below chance is negative,
so a mean is not flattered). ``perfect`` is the metric's declared best bound (``upper`` when
higher is better, else ``lower``). ``chance`` is the expected headline of a uniformly random
answer, from the table below (closed forms, each stated with its reason); a metric with no such
closed form (free-text scores: LOKI's explanation score, TriDF's F0.5) uses its worst declared
bound, and says so. A metric ranked by its distance from 0 (NBI) maps to ``1 - |v| / max |bound|``.
"""
from __future__ import annotations

import re

#: task kind (benchmark definition) -> board kind
KIND_OF = {"detection": "detection", "artifacts": "localization", "yesno": "qa",
           "choice": "qa", "multiselect": "qa", "explanation": "explanation"}
#: board kinds in display order, with their titles
KIND_ORDER = ("detection", "localization", "qa", "explanation")
KIND_TITLES = {"detection": "Detection", "localization": "Localization",
               "qa": "Question answering", "explanation": "Explanation"}

#: options of single-answer choice tasks whose count the pack does not declare (the authors'
#: releases): LOKI's multiple choice picks one of two media, abnormal detail selection one of
#: four details
CHOICE_OPTIONS = {("loki", "multiple_choice"): 2, ("loki", "abnormal_selection"): 4}
_TWO_WAY = ("detection", "yesno", "artifacts")
_ACCURACIES = ("accuracy", "balanced_accuracy", "mean_accuracy", "auc", "roc_auc")
_TPR_AT = re.compile(r"^tpr_at_fpr_(\d+(?:\.\d+)?)$")


def board_kind(task: dict) -> str | None:
    """The board kind of a task dict (None: a kind no board shows)."""
    return KIND_OF.get(task.get("kind", ""))


def chance_level(benchmark: str, task: dict, metric: str, spec: dict) -> tuple[float, str]:
    """(chance level, why) of a task's headline: see the module docstring."""
    kind = task.get("kind")
    if kind in _TWO_WAY and metric in _ACCURACIES:
        return 0.5, "a fair coin's expected accuracy on a two-way decision"
    if kind == "detection" and metric in ("fpr", "tpr"):
        return 0.5, "a fair coin's expected rate"
    m = _TPR_AT.match(metric)
    if kind == "detection" and m:
        return float(m.group(1)) / 100, "a random score: TPR equals FPR"
    if kind == "multiselect" and metric == "mcq_score":
        return 0.0, "a random subset: its expected hits and false picks cancel"
    options = task.get("options") or CHOICE_OPTIONS.get((benchmark, task.get("key")))
    if kind == "choice" and metric == "accuracy" and options:
        return 1.0 / int(options), f"one of {int(options)} options picked at random"
    hib = bool(spec.get("higher_is_better", True))
    worst = spec.get("lower", 0.0) if hib else spec.get("upper", 1.0)
    worst = (0.0 if hib else 1.0) if worst is None else float(worst)
    return worst, "no closed-form chance level: the metric's worst value"


def perfect_value(spec: dict) -> float:
    hib = bool(spec.get("higher_is_better", True))
    best = spec.get("upper", 1.0) if hib else spec.get("lower", 0.0)
    return (1.0 if hib else 0.0) if best is None else float(best)


def normalise(value: float | None, col: dict) -> float | None:
    """A headline mapped onto chance 0 / perfect 1 (capped at 1, not floored); None for n/a.

    ``col``: {"chance", "perfect"} or, for a metric ranked by magnitude, {"by_magnitude": True,
    "lower", "upper"}."""
    if value is None or value != value:
        return None
    if col.get("by_magnitude"):
        lo, hi = col.get("lower"), col.get("upper")
        span = max(abs(-1.0 if lo is None else lo), abs(1.0 if hi is None else hi)) or 1.0
        return min(1.0, 1.0 - abs(value) / span)
    chance, perfect = col["chance"], col["perfect"]
    if perfect == chance:
        return None
    return min(1.0, (value - chance) / (perfect - chance))


__all__ = ["CHOICE_OPTIONS", "KIND_OF", "KIND_ORDER", "KIND_TITLES", "board_kind",
           "chance_level", "normalise", "perfect_value"]
