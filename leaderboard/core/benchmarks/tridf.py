"""TriDF: interpretable DeepFake detection across image, video and audio (TriDF 3.3-3.4, app. H).

Tasks: ``tfq`` (true/false questions, fakes only), ``mcq`` (multi-select A-D plus "E. None of the
options are correct", fakes only), ``oeq_a`` (told the sample is fake: list the artifacts) and
``oeq_b`` (decide "Likely Authentic"/"Likely Manipulated", then list the artifacts; real and fake
samples). Perception = TFQ, MCQ, OEQ A; Detection = OEQ B accuracy; Hallucination = CHAIR, Hal and
F0.5 of both OEQ types.

Metrics:

- ``accuracy``: TFQ correct / total (unparsable = wrong); OEQ B detection accuracy over real and
  fake samples, the decision from ``label`` when given, else the response's "Likely ..." line
  (`tridf_authenticity`), else wrong.
- ``mcq_score``: mean of |S ∩ C|/K - |S \\ C|/(M - K) (the paper: unclamped, the headline);
  ``mcq_score_clamped``: each question clamped at 0 (the authors' challenge).
- ``cover``, ``chair``, ``hal``, ``f05``: TriDF 3.4 per sample, means over samples with annotated
  artifacts (`leaderboard.core.metrics.hallucination`). Rows that give ``artifacts`` are self-mapped
  (``judge="self-mapped"``); otherwise ``ctx.judge`` maps the response onto the taxonomy keys of
  the item's modality, and the records carry the judge's identity (also when some rows were
  self-mapped). Per artifact type, R and Y are both restricted to that type's artifacts.
- ``tcs``, ``s_det``, ``s_hal``, ``s_perc`` (0-100): the authors' challenge composite per modality,
  from `composite` once all four tasks are scored (task key ``"composite"``).

Breakdowns (all carry ``modality``): question category (semantic / quality / location, Table 2),
artifact type, deepfake task, generator, artifact and location.
"""
from __future__ import annotations

import numpy as np

from leaderboard.core import extract as ex
from leaderboard.core.benchmarks.base import (
    Benchmark,
    Block,
    Field,
    MetricSpec,
    ScoringContext,
    register,
)
from leaderboard.core.benchmarks.common import proportion as _proportion
from leaderboard.core.metrics import bootstrap, choice, hallucination
from leaderboard.core.metrics.composite import tridf_tcs
from leaderboard.core.records import MetricRecord
from leaderboard.core.taxonomy import ARTIFACT_KEYS, ARTIFACT_TYPES, TRIDF_ARTIFACTS, artifacts_for

MODALITIES = ("image", "video", "audio")
CATEGORIES = ("semantic", "quality", "location")
COMPOSITE_TASK = "composite"
SELF_MAPPED = "self-mapped"
_TYPE_COLS = {t: np.array([a.type == t for a in TRIDF_ARTIFACTS]) for t in ARTIFACT_TYPES}
_OEQ_METRICS = ("cover", "chair", "hal", "f05")


