"""TriDF's columns as the TRIDENT challenge kit computes them, and the kit's composite (TCS).

The authors' challenge (TRIDENT, j1anglin/TRIDENT_MM26MGC at 985d8fbc, ``evaluate_predictions.py``
and ``compute_tcs.py``) scores the same four tasks with its own readers and rules, which differ
from the TriDF paper's code (`leaderboard.core.benchmarks.tridf`):

* ``trident_accuracy`` (TFQ): the answer is read by ``_normalize_tf_answer``
  (`tridf_readers.kit_tf_answer`: "true"/"false" in the first two lines); "yes"/"no" do not read.
* ``trident_mcq_score`` (MCQ): read by ``_normalize_mc_answer`` (`kit_mc_letters`: A-E standing
  alone in the first three lines), scored by ``_score_mcq_selection``: the TriDF score clamped at 0.
* ``trident_accuracy`` (OEQ B): the decision by ``_parse_typeb_label`` (`kit_detection`: the
  first non-empty line only).
* ``trident_chair``, ``trident_hal``, ``trident_f05`` (OEQ B): ``score_oeq_artifacts`` without
  the "fake called authentic" CHAIR penalty of ``cal_score.py``. Cover is the same as ``cover``;
  OEQ A needs no kit column (the two codes agree there).

A structured answer (``answer``, ``label``) stands for the kit's pre-parsed fields
(``parsed_answer``, ``parsed_choices``, ``parsed_label``), which the kit reads before the text.
Records cover the whole task and each modality (the kit reports per modality).

TCS = 0.4 S_Det + 0.3 S_Hal + 0.3 S_Perc per modality (``compute_tcs_from_tasks``) with
S_Det = 100 trident_accuracy(OEQ B), S_Hal = 100 (f05(OEQ A) + trident_f05(OEQ B)) / 2 and
S_Perc = 100 (0.5 trident_accuracy(TFQ) + 0.5 trident_mcq_score).
"""
from __future__ import annotations

import numpy as np

from leaderboard.core import tridf_readers as rd
from leaderboard.core.benchmarks.base import Block, ScoringContext
from leaderboard.core.benchmarks.common import mean as _mean
from leaderboard.core.benchmarks.common import proportion
from leaderboard.core.metrics import hallucination
from leaderboard.core.metrics.composite import tridf_tcs
from leaderboard.core.records import MetricRecord

MODALITIES = ("image", "video", "audio")
COMPOSITE_TASK = "composite"
SELF_MAPPED = "self-mapped"
#: (task, metric) of the five inputs of the TCS, in `tridf_tcs`'s keyword order
TCS_INPUTS = (("oeq_b", "trident_accuracy"), ("oeq_a", "f05"), ("oeq_b", "trident_f05"),
              ("tfq", "trident_accuracy"), ("mcq", "trident_mcq_score"))


def _slices(block: Block) -> list[tuple[dict, np.ndarray]]:
    modality = block.item["modality"].astype(str)
    out = [({}, np.ones(len(block), dtype=bool))]
    return out + [({"modality": m}, modality == m) for m in MODALITIES if (modality == m).any()]


def _texts(block: Block) -> np.ndarray:
    if "response" in block.pred:
        return block.pred["response"]
    return np.full(len(block), None, dtype=object)


def tfq_records(block: Block, truth_yes: np.ndarray, ctx: ScoringContext) -> list[MetricRecord]:
    """``trident_accuracy`` of TFQ: the kit's reading of free text; structured answers as given."""
    answer = block.pred["answer"]  # int8: 1 yes, 0 no, -1 none
    from_text = block.pred.get("from_response", np.zeros(len(block), dtype=bool))
    texts = _texts(block)
    read = answer.copy()
    for i in np.flatnonzero(from_text):
        v = rd.kit_tf_answer(texts[i]) if isinstance(texts[i], str) else None
        read[i] = -1 if v is None else int(v)
    ok = (read >= 0) & (read == truth_yes)
    return [proportion("tfq", "trident_accuracy", slc, ok[m], ctx) for slc, m in _slices(block)]


