"""Error analysis of one set of predictions on a split whose labels the caller may read (dev).

For every task a submission covers whose labels are classes, `analyse` returns:

* the **confusion matrix** (rows: the truth, columns: the decision), with the decision made the
  way the benchmark's scoring makes it: a detection row's submitted ``label`` when given, else its
  ``score`` against the benchmark's threshold (``score >= 0.5``; VCT²: ``score > 0.5``, the
  authors' rule, so a tie is real); a yes/no or choice row's answer (read from ``response`` by the
  authors' rules when ``answer`` is absent; unreadable answers are counted apart);
* **calibration** (detection tasks where every row has a score): the reliability bins and the
  expected calibration error with its bootstrap CI (`leaderboard.core.metrics.calibration`);
* the **errors**: the wrong items with the highest confidence in the wrong class first (a fake
  scored 0.02 is a more confident miss than one scored 0.45: confidence = the score for a real
  item, 1 - score for a fake); rows without a score follow in file order, as do every task's
  errors when the task has no scores. Each error carries the item's id, true label, decision,
  score and its media paths (relative to the pack).

Pure: no Flask, no database. It reveals labels item by item, so the server runs it on the dev
split only, for the submitting team (`leaderboard.server.access.visibility`).
"""
from __future__ import annotations

import numpy as np

from leaderboard.core.benchmarks import vct2
from leaderboard.core.extract import NOT_AN_OPTION
from leaderboard.core.metrics.calibration import N_BINS, ece_with_ci, reliability_bins
from leaderboard.core.metrics.confusion import confusion_matrix
from leaderboard.core.packs import Pack
from leaderboard.core.predictions import PredictionSet
from leaderboard.core.scoring import task_blocks
from leaderboard.core.table import Table

#: task kinds whose labels are classes (what a confusion matrix is drawn for)
CLASS_KINDS = ("detection", "yesno", "choice")
#: errors listed per task
MAX_ERRORS = 24


def detection_rule(benchmark_key: str) -> str:
    """The decision rule of a detection row, in words, as the benchmark's scoring applies it."""
    op = ">" if benchmark_key == "vct2" else "\u2265"
    return f'the submitted label when given, else fake when score {op} 0.5'


def detection_decisions(benchmark_key: str, block) -> np.ndarray:
    """Called fake per row, by the benchmark's scoring rule (`detection_rule`)."""
    if benchmark_key == "vct2":
        return vct2.decisions(block)
    return np.asarray(block.pred["decision"], dtype=bool)


def _detection(key: str, block, n_bins: int) -> dict:
    truth = np.asarray(block.truth["label"]).astype(str)
    called = detection_decisions(key, block)
    label = np.asarray(block.pred.get("label", np.full(len(block), -1)))
    score = np.asarray(block.pred.get("score", np.full(len(block), np.nan)), dtype=np.float64)
    # a row with neither label nor score has no decision: unanswered, not "real"
    decided = (label >= 0) | ~np.isnan(score)
    decision = np.where(decided, np.where(called, "fake", "real"), "")
    conf = confusion_matrix(truth, decision, labels=("fake", "real"))
    out = {"classes": ["fake", "real"], "confusion": conf.as_dict(),
           "decision_rule": detection_rule(key), "calibration": None,
           "calibration_note": None}
    has_score = ~np.isnan(score)
    known = np.isin(truth, ("fake", "real"))
    if has_score.all() and known.all() and len(block):
        y = truth == "fake"
        value, lo, hi, reps = ece_with_ci(y, score, n_bins=n_bins)
        out["calibration"] = {
            "n": len(block), "n_bins": n_bins, "ece": value, "ci_low": lo, "ci_high": hi,
            "resamples": reps,
            "bins": [{"lo": b.lo, "hi": b.hi, "n": b.n, "confidence": b.confidence,
                      "observed": b.observed} for b in reliability_bins(y, score,
                                                                        n_bins=n_bins)]}
    else:
        out["calibration_note"] = ("calibration needs a score on every row; "
                                   f"{int((~has_score).sum())} of {len(block)} rows have none")
    wrong = known & (decision != truth)
    # confidence in the wrong class: a real item's score, a fake item's 1 - score
    confidence = np.where(truth == "fake", 1.0 - score, score)
    out["_wrong"] = wrong
    out["_confidence"] = np.where(has_score, confidence, np.nan)
    out["_truth"], out["_decision"], out["_score"] = truth, decision, score
    return out


