"""Threshold-free metrics on fake-confidence scores, and SynCred's TPR at an FPR budget.

Scores are "confidence of fake" in [0, 1]; NaN marks a row without a score. The spec shows a
threshold-free metric only when every row of the block has a score, so any NaN makes AP, ROC-AUC
and PR-AUC NaN ("n/a"). A metric that needs both classes is NaN when one is absent.

All curves come from one stable sort by decreasing score, grouped into distinct thresholds
("fake if score >= t", tied scores fall together). The ``*_from_curve`` helpers accept cumulative
counts with any leading axes, so the bootstrap evaluates many resamples with the same formulas.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._validate import bool_vector, fraction, same_length, score_vector


class Curve(NamedTuple):
    """Cumulative counts at each distinct threshold, highest threshold first."""

    tps: np.ndarray
    fps: np.ndarray
    thresholds: np.ndarray


def _inputs(y_true, y_score) -> tuple[np.ndarray, np.ndarray] | None:
    t = bool_vector("y_true", y_true)
    s = score_vector("y_score", y_score)
    same_length(y_true=t, y_score=s)
    if np.isnan(s).any():
        return None
    return t, s


def sort_order(y_score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order by decreasing score (stable) and the index of the last item of each tied group."""
    order = np.argsort(-y_score, kind="stable")
    s = y_score[order]
    last = np.flatnonzero(s[1:] != s[:-1])      # not np.diff: -inf - -inf would warn
    last = np.concatenate([last, [s.size - 1]]) if s.size else last
    return order, last


def binary_curve(y_true: np.ndarray, y_score: np.ndarray) -> Curve:
    """Cumulative TP/FP counts at each distinct score, highest first (sklearn's binary_clf_curve)."""
    order, last = sort_order(y_score)
    t = y_true[order]
    tps = np.cumsum(t)[last]
    fps = (last + 1) - tps
    return Curve(tps=tps, fps=fps, thresholds=y_score[order][last])


