"""LOKI (Ye et al., ICLR 2025): synthetic-data detection by large multimodal models.

Tasks (LOKI 3.3): ``judgment`` (yes/no, every sample asked twice: ``ask_fake`` "is it
AI-generated?" and ``ask_real`` "is it real?"), ``multiple_choice`` (pick the AI-generated or the
real one of a same-domain pair), ``abnormal_selection`` (single-answer choice of the inconsistent
detail, video and image) and ``explanation`` (open "why is it AI-generated?", rated by a judge
against the human annotation, video, image and 3D).

Metrics (LOKI 4.1 and C.2, Tables 2-5):

- ``accuracy``: correct / total; the headline (the paper's "average accuracy"). An unparsable
  answer is wrong.
- ``balanced_accuracy``: the authors' released code: per subcategory (acc on fake + acc on real)/2,
  averaged weighted by the number of fake items (`group_balanced_accuracy`). For multiple choice the
  two "classes" are the two phrasings (pick the AI-generated one / pick the real one).
- ``nbi``: Normalized Bias Index (R_real - R_fake)/(R_real + R_fake) from judgment, positive =
  biased toward "real"; ``abs_nbi`` its magnitude; ``real_recall`` and ``fake_recall`` its parts.
- ``explanation_score``: the judge's total, 0-100, and one ``crit_<name>`` record per rubric
  criterion on the criterion's own scale (`leaderboard.judges.rubric.CRITERIA`).
- ``unparsable``: fraction (n = count) of rows whose free-text answer could not be read.

Slices: ``{}`` is every covered modality, audio included; ``{"scope": "without_audio"}`` is the
paper's "Overall" column (video, image, 3D and text; emitted only when all four are covered), as
is ``{"difficulty": d}`` (Table 4). Every other breakdown carries ``modality``: subcategory,
phrasing, difficulty, generator (``fake_recall`` over that generator's fakes), text language and
length.
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
from leaderboard.core.metrics import bootstrap, classification
from leaderboard.core.records import MetricRecord
from leaderboard.judges import rubric

MODALITIES = ("video", "image", "3d", "text", "audio")
PAPER_OVERALL = ("video", "image", "3d", "text")  # the paper's Overall excludes audio (Table 2)
PHRASINGS = ("ask_fake", "ask_real")
DIFFICULTIES = ("easy", "medium", "hard")
CRITERIA_NAMES = tuple(dict.fromkeys(c for crit in rubric.CRITERIA.values() for c in crit))
_SCOPE = {"scope": "without_audio"}


def _criterion_spec(name: str) -> MetricSpec:
    top = max(c.get(name, 0) for c in rubric.CRITERIA.values())
    return MetricSpec(f"Explanation: {name.replace('_', ' ')}", True, "num", 0.0, float(top),
                      f"Judge's mean score on the '{name}' criterion (0-{top}).")


@register
class Loki(Benchmark):
    key = "loki"
    title = "LOKI"
    kinds = {"judgment": "yesno", "multiple_choice": "choice", "abnormal_selection": "choice",
             "explanation": "explanation"}
    item_fields = {
        "phrasing": Field("category", ("judgment", "multiple_choice"), PHRASINGS,
                          "ask_fake: asks for the AI-generated one; ask_real: for the real one"),
        "language": Field("category", (), ("en", "zh"), "text items: language"),
        "length": Field("category", (), ("short", "medium", "long"), "text items: length bin"),
    }
    label_fields = {
        "answer": Field("category", ("judgment", "multiple_choice", "abnormal_selection"),
                        description='"yes"/"no" (judgment) or the option letter'),
        "truth": Field("category", ("judgment",), ("fake", "real"),
                       "judgment: whether the sample is AI-generated"),
        "subcategory": Field("category", ("judgment", "multiple_choice"),
                             description="image domain, video/3D generator family, text "
                                         "domain, audio kind (for video/3D a real sample "
                                         "carries the subcategory of the fake it is paired with)"),
        "generator": Field("category", description="generator of a fake sample"),
        "difficulty": Field("category", (), DIFFICULTIES,
                            "human-rated difficulty (LOKI 3.3); hidden because human errors "
                            "correlate with the truth"),
        "reference": Field("json", ("explanation",), description="human anomaly annotation"),
    }
    metrics = {
        "accuracy": MetricSpec("Accuracy", True, description="Correct answers / questions "
                               "(the paper's headline); unparsable answers are wrong."),
        "balanced_accuracy": MetricSpec(
            "Balanced accuracy (authors' code)", True,
            description="Per subcategory (acc on fake + acc on real)/2, averaged weighted by the "
                        "number of fake items, as in the authors' released code."),
        "nbi": MetricSpec("NBI", False, "signed", -1.0, 1.0,
                          "Normalized Bias Index (R_real - R_fake)/(R_real + R_fake); 0 is "
                          "unbiased, positive leans to 'real'. Ranked by |NBI| (abs_nbi)."),
        "abs_nbi": MetricSpec("|NBI|", False, "num", 0.0, 1.0, "Magnitude of the NBI."),
        "real_recall": MetricSpec("Recall on real", True, description="R_natural of the NBI."),
        "fake_recall": MetricSpec("Recall on AI-generated", True,
                                  description="R_generated of the NBI; per generator: the "
                                              "share of its fakes recognized."),
        "unparsable": MetricSpec("Unparsable answers", False,
                                 description="Fraction of rows whose response could not be read"),
        "explanation_score": MetricSpec("Explanation score", True, "num", 0.0, 100.0,
                                        "Judge's rubric total normalized to 0-100 (LOKI C.2)."),
        **{f"crit_{c}": _criterion_spec(c) for c in CRITERIA_NAMES},
    }
    accepts_offline_format = True  # the authors' {"model", "responses": [...]} files (C.1)

    def extract(self, kind: str, text, options):
        """LOKI's answer rules (`leaderboard.core.extract`): yes/no, or an option letter."""
        if kind == "yesno":
            return ex.loki_yes_no(text)
        if kind == "choice":
            return ex.loki_choice(text, options or {})
        raise ValueError(f"LOKI has no free-text extraction for kind {kind!r}")

    def score_block(self, block: Block, ctx: ScoringContext) -> list[MetricRecord]:
        task = block.task.key
        if len(block) == 0:
            return []
        if task == "explanation":
            return _score_explanation(block, ctx)
        if task not in self.kinds:
            raise ValueError(f"LOKI has no task {task!r}; tasks: {sorted(self.kinds)}")
        return _score_closed(block, ctx)