def _answers(block, kind: str, options: list[str]) -> dict:
    truth = np.asarray(block.truth["answer"]).astype(str)
    ans = np.asarray(block.pred.get("answer", np.full(len(block), -1 if kind == "yesno" else "")))
    if kind == "yesno":
        classes = ["yes", "no"]
        decision = np.where(ans == 1, "yes", np.where(ans == 0, "no", ""))
    else:
        classes = options
        decision = ans.astype(str)
    conf = confusion_matrix(truth, decision, labels=classes)
    wrong = np.isin(truth, classes) & (decision != truth)
    # a response read as naming none of the options is wrong, not unreadable: say which
    shown = np.where(decision == NOT_AN_OPTION, "none of the options", decision)
    return {"classes": classes, "confusion": conf.as_dict(),
            "decision_rule": ("the answer given, else the one read from the response by the "
                              "benchmark's rules; answers that are none of the classes "
                              "(unreadable, or naming no option) are counted apart"),
            "calibration": None, "calibration_note": "no scores: answers carry no confidence",
            "_wrong": wrong, "_confidence": np.full(len(block), np.nan), "_truth": truth,
            "_decision": shown, "_score": np.full(len(block), np.nan)}


def _options(block) -> list[str]:
    seen: set[str] = set()
    if "options" in block.item:
        for opts in block.item["options"]:
            seen.update((opts or {}).keys())
    seen.update(v for v in np.asarray(block.truth["answer"]).astype(str).tolist() if v)
    return sorted(seen)


def _errors(items: Table, block, a: dict, max_errors: int) -> tuple[list[dict], int]:
    wrong, conf = a.pop("_wrong"), a.pop("_confidence")
    truth, decision, score = a.pop("_truth"), a.pop("_decision"), a.pop("_score")
    rows = np.flatnonzero(wrong)
    scored = rows[~np.isnan(conf[rows])]
    unscored = rows[np.isnan(conf[rows])]
    # most confident first; ties by the item's position, so the order is stable
    order = np.concatenate([scored[np.argsort(-conf[scored], kind="stable")], unscored])
    has_media = "media" in items.columns
    out = []
    for i in order[:max_errors].tolist():
        item_id = str(block.ids[i])
        media = items.value("media", items.index[item_id]) if has_media else None
        out.append({"id": item_id, "label": str(truth[i]), "decision": str(decision[i]) or None,
                    "score": None if np.isnan(score[i]) else float(score[i]),
                    "confidence": None if np.isnan(conf[i]) else float(conf[i]),
                    "modality": str(block.item["modality"][i]),
                    "media": [str(m) for m in (media or [])]})
    return out, int(len(rows))


def analyse(pack: Pack, split: str, preds: PredictionSet, *, labels: Table | None = None,
            n_bins: int = N_BINS, max_errors: int = MAX_ERRORS) -> list[dict]:
    """Per covered task whose labels are classes, in the pack's task order: ``task``, ``kind``,
    ``n``, ``classes``, ``confusion`` (`Confusion.as_dict`), ``decision_rule``, ``calibration``
    (None with ``calibration_note`` saying why), ``errors`` (at most ``max_errors``) and
    ``errors_total``. ``labels``: the split's label table (default: the pack's own file)."""
    items = pack.items(split)
    out = []
    for task, block, complete in task_blocks(pack, split, preds, labels=labels):
        if task.kind not in CLASS_KINDS or len(block) == 0:
            continue
        if task.kind == "detection":
            if "label" not in block.truth:
                continue
            a = _detection(pack.key, block, n_bins)
        elif "answer" in block.truth:
            a = _answers(block, task.kind, _options(block) if task.kind == "choice" else [])
        else:
            continue
        errors, total = _errors(items, block, a, max_errors)
        out.append({"task": task.key, "kind": task.kind, "n": len(block), "complete": complete,
                    "modalities": sorted(set(np.asarray(block.item["modality"]).tolist())),
                    **a, "errors": errors, "errors_total": total,
                    "errors_by_confidence": task.kind == "detection"
                    and a["calibration"] is not None})
    return out
