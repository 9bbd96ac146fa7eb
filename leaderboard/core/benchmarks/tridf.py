"""TriDF: interpretable DeepFake detection across image, video and audio (TriDF 3.3-3.4, app. H).

Tasks: ``tfq`` (true/false questions, fakes only), ``mcq`` (multi-select A-D plus "E. None of the
options are correct", fakes only), ``oeq_a`` (told the sample is fake: list the artifacts) and
``oeq_b`` (decide "Likely Authentic"/"Likely Manipulated", then list the artifacts; real and fake
samples). Perception = TFQ, MCQ, OEQ A; Detection = OEQ B accuracy; Hallucination = CHAIR, Hal and
F0.5 of both OEQ types.

Every official column reproduces the authors' code (j1anglin/TriDF at f041a19,
``3_Benchmark/inference/``; docs/fidelity.md lists each function):

- ``accuracy``: TFQ correct / total, free text read by ``normalize_tf_answer``
  (`tridf_readers.tf_answer`; unparsable = wrong, as ``score_perception_original.py`` scores it);
  OEQ B detection accuracy over real and fake samples, the decision from ``label`` when given,
  else ``get_prediction`` of ``eval_accuracy.py`` (`tridf_readers.detection`), else wrong (the
  authors' default strict mode).
- ``mcq_score``: mean of |S ∩ C|/K - |S \\ C|/(M - K) (``score_mc_answer``, unclamped: the
  headline), letters read by ``normalize_mc_answer`` (`tridf_readers.mc_letters`);
  ``mcq_score_clamped``: each question clamped at 0.
- ``invalid_predictions`` (TFQ, MCQ): the authors' count of that name in
  ``score_perception_original.py`` (a row whose answer their normalizer returns None for): TFQ, no
  yes/no read; MCQ, an *empty* answer only (a non-empty one without a letter is valid for them and
  scores 0). ``no_letter_read`` (MCQ, ours, a diagnostic): answers from which no option letter of
  the question was read, empty ones included; both score 0 either way. Value: the fraction of
  rows, ``n``: the count. ``unparsable`` (OEQ B): no decision read.
- ``cover``, ``chair``, ``hal``, ``f05`` (``cal_score.py``): per sample, over the artifacts that
  are columns of the sample's ground-truth CSV (label ``artifact_columns``; all 27 when a pack
  does not say), means over samples with annotated artifacts; type B CHAIR is 1 when a fake is
  called authentic. Rows that give ``artifacts`` are self-mapped (``judge="self-mapped"``);
  otherwise ``ctx.judge`` maps the response onto the taxonomy keys of the item's modality, and the
  records carry the judge's identity. Per artifact type, R and Y are both restricted to that
  type's artifacts.
- ``trident_*`` and the composite ``tcs``, ``s_det``, ``s_hal``, ``s_perc`` (0-100): the TRIDENT
  challenge kit's readings and scores (`leaderboard.core.benchmarks.tridf_kit`).

Breakdowns (all carry ``modality``): question category (semantic / quality / location, Table 2),
question type (artifact / location: the authors' ``by_question_type``), artifact type, deepfake
task, generator, artifact and location.
"""
from __future__ import annotations

import numpy as np

from leaderboard.core import tridf_readers as rd
from leaderboard.core.benchmarks import tridf_kit as kit
from leaderboard.core.benchmarks.base import (
    Benchmark,
    Block,
    Field,
    MetricSpec,
    ScoringContext,
    register,
)
from leaderboard.core.benchmarks.common import mean as _mean
from leaderboard.core.benchmarks.common import proportion as _proportion
from leaderboard.core.metrics import choice, hallucination
from leaderboard.core.records import MetricRecord
from leaderboard.core.taxonomy import ARTIFACT_KEYS, ARTIFACT_TYPES, TRIDF_ARTIFACTS, artifacts_for