# -- closed-form tasks: judgment, multiple choice, abnormal detail selection --

def _correct(block: Block) -> np.ndarray:
    """Row-wise correctness; an unparsable (or missing) answer is wrong."""
    truth = block.truth["answer"]
    ans = block.pred["answer"]
    if block.task.kind == "yesno":
        said = np.where(ans == 1, "yes", np.where(ans == 0, "no", ""))
        return (said == truth) & (ans >= 0)
    return (ans == truth) & (ans != "")


def _is_fake(block: Block) -> np.ndarray:
    """The "fake" class of each row for the balanced accuracy and the NBI.

    Judgment: the sample is AI-generated. Multiple choice: the question asks for the AI-generated
    option (the phrasing plays the role of the class). Selection: every sample is a fake.
    """
    if block.task.key == "judgment":
        return block.truth["truth"] == "fake"
    if block.task.key == "multiple_choice":
        return block.item["phrasing"] == "ask_fake"
    return np.ones(len(block), dtype=bool)


def _balanced(task: str, slc: dict, ok, fake, group, ctx: ScoringContext) -> MetricRecord:
    """The authors' subcategory-balanced accuracy with a CI stratified by (subcategory, class)."""
    value = classification.group_balanced_accuracy(correct=ok, is_fake=fake, group=group)
    low = high = None
    if ok.size >= bootstrap.MIN_N and not np.isnan(value):
        _, codes = np.unique(group, return_inverse=True)
        cells = codes.ravel() * 2 + fake.astype(int)
        n_cell = np.bincount(cells, minlength=2 * (codes.max() + 1))
        k_cell = np.bincount(cells, weights=ok, minlength=n_cell.size).astype(np.int64)
        draws = bootstrap.binomial_draws(n=n_cell, k=k_cell, n_resamples=ctx.n_resamples,
                                         seed=ctx.seed).reshape(ctx.n_resamples, -1, 2)
        n_cell = n_cell.reshape(-1, 2)
        acc = np.divide(draws, n_cell, out=np.full(draws.shape, np.nan), where=n_cell > 0)
        per_group = np.where(n_cell[:, 0] > 0, acc.mean(axis=2), acc[:, :, 1])
        weight = n_cell[:, 1].astype(float)
        used = weight > 0
        samples = (per_group[:, used] * weight[used]).sum(axis=1) / weight[used].sum()
        low, high = bootstrap.percentile_ci(samples)
    return MetricRecord(task, "balanced_accuracy", slc, value, low, high, int(ok.size))


def _bias(task: str, slc: dict, ok, fake, ctx: ScoringContext) -> list[MetricRecord]:
    """NBI and its two recalls (LOKI C.2), CIs from the class-stratified count bootstrap."""
    said_fake = np.where(ok, fake, ~fake)
    c = classification.binary_counts(y_true=fake, y_pred=said_fake)
    names = {"nbi": "normalized_bias_index", "real_recall": "real_accuracy",
             "fake_recall": "recall"}
    cis = bootstrap.count_metric_cis(tp=c.tp, fp=c.fp, tn=c.tn, fn=c.fn,
                                     metrics=tuple(names.values()),
                                     n_resamples=ctx.n_resamples, seed=ctx.seed)
    out = []
    for metric, name in names.items():
        value = classification.FROM_COUNTS[name](c.tp, c.fp, c.tn, c.fn)
        out.append(MetricRecord(task, metric, slc, value, *cis[name], n=int(ok.size)))
    nbi = out[0].value
    out.append(MetricRecord(task, "abs_nbi", slc, None if nbi is None else abs(nbi),
                            n=int(ok.size)))
    return out


