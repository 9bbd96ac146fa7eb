"""Confusion matrices of class decisions (fake/real, yes/no, option letters).

Rows are the true classes, columns the decided ones, both in the order of ``labels``. A decision
that is none of ``labels`` (an unreadable answer, a detection row with neither label nor score)
is counted in ``unanswered`` for its true class rather than dropped, so every item is counted
once: ``matrix.sum() + unanswered.sum() == n``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Confusion:
    labels: tuple[str, ...]
    matrix: np.ndarray       # int64, len(labels) x len(labels): [true, decided]
    unanswered: np.ndarray   # int64, one per true class
    other_truth: int = 0     # items whose truth is none of ``labels`` (not in the matrix)

    @property
    def n(self) -> int:
        return int(self.matrix.sum() + self.unanswered.sum())

    def as_dict(self) -> dict:
        return {"labels": list(self.labels), "matrix": self.matrix.tolist(),
                "unanswered": self.unanswered.tolist(), "n": self.n}


def confusion_matrix(y_true: Sequence, y_pred: Sequence, *, labels: Sequence[str]) -> Confusion:
    """Count (true, decided) pairs over ``labels``.

    >>> c = confusion_matrix(["fake", "fake", "real", "real", "fake"],
    ...                      ["fake", "real", "real", "real", ""], labels=["fake", "real"])
    >>> c.matrix.tolist(), c.unanswered.tolist(), c.n
    ([[1, 1], [0, 2]], [1, 0], 5)
    """
    labels = tuple(str(v) for v in labels)
    if not labels or len(set(labels)) != len(labels):
        raise ValueError(f"labels must be distinct class names, got {list(labels)}")
    t = np.asarray(y_true).astype(str)
    p = np.asarray(y_pred).astype(str)
    if t.ndim != 1 or t.shape != p.shape:
        raise ValueError(f"y_true and y_pred must be 1-D of one length, got shapes {t.shape} "
                         f"and {p.shape}")
    k = len(labels)
    lut = {v: i for i, v in enumerate(labels)}
    ti = np.fromiter((lut.get(v, -1) for v in t.tolist()), dtype=np.int64, count=len(t))
    pi = np.fromiter((lut.get(v, -1) for v in p.tolist()), dtype=np.int64, count=len(p))
    known = ti >= 0
    answered = known & (pi >= 0)
    matrix = np.bincount(ti[answered] * k + pi[answered], minlength=k * k).reshape(k, k)
    unanswered = np.bincount(ti[known & (pi < 0)], minlength=k)
    return Confusion(labels, matrix.astype(np.int64), unanswered.astype(np.int64),
                     int((~known).sum()))