MODALITIES = kit.MODALITIES
CATEGORIES = ("semantic", "quality", "location")
COMPOSITE_TASK = kit.COMPOSITE_TASK
SELF_MAPPED = kit.SELF_MAPPED
_TYPE_COLS = {t: np.array([a.type == t for a in TRIDF_ARTIFACTS]) for t in ARTIFACT_TYPES}
_OEQ_METRICS = ("cover", "chair", "hal", "f05")
_KIT = "TRIDENT challenge kit: "


@register
class TriDF(Benchmark):
    key = "tridf"
    title = "TriDF"
    kinds = {"tfq": "yesno", "mcq": "multiselect", "oeq_a": "artifacts", "oeq_b": "artifacts"}
    artifact_keys = ARTIFACT_KEYS
    keeps_text = ("response",)  # the kit reads the same free text its own way (tridf_kit)
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
        "artifact_columns": Field("tags", (), ARTIFACT_KEYS,
                                  "OEQ: the artifacts that are columns of the sample's "
                                  "ground-truth CSV (the only ones the authors' code counts)"),
        "deepfake_task": Field("category", description="one of the 16 DeepFake tasks"),
        "generator": Field("category", description="the model that made the fake"),
    }
    metrics = {
        "accuracy": MetricSpec("Accuracy", True, description="TFQ accuracy; OEQ B detection "
                               "accuracy over real and fake samples (the authors' readers)."),
        "mcq_score": MetricSpec("MCQ score", True, "num", -1.0, 1.0,
                                "Mean of |S∩C|/K - |S\\C|/(M-K) (unclamped, as in the paper)."),
        "mcq_score_clamped": MetricSpec("MCQ score (clamped)", True, "num", 0.0, 1.0,
                                        "Per-question score clamped at 0."),
        "cover": MetricSpec("Cover", True, "num", description="|R∩Y|/|Y|"),
        "chair": MetricSpec("CHAIR", False, "num", description="1 - |R∩Y|/|R|; 1 if R is "
                            "empty or (type B) a fake is called authentic"),
        "hal": MetricSpec("Hal", False, "num", description="share of responses with CHAIR > 0"),
        "f05": MetricSpec("F0.5", True, "num", description="F-beta (beta=0.5) of 1-CHAIR and "
                          "Cover"),
        "unparsable": MetricSpec("Unparsable answers", False,
                                 description="OEQ B: fraction of rows whose response gives no "
                                 "decision (n: their count)"),
        "invalid_predictions": MetricSpec(
            "Invalid predictions (authors)", False,
            description="The authors' invalid_predictions (score_perception_original.py), as a "
            "fraction of rows (n: the count): TFQ, no yes/no read; MCQ, an empty answer."),
        "no_letter_read": MetricSpec(
            "No option letter read (diagnostic)", False,
            description="MCQ, ours: fraction of rows whose answer names no option letter of the "
            "question, empty answers included (n: the count); scored 0, as the authors do."),
        "trident_accuracy": MetricSpec("Accuracy (TRIDENT kit)", True,
                                       description=_KIT + "TFQ reads only true/false; type B "
                                       "reads the first non-empty line."),
        "trident_mcq_score": MetricSpec("MCQ score (TRIDENT kit)", True, "num", 0.0, 1.0,
                                        _KIT + "letters A-E in the first three lines, clamped."),
        "trident_chair": MetricSpec("CHAIR (TRIDENT kit)", False, "num",
                                    description=_KIT + "type B CHAIR without the penalty for "
                                    "a fake called authentic."),
        "trident_hal": MetricSpec("Hal (TRIDENT kit)", False, "num",
                                  description=_KIT + "type B Hal without that penalty."),
        "trident_f05": MetricSpec("F0.5 (TRIDENT kit)", True, "num",
                                  description=_KIT + "type B F0.5 without that penalty."),
        "tcs": MetricSpec("TCS", True, "num", 0.0, 100.0,
                          "0.4 S_Det + 0.3 S_Hal + 0.3 S_Perc (TRIDENT kit)"),
        "s_det": MetricSpec("S_Det", True, "num", 0.0, 100.0, "100 x type B accuracy (kit)"),
        "s_hal": MetricSpec("S_Hal", True, "num", 0.0, 100.0,
                            "100 x (F0.5_A + F0.5_B kit)/2"),
        "s_perc": MetricSpec("S_Perc", True, "num", 0.0, 100.0,
                             "100 x (0.5 TFQ accuracy + 0.5 MCQ score), both as the kit reads"),
    }

    def extract(self, kind: str, text, options):
        """The TriDF authors' readers (`leaderboard.core.tridf_readers`).

        TFQ: "yes"/"no"/None by ``normalize_tf_answer``; MCQ: the letters ``normalize_mc_answer``
        selects among the item's options, None when it selects none (scored 0, as theirs).
        """
        if kind == "yesno":
            v = rd.tf_answer(text)
            return None if v is None else ("yes" if v else "no")
        if kind == "multiselect":
            letters = "".join(sorted(options)) if options else rd.LETTERS
            return rd.mc_letters(text, letters) or None
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
        """The TRIDENT challenge composite (TCS) per modality (`tridf_kit.composite`)."""
        return kit.composite(records)


