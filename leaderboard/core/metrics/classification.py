"""Hard-decision metrics for fake-vs-real detection (fake is the positive class).

``y_true`` and ``y_pred`` are 1-D bool arrays, True = fake. Every metric is a function of the four
confusion counts, and the count-level formulas in ``FROM_COUNTS`` accept numpy arrays of counts so
the bootstrap can evaluate thousands of resampled count vectors at once with the same code.

Ill-defined values are NaN, an explicit choice (never a silent 0): a ratio whose denominator is
zero (precision with no predicted fakes, recall with no fake items, real accuracy with no real
items, anything on empty input) is NaN. The one fixed exception is the spec's NBI rule: 0 when both
recalls are 0.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._validate import bool_vector, ratio, same_length


class BinaryCounts(NamedTuple):
    tp: int
    fp: int
    tn: int
    fn: int


def binary_counts(*, y_true, y_pred) -> BinaryCounts:
    """Confusion counts with fake as the positive class.

    >>> binary_counts(y_true=[True, True, False, False], y_pred=[True, False, True, False])
    BinaryCounts(tp=1, fp=1, tn=1, fn=1)
    """
    t = bool_vector("y_true", y_true)
    p = bool_vector("y_pred", y_pred)
    same_length(y_true=t, y_pred=p)
    n_pos = int(np.count_nonzero(t))
    tp = int(np.count_nonzero(t & p))
    n_pred = int(np.count_nonzero(p))
    fp = n_pred - tp
    tn = len(t) - n_pos - fp
    return BinaryCounts(tp=tp, fp=fp, tn=tn, fn=n_pos - tp)


# Count-level formulas: each takes (tp, fp, tn, fn) as scalars or broadcastable arrays.
def _accuracy(tp, fp, tn, fn):
    return ratio(np.add(tp, tn), np.add(np.add(tp, tn), np.add(fp, fn)))


def _precision(tp, fp, tn, fn):
    return ratio(tp, np.add(tp, fp))


def _recall(tp, fp, tn, fn):
    return ratio(tp, np.add(tp, fn))


def _real_accuracy(tp, fp, tn, fn):
    return ratio(tn, np.add(tn, fp))


def _false_positive_rate(tp, fp, tn, fn):
    return ratio(fp, np.add(tn, fp))


def _balanced_accuracy(tp, fp, tn, fn):
    # NaN when either class is absent: a "balance" over one class is not a balanced accuracy.
    return np.add(_recall(tp, fp, tn, fn), _real_accuracy(tp, fp, tn, fn)) / 2.0


def _normalized_bias_index(tp, fp, tn, fn):
    r_fake = np.asarray(_recall(tp, fp, tn, fn), dtype=np.float64)
    r_real = np.asarray(_real_accuracy(tp, fp, tn, fn), dtype=np.float64)
    total = r_real + r_fake
    out = np.asarray(ratio(r_real - r_fake, total), dtype=np.float64)
    # The spec fixes NBI = 0 when both recalls are 0 (both classes present, every answer wrong).
    out = np.where(total == 0, 0.0, out)
    return out if out.ndim else float(out)


FROM_COUNTS = {
    "accuracy": _accuracy,
    "precision": _precision,
    "recall": _recall,
    "real_accuracy": _real_accuracy,
    "false_positive_rate": _false_positive_rate,
    "balanced_accuracy": _balanced_accuracy,
    "normalized_bias_index": _normalized_bias_index,
}
"""Metric name -> formula on confusion counts (vectorized; used by the bootstrap fast path)."""


def _from_counts(name: str, y_true, y_pred) -> float:
    return float(FROM_COUNTS[name](*binary_counts(y_true=y_true, y_pred=y_pred)))


def accuracy(*, y_true, y_pred) -> float:
    """(TP + TN) / n; NaN on empty input (UniAIDet Acc with the paper's typo fixed; VCT² Acc).

    >>> accuracy(y_true=[True, False, False, True], y_pred=[True, False, True, True])
    0.75
    """
    return _from_counts("accuracy", y_true, y_pred)


def precision(*, y_true, y_pred) -> float:
    """TP / (TP + FP); NaN when nothing is predicted fake (VCT² precision).

    >>> precision(y_true=[True, False, False], y_pred=[True, True, False])
    0.5
    """
    return _from_counts("precision", y_true, y_pred)


def recall(*, y_true, y_pred) -> float:
    """TP / (TP + FN) = TPR = UniAIDet's f.Acc; NaN when there are no fake items.

    >>> recall(y_true=[True, True, False], y_pred=[True, False, False])
    0.5
    """
    return _from_counts("recall", y_true, y_pred)


def real_accuracy(*, y_true, y_pred) -> float:
    """TN / (TN + FP) = TNR = UniAIDet's r.Acc; NaN when there are no real items.

    >>> real_accuracy(y_true=[False, False, True], y_pred=[True, False, True])
    0.5
    """
    return _from_counts("real_accuracy", y_true, y_pred)


def false_positive_rate(*, y_true, y_pred) -> float:
    """FP / (FP + TN) (SynCred's FPR on FP450); NaN when there are no real items.

    >>> false_positive_rate(y_true=[False, False, False, False], y_pred=[True, False, False, False])
    0.25
    """
    return _from_counts("false_positive_rate", y_true, y_pred)


def balanced_accuracy(*, y_true, y_pred) -> float:
    """(TPR + TNR) / 2; NaN unless both classes are present.

    >>> balanced_accuracy(y_true=[True, True, False, False], y_pred=[True, True, True, False])
    0.75
    """
    return _from_counts("balanced_accuracy", y_true, y_pred)


def normalized_bias_index(*, y_true, y_pred) -> float:
    """LOKI's NBI = (R_real - R_fake) / (R_real + R_fake) in [-1, 1] (LOKI 4.1).

    R_real is the recall on real items (TNR), R_fake the recall on AI-generated items (TPR).
    Positive means biased toward answering "real". 0 when both recalls are 0 (the spec's rule);
    NaN when either class is absent.

    >>> normalized_bias_index(y_true=[True, True, False, False], y_pred=[False, False, False, True])
    1.0
    >>> normalized_bias_index(y_true=[True, False], y_pred=[False, True])
    0.0
    """
    return _from_counts("normalized_bias_index", y_true, y_pred)