def mcq_records(block: Block, correct: np.ndarray, offered: np.ndarray,
                ctx: ScoringContext) -> list[MetricRecord]:
    """``trident_mcq_score``: the kit's letters from free text, the clamped TriDF score."""
    letters = block.task_letters or rd.LETTERS
    selected = block.pred["selected"].copy()
    from_text = block.pred.get("from_response", np.zeros(len(block), dtype=bool))
    texts = _texts(block)
    for i in np.flatnonzero(from_text):
        got = set(rd.kit_mc_letters(texts[i])) if isinstance(texts[i], str) else set()
        selected[i] = [c in got for c in letters]
    scores = kit_mcq_scores(selected, correct, offered)
    out = [_mean("mcq", "trident_mcq_score", slc, scores[m], ctx) for slc, m in _slices(block)]
    return [r for r in out if r is not None]


def kit_mcq_scores(selected: np.ndarray, correct: np.ndarray, offered: np.ndarray) -> np.ndarray:
    """The kit's per-question score (``_score_mcq_selection`` in ``evaluate_predictions.py``).

    M is the number of options the question lists (``_infer_mcq_total_options``); unlike TriDF's
    scorer, the kit keeps a selected letter the question does not list and penalises it as a wrong
    pick, and divides by max(M - K, 1); the score is clamped at 0.
    """
    k = correct.sum(axis=1)
    m = offered.sum(axis=1)
    hits = (selected & correct).sum(axis=1)
    false_picks = (selected & ~correct).sum(axis=1)
    score = np.divide(hits, k, out=np.zeros(len(k)), where=k > 0) - false_picks / np.maximum(m - k, 1)
    return np.maximum(score, 0.0)


def decisions(block: Block) -> tuple[np.ndarray, np.ndarray]:
    """OEQ B (called fake, decided) as the kit reads them: ``label``, else the first line."""
    label = block.pred.get("label", np.full(len(block), -1, dtype=np.int8))
    called_fake, decided = label == 1, label >= 0
    texts = _texts(block)
    for i in np.flatnonzero(~decided):
        verdict = rd.kit_detection(texts[i]) if isinstance(texts[i], str) else None
        if verdict is not None:
            decided[i], called_fake[i] = True, verdict == "fake"
    return called_fake, decided


def oeq_b_records(block: Block, predicted: np.ndarray, truth: np.ndarray, judge: str,
                  ctx: ScoringContext | None) -> list[MetricRecord]:
    """``trident_accuracy`` (and, when artifacts are mapped, ``trident_chair/hal/f05``) of OEQ B.

    ``predicted``/``truth`` are the mapped and annotated artifact matrices already restricted to
    the ground-truth CSV's columns; None ``predicted`` = no mapping yet (judge pending).
    """
    is_fake = block.truth["label"] == "fake"
    called_fake, decided = decisions(block)
    ok = decided & (called_fake == is_fake)
    out: list[MetricRecord | None] = [proportion("oeq_b", "trident_accuracy", slc, ok[m], ctx)
                                      for slc, m in _slices(block)]
    if predicted is not None:
        s = hallucination.artifact_scores(predicted=predicted, truth=truth,
                                          answered=np.ones(len(block), dtype=bool))
        for slc, m in _slices(block):
            for metric in ("chair", "hal", "f05"):
                out.append(_mean("oeq_b", f"trident_{metric}", slc, getattr(s, metric)[m], ctx,
                                 judge))
    return [r for r in out if r is not None]


def composite(records: list[MetricRecord]) -> list[MetricRecord]:
    """TCS, S_Det, S_Hal, S_Perc per modality once all five kit inputs exist for it.

    The judge is that of the F0.5 records (both joined with " + " when the two OEQ types were
    mapped differently).
    """
    have = {(r.task, r.metric, r.slice.get("modality")): r for r in records
            if set(r.slice) == {"modality"} and r.value is not None}
    out = []
    for m in MODALITIES:
        parts = [have.get((task, metric, m)) for task, metric in TCS_INPUTS]
        if any(p is None for p in parts):
            continue
        det, fa, fb, tfq, mcq = parts
        s = tridf_tcs(acc_typeb=det.value, f05_a=fa.value, f05_b=fb.value, acc_tfq=tfq.value,
                      mcq_clamped=mcq.value)
        judge = " + ".join(sorted({fa.judge or SELF_MAPPED, fb.judge or SELF_MAPPED}))
        n = sum(p.n for p in parts)
        for metric in ("tcs", "s_det", "s_hal", "s_perc"):
            out.append(MetricRecord(COMPOSITE_TASK, metric, {"modality": m},
                                    getattr(s, metric), n=n, judge=judge))
    return out