# -- shared helpers --

def _pred(block: Block, name: str, dtype, fill) -> np.ndarray:
    """A prediction column, or ``fill`` everywhere when no row of the file gave the field."""
    if name in block.pred:
        return block.pred[name]
    return np.full(len(block), fill, dtype=dtype)


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
        axes["question_type"] = block.item["question_type"].astype(str)
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


def _count_records(block: Block, bad: np.ndarray, metric: str = "unparsable",
                axes: tuple[str, ...] = ()) -> list[MetricRecord]:
    """A count of rows as a record (value: the fraction, ``n``: the count), overall, per
    modality and per modality x each of ``axes`` present in the block."""
    modality = block.item["modality"].astype(str)
    out = [MetricRecord(block.task.key, metric, {}, float(bad.mean()), n=int(bad.sum()))]
    cols = {a: block.col(a).astype(str) for a in axes if block.has(a)}
    for m in sorted(set(modality.tolist())):
        sel = modality == m
        out.append(MetricRecord(block.task.key, metric, {"modality": m}, float(bad[sel].mean()),
                                n=int(bad[sel].sum())))
        for axis, col in cols.items():
            for v in sorted(set(col[sel].tolist()) - {""}):
                rows = sel & (col == v)
                out.append(MetricRecord(block.task.key, metric, {"modality": m, axis: v},
                                        float(bad[rows].mean()), n=int(bad[rows].sum())))
    return out


_COUNT_AXES = ("question_type", "deepfake_task")


def empty_answers(block: Block) -> np.ndarray:
    """MCQ rows whose free-text answer is empty: the only ones the authors' ``normalize_mc_answer``
    returns None for (a structured ``answer`` list never is)."""
    responses = _pred(block, "response", object, None)
    from_response = _pred(block, "from_response", bool, False)
    return np.array([bool(f) and isinstance(r, str) and not r.strip()
                     for f, r in zip(from_response, responses)], dtype=bool)


# -- TFQ and MCQ --

def _score_tfq(block: Block, ctx: ScoringContext) -> list[MetricRecord]:
    ans = block.pred["answer"]
    truth = np.array([1 if a == "yes" else 0 for a in block.truth["answer"]], dtype=np.int8)
    ok = (ans == truth) & (ans >= 0)
    out = [_proportion("tfq", "accuracy", slc, ok[mask], ctx)
           for slc, mask in _slices(block, per_artifact=True)]
    return out + kit.tfq_records(block, truth, ctx) + _count_records(
        block, ans < 0, "invalid_predictions", _COUNT_AXES)


def _correct_matrix(block: Block) -> np.ndarray:
    letters = list(block.task_letters or rd.LETTERS)
    index = {c: j for j, c in enumerate(letters)}
    correct = np.zeros((len(block), len(letters)), dtype=bool)
    for i, answer in enumerate(block.truth["answer"]):
        for letter in answer or ():
            correct[i, index[letter]] = True
    return correct