@register
class TriDF(Benchmark):
    key = "tridf"
    title = "TriDF"
    kinds = {"tfq": "yesno", "mcq": "multiselect", "oeq_a": "artifacts", "oeq_b": "artifacts"}
    artifact_keys = ARTIFACT_KEYS
    item_fields = {
        "question_type": Field("category", ("tfq", "mcq"), ("artifact", "location"),
                               "what the question probes (TriDF 3.3)"),
        "artifact_type": Field("category", (), ARTIFACT_TYPES,
                               "type of the artifacts the question asks about"),
        "artifact": Field("category", (), ARTIFACT_KEYS, "TFQ: the artifact asked about"),
        "location": Field("category", (), description="TFQ: the region asked about"),
    }
    label_fields = {
        "answer": Field("json", ("tfq", "mcq"),
                        description='TFQ: "yes"/"no"; MCQ: the list of correct letters'),
        "label": Field("category", ("oeq_b",), ("fake", "real"), "OEQ B: the sample's truth"),
        "artifacts": Field("tags", ("oeq_a", "oeq_b"), ARTIFACT_KEYS,
                           "annotated artifacts (OEQ); MCQ: the correct artifacts"),
        "deepfake_task": Field("category", description="one of the 16 DeepFake tasks"),
        "generator": Field("category", description="the model that made the fake"),
    }
    metrics = {
        "accuracy": MetricSpec("Accuracy", True, description="TFQ accuracy; OEQ B detection "
                               "accuracy over real and fake samples."),
        "mcq_score": MetricSpec("MCQ score", True, "num", -1.0, 1.0,
                                "Mean of |S∩C|/K - |S\\C|/(M-K) (unclamped, as in the paper)."),
        "mcq_score_clamped": MetricSpec("MCQ score (clamped)", True, "num", 0.0, 1.0,
                                        "Per-question score clamped at 0 (authors' challenge)."),
        "cover": MetricSpec("Cover", True, "num", description="|R∩Y|/|Y|"),
        "chair": MetricSpec("CHAIR", False, "num", description="1 - |R∩Y|/|R|; 1 if R is "
                            "empty or a fake is called authentic"),
        "hal": MetricSpec("Hal", False, "num", description="share of responses with CHAIR > 0"),
        "f05": MetricSpec("F0.5", True, "num", description="F-beta (beta=0.5) of 1-CHAIR and "
                          "Cover"),
        "unparsable": MetricSpec("Unparsable answers", False,
                                 description="Fraction of rows whose response could not be read"),
        "tcs": MetricSpec("TCS", True, "num", 0.0, 100.0,
                          "0.4 S_Det + 0.3 S_Hal + 0.3 S_Perc (authors' challenge)"),
        "s_det": MetricSpec("S_Det", True, "num", 0.0, 100.0, "100 x OEQ B accuracy"),
        "s_hal": MetricSpec("S_Hal", True, "num", 0.0, 100.0, "100 x (F0.5_A + F0.5_B)/2"),
        "s_perc": MetricSpec("S_Perc", True, "num", 0.0, 100.0,
                             "100 x (0.5 ACC_TFQ + 0.5 MCQ_clamped)"),
    }

    def extract(self, kind: str, text, options):
        """TriDF's answer rules (`leaderboard.core.extract`): yes/no from the first line, letters."""
        if kind == "yesno":
            return ex.tridf_true_false(text)
        if kind == "multiselect":
            return ex.tridf_letters(text)
        raise ValueError(f"TriDF has no free-text extraction for kind {kind!r}")

    def score_block(self, block: Block, ctx: ScoringContext) -> list[MetricRecord]:
        if len(block) == 0:
            return []
        task = block.task.key
        if task == "tfq":
            return _score_tfq(block, ctx)
        if task == "mcq":
            return _score_mcq(block, ctx)
        if task in ("oeq_a", "oeq_b"):
            return _score_oeq(block, ctx)
        raise ValueError(f"TriDF has no task {task!r}; tasks: {sorted(self.kinds)}")

    def composite(self, records: list[MetricRecord], ctx: ScoringContext | None = None
                  ) -> list[MetricRecord]:
        """The challenge composite (TCS) per modality, from the records of every task.

        Emitted for a modality only when TFQ accuracy, clamped MCQ score, OEQ A F0.5 and OEQ B
        F0.5 and accuracy all exist for it; the judge is that of the F0.5 records (both joined
        with " + " when the two OEQ types were mapped differently).
        """
        have = {(r.task, r.metric, r.slice.get("modality")): r for r in records
                if set(r.slice) == {"modality"} and r.value is not None}
        out = []
        for m in MODALITIES:
            parts = [have.get(k) for k in (("tfq", "accuracy", m), ("mcq", "mcq_score_clamped", m),
                                           ("oeq_a", "f05", m), ("oeq_b", "f05", m),
                                           ("oeq_b", "accuracy", m))]
            if any(p is None for p in parts):
                continue
            tfq, mcq, fa, fb, det = parts
            s = tridf_tcs(acc_typeb=det.value, f05_a=fa.value, f05_b=fb.value,
                          acc_tfq=tfq.value, mcq_clamped=mcq.value)
            judge = " + ".join(sorted({fa.judge or SELF_MAPPED, fb.judge or SELF_MAPPED}))
            n = sum(p.n for p in parts[:4]) + det.n
            for metric in ("tcs", "s_det", "s_hal", "s_perc"):
                out.append(MetricRecord(COMPOSITE_TASK, metric, {"modality": m},
                                        getattr(s, metric), n=n, judge=judge))
        return out


