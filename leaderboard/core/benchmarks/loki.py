"""LOKI (Ye et al., ICLR 2025): synthetic-data detection by large multimodal models.

Tasks (LOKI 3.3): ``judgment`` (yes/no, every sample asked twice: ``ask_fake`` "is it
AI-generated?" and ``ask_real`` "is it real?"; 3D as multi-view renders, the paper's main input),
``point_cloud_judgment`` (the same questions on 3D point clouds, an input the paper reports in its
supplement; the authors' ``3D/point_true_or_false.json``), ``multiple_choice`` (pick the
AI-generated or the real one of a same-domain pair), ``abnormal_selection`` (single-answer choice
of the inconsistent detail) and ``explanation`` (open "why is it AI-generated?", rated by a judge
against the human annotation).

Free text is read with the authors' own parsers, rule for rule (`leaderboard.core.extract`:
``loki_yes_no`` = their ``parse_true_or_false`` + ``eval_open``, ``loki_choice`` = their
``parse_multi_choice_response``; opendatalab/LOKI ``lm_evaluate/tasks/loki.py`` at 251b4f6).
Closed-form metrics (accuracy, the authors' balanced aggregate, NBI, unparsable) are in
`loki_closed`; the explanation score here.

- ``explanation_score``: the judge's total, 0-100, and one ``crit_<name>`` record per rubric
  criterion on the criterion's own scale (`leaderboard.core.rubric.CRITERIA`).

Slices: ``{}`` is every covered modality, audio included; ``{"scope": "without_audio"}`` is the
paper's "Overall" column (video, image, 3D and text; emitted only when all four are covered), as
is ``{"difficulty": d}`` (Table 4). Every other breakdown carries ``modality``: subcategory,
phrasing, difficulty, generator, text language and length.
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
from leaderboard.core.benchmarks.loki_closed import JUDGMENT_TASKS, MODALITIES, score_closed
from leaderboard.core.metrics import bootstrap
from leaderboard.core.records import MetricRecord
from leaderboard.core import rubric

PHRASINGS = ("ask_fake", "ask_real")
DIFFICULTIES = ("easy", "medium", "hard")
CRITERIA_NAMES = tuple(dict.fromkeys(c for crit in rubric.CRITERIA.values() for c in crit))
_ASKED_BOTH_WAYS = (*JUDGMENT_TASKS, "multiple_choice")


def _criterion_spec(name: str) -> MetricSpec:
    top = max(c.get(name, 0) for c in rubric.CRITERIA.values())
    return MetricSpec(f"Explanation: {name.replace('_', ' ')}", True, "num", 0.0, float(top),
                      f"Judge's mean score on the '{name}' criterion (0-{top}).")


@register
class Loki(Benchmark):
    key = "loki"
    title = "LOKI"
    kinds = {"judgment": "yesno", "point_cloud_judgment": "yesno", "multiple_choice": "choice",
             "abnormal_selection": "choice", "explanation": "explanation"}
    item_fields = {
        "phrasing": Field("category", _ASKED_BOTH_WAYS, PHRASINGS,
                          "ask_fake: asks for the AI-generated one; ask_real: for the real one"),
        "language": Field("category", (), ("en", "zh"), "text items: language"),
        "length": Field("category", (), ("short", "medium", "long"), "text items: length bin"),
    }
    label_fields = {
        "answer": Field("category", (*_ASKED_BOTH_WAYS, "abnormal_selection"),
                        description='"yes"/"no" (judgment) or the option letter'),
        "truth": Field("category", JUDGMENT_TASKS, ("fake", "real"),
                       "judgment: whether the sample is AI-generated"),
        "subcategory": Field("category",
                             description="image domain, video/3D generator family, text "
                                         "domain, audio kind (a real video carries the "
                                         "subcategory of the fake it is paired with; LOKI's 3D "
                                         "reals are paired with no generator and carry none)"),
        "authors_type": Field("category", description="the key the authors' aggregate_results "
                              "groups a row by (read from its question_type)"),
        "generator": Field("category", description="generator of a fake sample"),
        "difficulty": Field("category", (), DIFFICULTIES,
                            "human-rated difficulty (LOKI 3.3); hidden because human errors "
                            "correlate with the truth"),
        "reference": Field("json", ("explanation",), description="human anomaly annotation"),
    }
    metrics = {
        "accuracy": MetricSpec("Accuracy", True, description="Correct answers / questions "
                               "(the paper's headline), answers read with the authors' parsers; "
                               "a multiple-choice answer their parser cannot read counts "
                               "1/#options, the expected value of their random pick."),
        "balanced_accuracy": MetricSpec(
            "Balanced accuracy (authors' code)", True,
            description="The authors' aggregate_results: per type (acc on fake + acc on real)/2, "
                        "averaged weighted by the number of fake items; in a file whose reals "
                        "share one type (3D) every type uses that one real accuracy."),
        "nbi": MetricSpec("NBI", False, "signed", -1.0, 1.0,
                          "Normalized Bias Index (R_real - R_fake)/(R_real + R_fake); 0 is "
                          "unbiased, positive leans to 'real'. Ranked by |NBI| (abs_nbi)."),
        "abs_nbi": MetricSpec("|NBI|", False, "num", 0.0, 1.0, "Magnitude of the NBI."),
        "real_recall": MetricSpec("Recall on real", True, description="R_natural of the NBI."),
        "fake_recall": MetricSpec("Recall on AI-generated", True,
                                  description="R_generated of the NBI; per generator: the "
                                              "share of its fakes recognized."),
        "unparsable": MetricSpec("Unparsable answers", False,
                                 description="Fraction of rows whose response the authors' "
                                             "parser could not read (n = their number)"),
        "explanation_score": MetricSpec("Explanation score", True, "num", 0.0, 100.0,
                                        "Judge's rubric total normalized to 0-100 (LOKI C.2)."),
        **{f"crit_{c}": _criterion_spec(c) for c in CRITERIA_NAMES},
    }
    #: the authors' {"model", "responses": [...]} files, aligned by file and index
    #: (`leaderboard.core.authors_format`)
    accepts_offline_format = True

    def extract(self, kind: str, text, options):
        """The authors' parsers (`leaderboard.core.extract`): yes/no, or an option letter
        (`NOT_AN_OPTION` for their option-text answers, None where they would pick at random)."""
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
        return score_closed(block, ctx)


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
    modality = block.item["modality"].astype(str)
    ratings = explanation_ratings(block, ctx)
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


def explanation_ratings(block: Block, ctx: ScoringContext) -> list | None:
    """The judge's rating of every row, once per block and context (the per-item outcomes,
    `leaderboard.core.outcomes`, read the same ratings; rating is the expensive part); None
    without a judge."""
    if ctx.judge is None:
        return None
    memo = block.__dict__.get("_ratings")
    if memo is None or memo[0] is not ctx:  # another context may bring another judge
        from leaderboard.core.judge_cases import ExplanationCase

        modality = block.item["modality"].astype(str)
        responses = block.pred["response"]
        cases = [ExplanationCase(str(block.ids[i]), responses[i] or "", modality[i],
                                 block.truth["reference"][i]) for i in range(len(block))]
        memo = block.__dict__["_ratings"] = (ctx, ctx.judge.rate_explanations(cases))
    return memo[1]


def _mean(task, metric, slc, values, judge, ctx) -> MetricRecord:
    low, high = bootstrap.bootstrap_mean_ci(values, n_resamples=ctx.n_resamples, seed=ctx.seed)
    return MetricRecord(task, metric, slc, float(values.mean()), low, high, int(values.size),
                        judge=judge)
