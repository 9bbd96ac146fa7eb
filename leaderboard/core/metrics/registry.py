"""Every metric the leaderboard reports, with its direction, range and inputs.

Boards sort by ``higher_is_better`` without special cases; ``lower``/``upper`` bound the value;
``needs_score`` metrics are "n/a" (NaN here, None in a record) unless every row has a score.
``inputs`` names the keyword arguments ``fn`` takes, which lets the shared invariance tests build
inputs for any metric. ``higher_is_better`` is None for a diagnostic that is not ranked (NBI,
where 0 is ideal and the sign is the direction of the bias).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

from . import choice, classification, composite, group_balance, hallucination, masks, ranking

LOKI = "LOKI (ICLR 2025) 3.3, 4.1, C.2"
TRIDF = "TriDF 3.4, appendix H"
SYNCRED = "SynCred-Bench, evaluation (TPR(lambda) under FPR <= lambda%)"
UNIAIDET = "UniAIDet 4.1"
VCT2 = "VCT² 4"


@dataclass(frozen=True)
class MetricInfo:
    name: str
    fn: Callable[..., float]
    higher_is_better: bool | None
    lower: float
    upper: float
    needs_score: bool
    title: str
    paper: str
    inputs: tuple[str, ...]


def _tridf_tcs(*, acc_typeb, f05_a, f05_b, acc_tfq, mcq_clamped) -> float:
    return composite.tridf_tcs(acc_typeb=acc_typeb, f05_a=f05_a, f05_b=f05_b, acc_tfq=acc_tfq,
                               mcq_clamped=mcq_clamped).tcs


def _artifact_mean(name: str) -> Callable[..., float]:
    def mean(*, predicted, truth, answered, called_authentic=None) -> float:
        return hallucination.artifact_means(predicted=predicted, truth=truth, answered=answered,
                                            called_authentic=called_authentic)[name]

    mean.__name__ = f"{name}_mean"
    return mean


_BINARY = ("y_true", "y_pred")
_SCORED = ("y_true", "y_score")
_ARTIFACTS = ("predicted", "truth", "answered", "called_authentic")

_ENTRIES = [
    MetricInfo("accuracy", classification.accuracy, True, 0, 1, False, "Accuracy",
               f"{UNIAIDET}; {VCT2}; {LOKI}", _BINARY),
    MetricInfo("precision", classification.precision, True, 0, 1, False, "Precision", VCT2, _BINARY),
    MetricInfo("recall", classification.recall, True, 0, 1, False, "Recall / f.Acc / TPR",
               f"{VCT2}; {UNIAIDET}; {SYNCRED}", _BINARY),
    MetricInfo("real_accuracy", classification.real_accuracy, True, 0, 1, False, "r.Acc (TNR)",
               UNIAIDET, _BINARY),
    MetricInfo("false_positive_rate", classification.false_positive_rate, False, 0, 1, False, "FPR",
               SYNCRED, _BINARY),
    MetricInfo("balanced_accuracy", classification.balanced_accuracy, True, 0, 1, False,
               "Balanced accuracy", "leaderboard addition", _BINARY),
    MetricInfo("normalized_bias_index", classification.normalized_bias_index, None, -1, 1, False,
               "Normalized Bias Index (positive = biased toward 'real')", LOKI, _BINARY),
    MetricInfo("group_balanced_accuracy", group_balance.group_balanced_accuracy, True, 0, 1, False,
               "Balanced accuracy per type, weighted by #fake (authors' aggregate_results)", LOKI,
               ("correct", "is_fake", "group")),
    MetricInfo("average_precision", ranking.average_precision, True, 0, 1, True, "AP",
               f"{UNIAIDET}; {VCT2}", _SCORED),
    MetricInfo("roc_auc", ranking.roc_auc, True, 0, 1, True, "ROC-AUC", "leaderboard addition", _SCORED),
    MetricInfo("pr_auc", ranking.pr_auc, True, 0, 1, True, "PR-AUC", SYNCRED, _SCORED),
    *[MetricInfo(f"tpr_at_fpr_{pct}", partial(ranking.tpr_at_fpr, max_fpr=pct / 100), True, 0, 1, False,
                 f"TPR({pct}): TPR at FPR <= {pct}%", SYNCRED, ("y_true", "y_pred", "y_score"))
      for pct in (1, 5, 10)],
    MetricInfo("mcq_score", choice.mcq_mean, True, -1, 1, False, "MCQ score (unclamped)", TRIDF,
               ("selected", "correct")),
    MetricInfo("mcq_score_clamped", partial(choice.mcq_mean, clamp=True), True, 0, 1, False,
               "MCQ score clamped at 0 (challenge)", TRIDF, ("selected", "correct")),
    MetricInfo("cover", _artifact_mean("cover"), True, 0, 1, False, "Cover", TRIDF, _ARTIFACTS),
    MetricInfo("chair", _artifact_mean("chair"), False, 0, 1, False, "CHAIR", TRIDF, _ARTIFACTS),
    MetricInfo("hal", _artifact_mean("hal"), False, 0, 1, False, "Hal", TRIDF, _ARTIFACTS),
    MetricInfo("f05", _artifact_mean("f05"), True, 0, 1, False, "F0.5", TRIDF, _ARTIFACTS),
    MetricInfo("miou", masks.mean_iou, True, 0, 1, False, "mIoU", UNIAIDET, ("gt", "pred")),
    MetricInfo("tridf_tcs", _tridf_tcs, True, 0, 100, False,
               "TCS = 0.4 S_Det + 0.3 S_Hal + 0.3 S_Perc", "TriDF authors' challenge",
               ("acc_typeb", "f05_a", "f05_b", "acc_tfq", "mcq_clamped")),
]

METRICS: dict[str, MetricInfo] = {m.name: m for m in _ENTRIES}