# -- shared helpers --

def _pred(block: Block, name: str, dtype, fill) -> np.ndarray:
    """A prediction column, or ``fill`` everywhere when no row of the file gave the field."""
    if name in block.pred:
        return block.pred[name]
    return np.full(len(block), fill, dtype=dtype)


def _mean(task, metric, slc, values, ctx, judge=None) -> MetricRecord | None:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    low, high = bootstrap.bootstrap_mean_ci(values, n_resamples=ctx.n_resamples, seed=ctx.seed)
    return MetricRecord(task, metric, slc, float(values.mean()), low, high, int(values.size),
                        judge)


def _category(block: Block) -> np.ndarray:
    """Table 2's columns: a location question is "location", else its artifact type."""
    qtype = block.item["question_type"].astype(str)
    atype = block.item["artifact_type"].astype(str) if "artifact_type" in block.item \
        else np.full(len(block), "", dtype=str)
    return np.where(qtype == "location", "location", atype)


def _slices(block: Block, *, per_artifact: bool) -> list[tuple[dict, np.ndarray]]:
    """(slice, row mask) for every breakdown axis: overall, modality and modality x axis."""
    every = np.ones(len(block), dtype=bool)
    out = [({}, every)]
    modality = block.item["modality"].astype(str)
    axes = {}
    if "question_type" in block.item:
        axes["category"] = _category(block)
    for axis in ("deepfake_task", "generator", "location") + (("artifact",) if per_artifact
                                                              else ()):
        if block.has(axis):
            axes[axis] = block.col(axis).astype(str)
    for m in MODALITIES:
        in_m = modality == m
        if not in_m.any():
            continue
        out.append(({"modality": m}, in_m))
        for axis, col in axes.items():
            for v in sorted(set(col[in_m].tolist()) - {""}):
                out.append(({"modality": m, axis: v}, in_m & (col == v)))
    return out


def _unparsable(block: Block, bad: np.ndarray) -> list[MetricRecord]:
    modality = block.item["modality"].astype(str)
    out = [MetricRecord(block.task.key, "unparsable", {}, bad.mean(), n=int(bad.sum()))]
    for m in sorted(set(modality.tolist())):
        sel = modality == m
        out.append(MetricRecord(block.task.key, "unparsable", {"modality": m}, bad[sel].mean(),
                                n=int(bad[sel].sum())))
    return out


# -- TFQ and MCQ --

def _score_tfq(block: Block, ctx: ScoringContext) -> list[MetricRecord]:
    ans = block.pred["answer"]
    truth = np.array([1 if a == "yes" else 0 for a in block.truth["answer"]], dtype=np.int8)
    ok = (ans == truth) & (ans >= 0)
    out = [_proportion("tfq", "accuracy", slc, ok[mask], ctx)
           for slc, mask in _slices(block, per_artifact=True)]
    return out + _unparsable(block, ans < 0)


def _correct_matrix(block: Block) -> np.ndarray:
    letters = list(block.task_letters or "ABCDE")
    index = {c: j for j, c in enumerate(letters)}
    correct = np.zeros((len(block), len(letters)), dtype=bool)
    for i, answer in enumerate(block.truth["answer"]):
        for letter in answer or ():
            correct[i, index[letter]] = True
    return correct


def _score_mcq(block: Block, ctx: ScoringContext) -> list[MetricRecord]:
    correct = _correct_matrix(block)
    selected = block.pred["selected"]
    raw = choice.mcq_scores(selected=selected, correct=correct)
    clamped = choice.mcq_scores(selected=selected, correct=correct, clamp=True)
    out = []
    for slc, mask in _slices(block, per_artifact=False):
        out.append(_mean("mcq", "mcq_score", slc, raw[mask], ctx))
        out.append(_mean("mcq", "mcq_score_clamped", slc, clamped[mask], ctx))
    if "artifacts" in block.truth:  # per artifact: questions where it is a correct option
        modality = block.item["modality"].astype(str)
        arts = block.truth["artifacts"]
        for m in MODALITIES:
            for j, key in enumerate(ARTIFACT_KEYS):
                mask = (modality == m) & arts[:, j]
                if mask.any():
                    out.append(_mean("mcq", "mcq_score", {"modality": m, "artifact": key},
                                     raw[mask], ctx))
    return [r for r in out if r is not None] + _unparsable(block, ~block.pred["answered"])


