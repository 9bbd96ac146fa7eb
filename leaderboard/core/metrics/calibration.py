"""Calibration of fake-probability scores: reliability bins and expected calibration error.

A detector's ``score`` is its confidence that an item is fake (design.md, "Predictions"), so it
is read as a probability of the positive class. Calibration compares it with how often the items
it scores are fake:

* the scores are cut into ``n_bins`` **equal-width** bins on [0, 1]: bin ``b`` holds the scores
  in ``[b/n_bins, (b+1)/n_bins)``, the last bin also holds 1.0;
* per bin: ``n`` items, ``confidence`` = mean score, ``observed`` = fraction of fakes;
* ECE = sum over non-empty bins of ``n_b / N * |observed_b - confidence_b|`` (Naeini et al.,
  2015, on the positive-class probability; empty bins contribute nothing). 0 is perfectly
  calibrated, 1 the worst possible.

The CI is a percentile bootstrap over items (fixed seed, so a page shows the same interval on
every load); the number of resamples is bounded by a work budget so a large split stays cheap.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from leaderboard.core.metrics._validate import bool_vector, same_length, score_vector

#: default number of equal-width bins
N_BINS = 10
#: resamples of the bootstrap CI, and the most item draws it may make in all
N_RESAMPLES = 1000
WORK_BUDGET = 20_000_000


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability diagram: scores in [lo, hi) (the last bin includes 1.0)."""

    lo: float
    hi: float
    n: int
    confidence: float | None   # mean score in the bin; None when the bin is empty
    observed: float | None     # fraction of fakes in the bin; None when empty


def _inputs(y_true, y_score, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    y = bool_vector("y_true", y_true)
    s = score_vector("y_score", y_score)
    same_length(y_true=y, y_score=s)
    if len(s) == 0:
        raise ValueError("calibration needs at least one scored item, got none")
    if np.isnan(s).any():
        raise ValueError("y_score must have a score for every item (calibration reads scores; "
                         "a row without one has no place on the diagram), got NaN")
    return y, s


def bin_index(y_score, *, n_bins: int = N_BINS) -> np.ndarray:
    """The equal-width bin of each score (1.0 falls in the last bin).

    >>> bin_index([0.0, 0.05, 0.1, 0.95, 1.0], n_bins=10).tolist()
    [0, 0, 1, 9, 9]
    """
    s = np.asarray(y_score, dtype=np.float64)
    return np.minimum((s * n_bins).astype(np.int64), n_bins - 1)


def reliability_bins(y_true, y_score, *, n_bins: int = N_BINS) -> list[ReliabilityBin]:
    """The ``n_bins`` equal-width bins of a reliability diagram, empty ones included."""
    y, s = _inputs(y_true, y_score, n_bins)
    b = bin_index(s, n_bins=n_bins)
    n = np.bincount(b, minlength=n_bins)
    conf = np.bincount(b, weights=s, minlength=n_bins)
    obs = np.bincount(b, weights=y.astype(np.float64), minlength=n_bins)
    out = []
    for i in range(n_bins):
        k = int(n[i])
        out.append(ReliabilityBin(i / n_bins, (i + 1) / n_bins, k,
                                  float(conf[i] / k) if k else None,
                                  float(obs[i] / k) if k else None))
    return out


def expected_calibration_error(y_true, y_score, *, n_bins: int = N_BINS) -> float:
    """ECE with ``n_bins`` equal-width bins (see the module docstring).

    Four items, two bins: scores 0.2 and 0.4 (bin [0, 0.5): mean 0.3, one fake of two: 0.5)
    and 0.6 and 1.0 (bin [0.5, 1]: mean 0.8, two fakes: 1.0); ECE = 2/4 * 0.2 + 2/4 * 0.2:

    >>> round(expected_calibration_error([0, 1, 1, 1], [0.2, 0.4, 0.6, 1.0], n_bins=2), 6)
    0.2
    """
    y, s = _inputs(y_true, y_score, n_bins)
    b = bin_index(s, n_bins=n_bins)
    conf = np.bincount(b, weights=s, minlength=n_bins)
    obs = np.bincount(b, weights=y.astype(np.float64), minlength=n_bins)
    # per bin n_b/N * |obs_b/n_b - conf_b/n_b| = |sum of y - sum of scores| / N
    return float(np.abs(obs - conf).sum() / len(s))


def ece_with_ci(y_true, y_score, *, n_bins: int = N_BINS, n_resamples: int = N_RESAMPLES,
                seed: int = 0, level: float = 0.95) -> tuple[float, float, float, int]:
    """(ECE, CI low, CI high, resamples used): a percentile bootstrap over items.

    The resamples are ``min(n_resamples, WORK_BUDGET // N)`` but at least 100, so a split of
    200,000 items costs what one of 20,000 does; the count used is returned for the page.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    y, s = _inputs(y_true, y_score, n_bins)
    value = expected_calibration_error(y, s, n_bins=n_bins)
    total = len(s)
    reps = max(100, min(int(n_resamples), WORK_BUDGET // total))
    rng = np.random.default_rng(seed)
    b = bin_index(s, n_bins=n_bins)
    yf = y.astype(np.float64)
    draws = np.empty(reps)
    chunk = max(1, 2_000_000 // total)
    for start in range(0, reps, chunk):
        k = min(chunk, reps - start)
        idx = rng.integers(0, total, size=(k, total))
        flat = (np.arange(k)[:, None] * n_bins + b[idx]).ravel()
        conf = np.bincount(flat, weights=s[idx].ravel(), minlength=k * n_bins).reshape(k, n_bins)
        obs = np.bincount(flat, weights=yf[idx].ravel(), minlength=k * n_bins).reshape(k, n_bins)
        draws[start:start + k] = np.abs(obs - conf).sum(axis=1) / total
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(draws, [alpha, 1.0 - alpha])
    return value, float(lo), float(hi), reps