def _summary(task: str, slc: dict, mask, ok, fake, group, ctx, *, full: bool
             ) -> list[MetricRecord]:
    """Accuracy (+ balanced accuracy and, for judgment, the NBI when ``full``) on ``mask``."""
    if not mask.any():
        return []
    out = [_proportion(task, "accuracy", slc, ok[mask], ctx)]
    if full and task in ("judgment", "multiple_choice"):
        out.append(_balanced(task, slc, ok[mask], fake[mask], group[mask], ctx))
    if full and task == "judgment":
        out.extend(_bias(task, slc, ok[mask], fake[mask], ctx))
    return out


def _score_closed(block: Block, ctx: ScoringContext) -> list[MetricRecord]:
    task = block.task.key
    ok, fake = _correct(block), _is_fake(block)
    modality = block.item["modality"].astype(str)
    group = block.col("subcategory") if block.has("subcategory") else modality
    group = np.char.add(np.char.add(modality, "/"), group.astype(str))
    every = np.ones(len(block), dtype=bool)
    out = _summary(task, {}, every, ok, fake, group, ctx, full=True)
    present = set(modality.tolist())
    without_audio = modality != "audio"
    if set(PAPER_OVERALL) <= present:
        out += _summary(task, _SCOPE, without_audio, ok, fake, group, ctx, full=True)
    has_difficulty = block.has("difficulty")
    for m in MODALITIES:
        in_m = modality == m
        if not in_m.any():
            continue
        base = {"modality": m}
        out += _summary(task, base, in_m, ok, fake, group, ctx, full=True)
        axes = ["subcategory", "difficulty", "language", "length"]
        if task in ("judgment", "multiple_choice"):
            axes.append("phrasing")
        for axis in axes:
            if not block.has(axis):
                continue
            col = block.col(axis).astype(str)
            for v in sorted(set(col[in_m].tolist()) - {""}):
                out += _summary(task, {**base, axis: v}, in_m & (col == v), ok, fake, group,
                                ctx, full=axis == "subcategory")
        if block.has("generator"):
            gen = block.col("generator").astype(str)
            for g in sorted(set(gen[in_m & fake].tolist()) - {""}):
                sel = in_m & fake & (gen == g)
                out.append(_proportion(task, "fake_recall" if task == "judgment" else "accuracy",
                                       {**base, "generator": g}, ok[sel], ctx))
    if has_difficulty and set(PAPER_OVERALL) <= present:
        diff = block.col("difficulty").astype(str)
        for d in DIFFICULTIES:
            sel = without_audio & (diff == d)
            if sel.any():
                out.append(_proportion(task, "accuracy", {"difficulty": d}, ok[sel], ctx))
    out += _unparsable(block, modality)
    return out


def _unparsable(block: Block, modality: np.ndarray) -> list[MetricRecord]:
    ans = block.pred["answer"]
    bad = (ans < 0) if block.task.kind == "yesno" else (ans == "")
    out = [MetricRecord(block.task.key, "unparsable", {}, bad.mean(), n=int(bad.sum()))]
    for m in sorted(set(modality.tolist())):
        sel = modality == m
        out.append(MetricRecord(block.task.key, "unparsable", {"modality": m},
                                bad[sel].mean(), n=int(bad[sel].sum())))
    return out


# -- abnormal explanation (judge) --

def _score_explanation(block: Block, ctx: ScoringContext) -> list[MetricRecord]:
    """Judge ratings against the reference annotation (LOKI C.2): total 0-100 and criteria.

    A missing response is rated as an empty one (the judge treats it as a refusal: 0).
    """
    task = block.task.key
    if ctx.judge is None:
        ctx.pending.append({"task": task, "metric": "explanation_score",
                            "reason": "the explanation score needs a judge (--judge NAME)"})
        return []
    from leaderboard.judges.base import ExplanationCase

    modality = block.item["modality"].astype(str)
    responses = block.pred["response"]
    cases = [ExplanationCase(str(block.ids[i]), responses[i] or "", modality[i],
                             block.truth["reference"][i]) for i in range(len(block))]
    ratings = ctx.judge.rate_explanations(cases)
    judge = ctx.judge.identity
    total = np.array([r.total for r in ratings], dtype=float)
    out = [_mean(task, "explanation_score", {}, total, judge, ctx)]
    for m in MODALITIES:
        sel = np.flatnonzero(modality == m)
        if sel.size == 0:
            continue
        out.append(_mean(task, "explanation_score", {"modality": m}, total[sel], judge, ctx))
        for crit in rubric.CRITERIA.get(m, {}):
            vals = np.array([ratings[i].scores[crit] for i in sel], dtype=float)
            out.append(_mean(task, f"crit_{crit}", {"modality": m}, vals, judge, ctx))
    return out


def _mean(task, metric, slc, values, judge, ctx) -> MetricRecord:
    low, high = bootstrap.bootstrap_mean_ci(values, n_resamples=ctx.n_resamples, seed=ctx.seed)
    return MetricRecord(task, metric, slc, float(values.mean()), low, high, int(values.size),
                        judge=judge)
