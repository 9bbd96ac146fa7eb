"""SynCred-Bench: AI images of credible documents and interfaces vs the FP450 real negatives.

Paper: "SynCred-Bench" (seed 002, in Chinese): 600 GPT-Image-2 positives = 6 credible forms x 100,
spread over 7 circulation styles, Chinese and English, plus FP450, 450 real negatives; detectors
see only the image. The headline is TPR(5): the best true-positive rate at an FPR <= 5% on FP450.

Metrics (fractions; see `METRICS` for directions):

* ``tpr`` = TP / (TP + FN) on positives; ``fpr`` = FP / (FP + TN) on negatives; ``accuracy``.
* ``tpr_at_fpr_1`` / ``_5`` / ``_10``: TPR(lambda) = max TPR(tau) s.t. FPR(tau) <= lambda% by
  `leaderboard.core.metrics.ranking.tpr_at_fpr`: the paper's pure threshold sweep over the
  submitted scores when every row has one (the submitted labels play no part then); labels only:
  TPR if FPR <= lambda% else 0. ``metric_version`` "2" (version 1 capped the sweep by the
  submitted decision).
* ``pr_auc``: average precision (sklearn's ``average_precision_score``, the step-wise sum; the
  spec), n/a unless every row has a score. ``metric_version`` "2" (version 1 was the trapezoidal
  area, which overstates: a constant score got (1 + prevalence) / 2).
* ``tpr`` by form, style, style group (DR = SC/CC/FC, OC = CV/OP, NR and SP alone) and language;
  ``fpr`` along the same axes where the negatives carry the attribute (FP450 was hand-balanced
  over the under-represented styles, so negatives have styles too).
* ``tpr_delta`` per style: that style's TPR minus the unweighted mean of the per-style TPRs (the
  paper's "screenshot -11.1pp, fax +9.4pp"; with balanced styles the two means coincide).
* ``fn_cause_<cause>``: false-negative attribution from ``rationale`` (section "false-negative
  attribution"): the share of false negatives with a rationale whose rationale names the cause
  (`leaderboard.core.causes.CAUSE_TITLES`: layout/template, interface conventions, typography, camera
  perspective and lighting, no visible AI artifacts), mapped by ``ctx.judge.attribute_causes``
  and carrying the judge's identity; pending without a judge or with one that cannot map them.

Choice: form, style and language are hidden labels although negatives carry them too: the paper's
detectors get the image and a fixed instruction only, and metadata such as "FC fax copy" would be
a side channel real deployments do not have.

95% CIs (`leaderboard.core.metrics.bootstrap`, fixed seed, items resampled within class): exact
binomial draws for the count metrics and per-slice rates, one sort and resampled multiplicities for
TPR(lambda) and PR-AUC; the style deltas resample every style jointly (they share one mean).
"""
from __future__ import annotations

import numpy as np

from leaderboard.core.benchmarks.base import (
    Benchmark,
    Block,
    Field,
    MetricSpec,
    ScoringContext,
    register,
)
from leaderboard.core.metrics.bootstrap import (
    binomial_draws,
    bootstrap_ranking_ci,
    count_metric_cis,
    percentile_ci,
)
from leaderboard.core.metrics.ranking import pr_auc, tpr_at_fpr
from leaderboard.core.records import MetricRecord
from leaderboard.core.causes import CAUSE_KEYS, CAUSE_TITLES

FORMS = ("ML", "IN", "PI", "CR", "AD", "AM")
STYLES = ("NR", "SC", "CC", "FC", "SP", "CV", "OP")
STYLE_GROUPS = {"NR": "NR", "SC": "DR", "CC": "DR", "FC": "DR", "SP": "SP", "CV": "OC", "OP": "OC"}
LANGUAGES = ("zh", "en")
LAMBDAS = (1, 5, 10)
#: metrics whose definition changed (issue 11): TPR(lambda) is the pure sweep, PR-AUC is AP
METRIC_VERSIONS = {"pr_auc": "2", **{f"tpr_at_fpr_{lam}": "2" for lam in LAMBDAS}}