# -- OEQ type A and type B --

def _mapped_artifacts(block: Block, ctx: ScoringContext) -> tuple[np.ndarray, str] | None:
    """R per row and the judge identity; None when a judge is needed and there is none."""
    predicted = np.zeros((len(block), len(ARTIFACT_KEYS)), dtype=bool)
    if "artifacts" in block.pred:
        predicted |= block.pred["artifacts"].astype(bool)
    self_mapped = _pred(block, "self_mapped", bool, False)
    need = np.flatnonzero(~self_mapped)
    if need.size == 0:
        return predicted, SELF_MAPPED
    if ctx.judge is None:
        return None
    modality = block.item["modality"].astype(str)
    responses = _pred(block, "response", object, None)
    index = {k: j for j, k in enumerate(ARTIFACT_KEYS)}
    for m in MODALITIES:  # one call per modality: candidates depend only on the modality
        rows = need[modality[need] == m]
        if rows.size == 0:
            continue
        mapped = ctx.judge.map_artifacts([responses[i] or "" for i in rows],
                                         candidates=list(artifacts_for(m)))
        for i, keys in zip(rows, mapped):
            predicted[i] = False
            for k in keys:
                predicted[i, index[k]] = True
    return predicted, ctx.judge.identity


def _decisions(block: Block) -> tuple[np.ndarray, np.ndarray]:
    """OEQ B: (called fake, decided) per row from ``label``, else the "Likely ..." line."""
    label = _pred(block, "label", np.int8, -1)
    responses = _pred(block, "response", object, None)
    called_fake = label == 1
    decided = label >= 0
    for i in np.flatnonzero(~decided):
        verdict = ex.tridf_authenticity(responses[i])
        if verdict is not None:
            decided[i], called_fake[i] = True, verdict == "fake"
    return called_fake, decided


def _score_oeq(block: Block, ctx: ScoringContext) -> list[MetricRecord]:
    task = block.task.key
    truth = block.truth["artifacts"].astype(bool)
    out: list[MetricRecord | None] = []
    called_authentic = None
    slices = _slices(block, per_artifact=False)
    if task == "oeq_b":
        is_fake = block.truth["label"] == "fake"
        called_fake, decided = _decisions(block)
        ok = decided & (called_fake == is_fake)
        called_authentic = decided & ~called_fake
        out += [_proportion(task, "accuracy", slc, ok[mask], ctx) for slc, mask in slices]
        out += _unparsable(block, ~decided)
    mapped = _mapped_artifacts(block, ctx)
    if mapped is None:
        for metric in _OEQ_METRICS:
            ctx.pending.append({"task": task, "metric": metric,
                                "reason": "responses without self-mapped artifacts need a "
                                          "judge to map them (--judge NAME)"})
        return [r for r in out if r is not None]
    predicted, judge = mapped
    answered = np.ones(len(block), dtype=bool)
    s = hallucination.artifact_scores(predicted=predicted, truth=truth, answered=answered,
                                      called_authentic=called_authentic)
    for slc, mask in slices:
        for metric in _OEQ_METRICS:
            out.append(_mean(task, metric, slc, getattr(s, metric)[mask], ctx, judge))
    modality = block.item["modality"].astype(str)
    for atype, cols in _TYPE_COLS.items():
        st = hallucination.artifact_scores(predicted=predicted[:, cols], truth=truth[:, cols],
                                           answered=answered, called_authentic=called_authentic)
        for m in MODALITIES:
            mask = modality == m
            for metric in _OEQ_METRICS:
                out.append(_mean(task, metric, {"modality": m, "artifact_type": atype},
                                 getattr(st, metric)[mask], ctx, judge))
    hit = predicted & truth  # as Cover: computed from R even when a fake is called authentic
    for m in MODALITIES:  # per artifact: the share of its annotated samples that name it
        for j, key in enumerate(ARTIFACT_KEYS):
            mask = (modality == m) & truth[:, j]
            if mask.any():
                out.append(_proportion(task, "cover", {"modality": m, "artifact": key},
                                       hit[mask, j], ctx, judge))
    return [r for r in out if r is not None]