def average_precision_from_curve(tps, fps):
    """sum_k (R_k - R_{k-1}) P_k over thresholds; leading axes are independent curves."""
    tps = np.asarray(tps, dtype=np.float64)
    fps = np.asarray(fps, dtype=np.float64)
    n_pos = tps[..., -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = np.where(tps + fps > 0, tps / np.maximum(tps + fps, 1), 0.0)
        rec = tps / n_pos
    d_rec = np.diff(rec, axis=-1, prepend=0.0)
    ap = np.sum(d_rec * prec, axis=-1)
    return np.where(n_pos[..., 0] > 0, ap, np.nan)


def roc_auc_from_curve(tps, fps):
    """Trapezoidal area under (FPR, TPR) from (0, 0); leading axes are independent curves."""
    tps = np.asarray(tps, dtype=np.float64)
    fps = np.asarray(fps, dtype=np.float64)
    n_pos, n_neg = tps[..., -1:], fps[..., -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = np.concatenate([np.zeros_like(n_pos), tps], axis=-1) / n_pos
        fpr = np.concatenate([np.zeros_like(n_neg), fps], axis=-1) / n_neg
    area = np.sum(np.diff(fpr, axis=-1) * (tpr[..., 1:] + tpr[..., :-1]) / 2.0, axis=-1)
    return np.where((n_pos[..., 0] > 0) & (n_neg[..., 0] > 0), area, np.nan)


def tpr_at_fpr_from_curve(tps, fps, *, n_pos, n_neg, max_fpr):
    """Best TPR over operating points with FPR <= max_fpr; the empty point (0, 0) always counts."""
    tps = np.asarray(tps, dtype=np.float64)
    fps = np.asarray(fps, dtype=np.float64)
    n_neg = np.asarray(n_neg, dtype=np.float64)
    n_pos = np.asarray(n_pos, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        # k / n compared with max_fpr (not k <= max_fpr * n): division is correctly rounded, so
        # an FPR exactly at the budget (29/100 vs 0.29) is never lost to a rounding error.
        feasible = fps / n_neg[..., None] <= max_fpr
        best = np.max(np.where(feasible, tps, 0.0), axis=-1, initial=0.0)
        out = best / n_pos
    return np.where((n_pos > 0) & (n_neg > 0), out, np.nan)


def average_precision(*, y_true, y_score) -> float:
    """Average precision, sklearn's definition (UniAIDet / VCT² AP).

    AP = sum_k (R_k - R_{k-1}) P_k over distinct thresholds, highest first, with R_0 = 0: no
    interpolation. Equals ``sklearn.metrics.average_precision_score``. NaN when there is no fake
    item (sklearn warns and returns 0 there) or any score is missing.

    >>> average_precision(y_true=[False, False, True, True], y_score=[0.1, 0.4, 0.35, 0.8])
    0.8333333333333333
    """
    got = _inputs(y_true, y_score)
    if got is None or not got[0].any():
        return float("nan")
    curve = binary_curve(*got)
    return float(average_precision_from_curve(curve.tps, curve.fps))


def roc_auc(*, y_true, y_score) -> float:
    """Area under the ROC curve (trapezoids, ties as one step); equals sklearn's roc_auc_score.

    NaN unless both classes are present and every row has a score.

    >>> roc_auc(y_true=[False, False, True, True], y_score=[0.1, 0.4, 0.35, 0.8])
    0.75
    """
    got = _inputs(y_true, y_score)
    if got is None or got[0].all() or not got[0].any():
        return float("nan")
    curve = binary_curve(*got)
    return float(roc_auc_from_curve(curve.tps, curve.fps))


def pr_auc(*, y_true, y_score) -> float:
    """SynCred's PR-AUC, computed as average precision (the spec; identical to `average_precision`).

    The step-wise sum of ``sklearn.metrics.average_precision_score``, not the trapezoidal area
    under the precision-recall points: trapezoids interpolate linearly between operating points
    and overstate the area: a constant score would get (1 + prevalence) / 2 (0.80 at prevalence
    0.59), where AP gives the prevalence itself.
    NaN when there is no fake item or a score is missing.

    >>> pr_auc(y_true=[True, False, True], y_score=[0.5, 0.5, 0.5])   # constant: the prevalence
    0.6666666666666666
    """
    return average_precision(y_true=y_true, y_score=y_score)


def tpr_at_fpr(*, y_true, y_pred, y_score=None, max_fpr) -> float:
    """SynCred's TPR(lambda) = max over tau of TPR(tau) s.t. FPR(tau) <= lambda (seed 002, the
    "low false-positive constraint" definition and evaluation step (5)).

    ``max_fpr`` is a fraction (lambda = 5% -> 0.05). With a score on every row, it is the paper's
    pure threshold sweep: the operating points are "fake if score >= tau" for tau over the
    distinct submitted scores (tied scores fall together), plus the point that flags nothing
    (TPR 0, FPR 0). ``y_pred`` plays no part then: fakes scored 0.2 and reals 0.1 get TPR(5) = 1
    whatever decision was submitted (the paper sweeps the detector's scores; a submitted label
    is one operating point among them). This equals the best TPR of sklearn's
    ``roc_curve(drop_intermediate=False)`` among points with FPR <= lambda.

    Labels only (``y_score`` None, or any score missing: the sweep needs every row): the one
    operating point ``y_pred`` gives, TPR if FPR <= max_fpr else 0. NaN when either class is
    absent.

    >>> y_true = [True] * 1000 + [False] * 1000          # the paper's Llama-3.2-11B-V fact:
    >>> y_pred = [True] * 863 + [False] * 137 + [True] * 796 + [False] * 204
    >>> tpr_at_fpr(y_true=y_true, y_pred=y_pred, max_fpr=0.05)   # TPR 86.3%, FPR 79.6%
    0.0
    >>> tpr_at_fpr(y_true=[True, True, False], y_pred=[False] * 3, y_score=[0.2, 0.2, 0.1],
    ...            max_fpr=0.05)
    1.0
    """
    t = bool_vector("y_true", y_true)
    p = bool_vector("y_pred", y_pred)
    lam = fraction("max_fpr", max_fpr)
    same_length(y_true=t, y_pred=p)
    n_pos = int(np.count_nonzero(t))
    n_neg = t.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    s = None if y_score is None else score_vector("y_score", y_score)
    if s is not None:
        same_length(y_true=t, y_score=s)
    if s is None or np.isnan(s).any():
        tp = np.count_nonzero(t & p)
        fp = np.count_nonzero(~t & p)
        return float(tp / n_pos) if fp / n_neg <= lam else 0.0
    curve = binary_curve(t, s)
    return float(tpr_at_fpr_from_curve(curve.tps, curve.fps, n_pos=n_pos, n_neg=n_neg,
                                       max_fpr=lam))


class CurvePoints(NamedTuple):
    x: np.ndarray
    y: np.ndarray
    thresholds: np.ndarray


def _downsample(n: int, max_points: int) -> np.ndarray:
    if max_points < 2:
        raise ValueError(f"max_points must be >= 2, got {max_points!r}")
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(np.intp))


def roc_points(*, y_true, y_score, max_points: int = 200) -> CurvePoints | None:
    """ROC curve for plots: x = FPR, y = TPR, from (0, 0) to (1, 1), at most ``max_points``.

    The first and last points are always kept; the rest are evenly spaced along the curve's
    thresholds. None when the curve is undefined (one class absent or a score missing).
    """
    got = _inputs(y_true, y_score)
    if got is None or got[0].all() or not got[0].any():
        return None
    tps, fps, thr = binary_curve(*got)
    x = np.concatenate([[0.0], fps / fps[-1]])
    y = np.concatenate([[0.0], tps / tps[-1]])
    thr = np.concatenate([[np.inf], thr])
    keep = _downsample(x.size, max_points)
    return CurvePoints(x=x[keep], y=y[keep], thresholds=thr[keep])


def pr_points(*, y_true, y_score, max_points: int = 200) -> CurvePoints | None:
    """Precision-recall curve for plots: x = recall, y = precision, from (0, 1), at most
    ``max_points`` (sklearn's ``precision_recall_curve`` points). None when undefined."""
    got = _inputs(y_true, y_score)
    if got is None or not got[0].any():
        return None
    tps, fps, thr = binary_curve(*got)
    x = np.concatenate([[0.0], tps / tps[-1]])
    y = np.concatenate([[1.0], tps / (tps + fps)])
    thr = np.concatenate([[np.inf], thr])
    keep = _downsample(x.size, max_points)
    return CurvePoints(x=x[keep], y=y[keep], thresholds=thr[keep])