@register
class SynCred(Benchmark):
    key = "syncred"
    title = "SynCred-Bench"
    kinds = {"detection": "detection"}
    item_fields: dict[str, Field] = {}
    keeps_text = ("rationale",)  # read by the false-negative attribution
    label_fields = {
        "label": Field("category", ("*",), ("fake", "real"), "fake = AI-generated positive"),
        "form": Field("category", (), FORMS, "credible form category"),
        "style": Field("category", (), STYLES, "circulation style"),
        "language": Field("category", (), LANGUAGES, "language of the embedded text"),
    }
    metrics = {
        "tpr": MetricSpec("TPR", True, description="TP / (TP + FN) on AI positives"),
        "fpr": MetricSpec("FPR", False, description="FP / (FP + TN) on FP450 negatives"),
        "accuracy": MetricSpec("Accuracy", True),
        **{f"tpr_at_fpr_{lam}": MetricSpec(f"TPR({lam})", True,
                                           description=f"best TPR with FPR <= {lam}%")
           for lam in LAMBDAS},
        "pr_auc": MetricSpec("PR-AUC", True),
        "tpr_delta": MetricSpec("TPR - mean", True, fmt="signed", lower=-1.0, upper=1.0,
                                description="style's TPR minus the mean over styles"),
        **{f"fn_cause_{key}": MetricSpec(f"FN cause: {title}", False,
                                         description="share of false negatives whose rationale "
                                                     "names this cause (judge-mapped)")
           for key, title in CAUSE_TITLES.items()},
    }

    def extract(self, kind, text, options):
        return None  # detection rows carry label/score; there is nothing to extract

    def score_block(self, block: Block, ctx: ScoringContext) -> list[MetricRecord]:
        task = block.task.key
        boot = {"n_resamples": ctx.n_resamples, "seed": ctx.seed}
        y = block.truth["label"] == "fake"
        dec = block.pred["decision"].astype(bool)
        score = block.pred["score"]
        scored = bool(len(y)) and bool(block.pred["has_score"].all())
        n_pos, n = int(y.sum()), len(y)
        tp, fp = int((y & dec).sum()), int((~y & dec).sum())
        out: list[MetricRecord] = []

        def rec(metric, sl, value, ci=(None, None), n=0):
            out.append(MetricRecord(task, metric, sl, value, ci[0], ci[1], n,
                                    metric_version=METRIC_VERSIONS.get(metric, "1")))

        cis = count_metric_cis(tp=tp, fp=fp, tn=n - n_pos - fp, fn=n_pos - tp,
                               metrics=("recall", "false_positive_rate", "accuracy"), **boot)
        rec("tpr", {}, tp / n_pos if n_pos else None, cis["recall"], n_pos)
        rec("fpr", {}, fp / (n - n_pos) if n > n_pos else None, cis["false_positive_rate"],
            n - n_pos)
        rec("accuracy", {}, (tp + n - n_pos - fp) / n if n else None, cis["accuracy"], n)
        for lam in LAMBDAS:
            kw = {"y_true": y, "y_pred": dec, "y_score": score if scored else None,
                  "max_fpr": lam / 100}
            value = tpr_at_fpr(**kw) if n else None
            rec(f"tpr_at_fpr_{lam}", {}, value,
                bootstrap_ranking_ci(metric="tpr_at_fpr", **kw, **boot) if n else (None, None), n)
        if scored and n_pos:
            rec("pr_auc", {}, pr_auc(y_true=y, y_score=score),
                bootstrap_ranking_ci(metric="pr_auc", y_true=y, y_score=score, **boot), n)
        else:
            rec("pr_auc", {}, None, n=n)
            ctx.notes.append(f"{self.key}/{task}: PR-AUC is n/a: it needs a score on every row")
        self._breakdowns(block, y, dec, boot, rec)
        self._attribution(block, y, dec, ctx, boot, out)
        return out

    def _breakdowns(self, block, y, dec, boot, rec) -> None:
        axes = {"form": None, "style": None, "style_group": None, "language": None}
        for axis in axes:
            src = "style" if axis == "style_group" else axis
            if not block.has(src):
                continue
            col = block.col(src)
            if axis == "style_group":
                col = np.array([STYLE_GROUPS.get(str(v), "") for v in col.tolist()], dtype=str)
            axes[axis] = col
            for value in sorted(set(col.tolist()) - {""}):
                rows = col == value
                pos, neg = rows & y, rows & ~y
                for metric, part in (("tpr", pos), ("fpr", neg)):
                    if part.any():
                        k, m = int((part & dec).sum()), int(part.sum())
                        draws = binomial_draws(n=[m], k=[k], **boot)[:, 0] / m
                        rec(metric, {axis: value}, k / m, percentile_ci(draws), m)
        style = axes["style"]
        if style is None:
            return
        # the deltas share one mean, so resample every style jointly
        present = [s for s in STYLES if (y & (style == s)).any()]
        if not present:
            return
        hits = np.array([int((y & dec & (style == s)).sum()) for s in present])
        sizes = np.array([int((y & (style == s)).sum()) for s in present])
        rates = hits / sizes
        draws = binomial_draws(n=sizes, k=hits, **boot) / sizes      # resamples x styles
        mean, mean_b = rates.mean(), draws.mean(axis=1)
        for i, s in enumerate(present):
            rec("tpr_delta", {"style": s}, rates[i] - mean, percentile_ci(draws[:, i] - mean_b),
                int(sizes[i]))

    def _attribution(self, block, y, dec, ctx, boot, out) -> None:
        """``fn_cause_*`` over the false negatives that carry a rationale (overall only)."""
        rationale = block.pred.get("rationale")
        if rationale is None:
            return
        fn_with_reason = [r for r, miss in zip(rationale.tolist(), (y & ~dec).tolist())
                          if miss and isinstance(r, str) and r.strip()]
        if not fn_with_reason:
            return
        causes = None
        if ctx.judge is not None:
            try:
                causes = ctx.judge.attribute_causes(fn_with_reason)
            except NotImplementedError:
                pass
        if causes is None:
            why = ("needs a judge that maps rationales to SynCred's false-negative causes"
                   if ctx.judge is None else
                   f"judge {getattr(ctx.judge, 'identity', '?')} cannot map rationales to "
                   "SynCred's false-negative causes")
            ctx.pending.append({"task": block.task.key, "metric": "fn_attribution",
                                "reason": f"{why} ({len(fn_with_reason)} false negatives with a "
                                          "rationale)"})
            return
        m = len(fn_with_reason)
        for key in CAUSE_KEYS:
            k = sum(key in c for c in causes)
            draws = binomial_draws(n=[m], k=[k], **boot)[:, 0] / m
            low, high = percentile_ci(draws)
            out.append(MetricRecord(block.task.key, f"fn_cause_{key}", {}, k / m, low, high, m,
                                    judge=ctx.judge.identity))