def offered_matrix(block: Block) -> np.ndarray:
    """Which of the task's letters each question lists (its ``options``; all when absent)."""
    letters = list(block.task_letters or rd.LETTERS)
    if not block.has("options"):
        return np.ones((len(block), len(letters)), dtype=bool)
    options = block.item["options"]
    return np.array([[c in (opts or letters) for c in letters] for opts in options], dtype=bool)


def _score_mcq(block: Block, ctx: ScoringContext) -> list[MetricRecord]:
    correct = _correct_matrix(block)
    offered = offered_matrix(block)
    selected = block.pred["selected"]
    raw = choice.mcq_scores(selected=selected, correct=correct, offered=offered)
    clamped = choice.mcq_scores(selected=selected, correct=correct, clamp=True, offered=offered)
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
    out += kit.mcq_records(block, correct, offered, ctx)
    return ([r for r in out if r is not None]
            + _count_records(block, empty_answers(block), "invalid_predictions", _COUNT_AXES)
            + _count_records(block, ~block.pred["answered"], "no_letter_read", _COUNT_AXES))


# -- OEQ type A and type B --

def _counted_columns(block: Block) -> np.ndarray:
    """Per row, the artifacts the authors' code counts: the columns of the sample's ground-truth
    CSV (``cal_score.py`` intersects them with the mapped ones); all 27 when a pack (or a row)
    does not say."""
    cols = np.ones((len(block), len(ARTIFACT_KEYS)), dtype=bool)
    if "artifact_columns" in block.truth:
        given = block.truth["artifact_columns"].astype(bool)
        known = given.any(axis=1)
        cols[known] = given[known]
    return cols


def mapped_artifacts(block: Block, ctx: ScoringContext) -> tuple[np.ndarray, str] | None:
    """`_mapped_artifacts`, once per block and context: the per-item outcomes
    (`leaderboard.core.outcomes`) read the same mapping, and a judge's mapping is the expensive
    part of scoring."""
    memo = block.__dict__.get("_mapped")
    if memo is None or memo[0] is not ctx:  # another context may bring another judge
        memo = block.__dict__["_mapped"] = (ctx, _mapped_artifacts(block, ctx))
    return memo[1]


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
    """OEQ B: (called fake, decided) per row from ``label``, else ``get_prediction``'s reading."""
    label = _pred(block, "label", np.int8, -1)
    responses = _pred(block, "response", object, None)
    called_fake = label == 1
    decided = label >= 0
    for i in np.flatnonzero(~decided):
        verdict = rd.detection(responses[i]) if isinstance(responses[i], str) else None
        if verdict is not None:
            decided[i], called_fake[i] = True, verdict == "fake"
    return called_fake, decided


def _score_oeq(block: Block, ctx: ScoringContext) -> list[MetricRecord]:
    task = block.task.key
    counted = _counted_columns(block)
    truth = block.truth["artifacts"].astype(bool) & counted
    out: list[MetricRecord | None] = []
    called_authentic = None
    slices = _slices(block, per_artifact=False)
    if task == "oeq_b":
        is_fake = block.truth["label"] == "fake"
        called_fake, decided = _decisions(block)
        ok = decided & (called_fake == is_fake)
        called_authentic = decided & ~called_fake
        out += [_proportion(task, "accuracy", slc, ok[mask], ctx) for slc, mask in slices]
        out += _count_records(block, ~decided)
    mapped = mapped_artifacts(block, ctx)
    if mapped is None:
        for metric in _OEQ_METRICS:
            ctx.pending.append({"task": task, "metric": metric,
                                "reason": "responses without self-mapped artifacts need a "
                                          "judge to map them (--judge NAME)"})
        if task == "oeq_b":
            out += kit.oeq_b_records(block, None, truth, "", ctx)
        return [r for r in out if r is not None]
    predicted, judge = mapped
    predicted = predicted & counted
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
    if task == "oeq_b":
        out += kit.oeq_b_records(block, predicted, truth, judge, ctx)
    return [r for r in out if r is not None]
