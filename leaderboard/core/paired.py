"""Paired comparison of two submissions scored on the same items (issue 14).

* Difference: value(A) - value(B) of the headline metric, with a paired 95% percentile CI from
  the joint bootstrap (`leaderboard.core.rank_intervals.joint_draws`: both evaluated on the same
  resampled items, within the metric's strata).
* Test: McNemar's exact test when the metric is a plain accuracy (a ``mean`` of 0/1 outcomes):
  under H0 the discordant items split Binomial(b + c, 1/2); two-sided p = min(1, 2 P(X <= min)),
  as ``scipy.stats.binomtest(min(b, c), b + c, 0.5)`` gives it. Otherwise the paired bootstrap:
  p = min(1, 2 min(P*(d <= 0), P*(d >= 0))) over the resampled differences d.

Cost (issue 24: one comparison on the largest benchmark must cost at most a second of CPU):

* Linear models (``mean``, ``cells``) whose items take few distinct (stratum, x_A, x_B) values
  (0/1 outcomes: at most four per stratum) are resampled by *group*: under the Poisson
  bootstrap a group of c identical items has a total weight Poisson(c), so one draw per group
  gives the same distribution as one per item, at a cost that does not grow with the items
  (`grouped_draws`; VCT²'s 166,000 items are 52 groups).
* Every other slice (a ranking metric such as SynCred's TPR at 5% FPR, or per-item partial
  credit) costs ~items x resamples. The caller passes ``n_resamples`` and ``max_items`` from its
  budget; a slice over ``max_items`` is bootstrapped on a stratified random subsample of that
  many items (fixed seed) and the resampled differences' spread around the subsample's own
  difference is scaled by sqrt(m / n) to the full slice (the spread of a root-n-consistent
  statistic shrinks as 1 / sqrt(n)), centred on the full slice's difference. The result says
  ``resamples`` and ``bootstrap_items`` so a reader sees when that happened.

Only aggregates leave this module: counts per slice, never which items. `compare_outcomes`
refuses (``refused`` with the reason) a slice with fewer than `MIN_ITEMS` items or fewer than
`MIN_DIFFERING` items on which the two submissions differ: with so few, the counts could pin
down single items' labels (two submissions of one team that differ on one item would reveal it).
"""
from __future__ import annotations

import math

import numpy as np

from leaderboard.core.outcomes import Outcome, combine, point_value
from leaderboard.core.rank_intervals import _BYTE_MEAN, N_RESAMPLES, SEED, joint_draws

MIN_ITEMS = 30
MIN_DIFFERING = 10
#: more distinct (stratum, x_A, x_B) groups than this: items are weighted one by one
MAX_GROUPS = 4096


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b and c discordant pairs.

    >>> mcnemar_exact(0, 0)
    1.0
    >>> round(mcnemar_exact(1, 9), 6)
    0.021484
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b!r}, c={c!r}")
    n, k = b + c, min(b, c)
    if n == 0 or b == c:
        return 1.0
    # P(X <= k) for X ~ Binomial(n, 1/2), summed in log space (n may be 100,000)
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2)
            for i in range(k + 1)]
    top = max(logs)
    tail = math.exp(top) * sum(math.exp(v - top) for v in logs)
    return float(min(1.0, 2.0 * tail))


def bootstrap_p(diffs: np.ndarray) -> float:
    """Two-sided paired-bootstrap p-value of H0: no difference."""
    d = diffs[~np.isnan(diffs)]
    if d.size == 0:
        return float("nan")
    return float(min(1.0, 2.0 * min((d <= 0).mean(), (d >= 0).mean())))


def percentile(values: np.ndarray, alpha: float = 0.05) -> tuple[float | None, float | None]:
    v = values[~np.isnan(values)]
    if v.size == 0:
        return None, None
    lo, hi = np.quantile(v, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def compare_outcomes(a: Outcome, b: Outcome, *, n_resamples: int = N_RESAMPLES,
                     seed: int = SEED, max_items: int | None = None) -> dict:
    """The paired comparison of A and B on one slice's items (see the module docstring).

    Returns ``{"n", "differing", "value_a", "value_b", "difference", "ci_low", "ci_high",
    "test", "p_value", "a_only", "b_only"}`` (``a_only``/``b_only``: McNemar's discordant counts,
    accuracy only; ``resamples``, ``bootstrap_items``: see the module docstring), or
    ``{"n", "refused": reason}`` when the slice is too small to show. ``max_items`` bounds the
    items a per-item bootstrap weighs (None: all).
    """
    if a.fingerprint() != b.fingerprint():
        raise ValueError("the two submissions were not scored on the same items")
    n = len(a)
    differing = int(np.count_nonzero(a.x != b.x))
    if n < MIN_ITEMS:
        return {"n": n, "refused": f"fewer than {MIN_ITEMS} items in this slice"}
    if differing < MIN_DIFFERING:
        return {"n": n, "refused": f"the two submissions differ on fewer than {MIN_DIFFERING} "
                                   "items here; counts this small could reveal single labels"}
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    rng = np.random.default_rng(seed)
    grouped = grouped_draws(a, b, n_resamples, rng)
    used = n
    if grouped is not None:
        point, draws = grouped
        diffs = draws[:, 0] - draws[:, 1]
    elif max_items is not None and n > max_items:
        point = np.array([point_value(a), point_value(b)])
        keep = _stratified_sample(a.strata, max_items, rng)
        sub_point, draws = joint_draws([a.subset(keep), b.subset(keep)],
                                       n_resamples=n_resamples, seed=seed)
        used = int(keep.sum())
        scale = math.sqrt(used / n)
        diffs = (point[0] - point[1]) + ((draws[:, 0] - draws[:, 1])
                                         - (sub_point[0] - sub_point[1])) * scale
    else:
        point, draws = joint_draws([a, b], n_resamples=n_resamples, seed=seed)
        diffs = draws[:, 0] - draws[:, 1]
    low, high = percentile(diffs)
    out = {"n": n, "differing": differing, "value_a": _num(point[0]), "value_b": _num(point[1]),
           "difference": _num(point[0] - point[1]), "ci_low": low, "ci_high": high,
           "resamples": int(n_resamples), "bootstrap_items": used}
    if a.model == "mean" and a.binary and b.binary:
        a_only = int(np.count_nonzero((a.x == 1) & (b.x == 0)))
        b_only = int(np.count_nonzero((a.x == 0) & (b.x == 1)))
        out.update(test="McNemar exact", p_value=mcnemar_exact(a_only, b_only),
                   a_only=a_only, b_only=b_only)
    else:
        out.update(test="paired bootstrap", p_value=bootstrap_p(diffs))
    return out


def groupable(a: Outcome, b: Outcome) -> bool:
    """True when `grouped_draws` applies (its cost does not grow with the items)."""
    if a.model not in ("mean", "cells"):
        return False
    return len(_groups(a, b)[1]) <= MAX_GROUPS


def _groups(a: Outcome, b: Outcome):
    """(G x 3 distinct rows [stratum, x_A, x_B], their counts); 1-D sorts only (fast)."""
    columns = [a.strata, a.x, b.x]
    codes, values = [], []
    for col in columns:
        vals, inv = np.unique(col, return_inverse=True)
        codes.append(inv.astype(np.int64))
        values.append(vals.astype(np.float64))
    key = (codes[0] * len(values[1]) + codes[1]) * len(values[2]) + codes[2]
    uniq_key, counts = np.unique(key, return_counts=True)
    c2 = uniq_key % len(values[2])
    rest = uniq_key // len(values[2])
    c1, c0 = rest % len(values[1]), rest // len(values[1])
    uniq = np.column_stack([values[0][c0], values[1][c1], values[2][c2]])
    return uniq, counts


def grouped_draws(a: Outcome, b: Outcome, n_resamples: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray] | None:
    """(point values [A, B], B x 2 resampled values) of a linear model drawn per group of
    identical (stratum, x_A, x_B) items, or None when the model is not linear or the items take
    more than `MAX_GROUPS` distinct values."""
    if a.model not in ("mean", "cells"):
        return None
    uniq, counts = _groups(a, b)
    if len(uniq) > MAX_GROUPS:
        return None
    weights = rng.poisson(counts * _BYTE_MEAN, size=(n_resamples, len(uniq))).astype(np.float64)
    sums, sizes, point_sums, point_sizes = {}, {}, {}, {}
    for c in np.unique(uniq[:, 0]).tolist():
        sel = uniq[:, 0] == c
        key = int(c)
        sums[key] = weights[:, sel] @ uniq[sel, 1:]
        sizes[key] = weights[:, sel].sum(axis=1, keepdims=True)
        point_sums[key] = (counts[sel] @ uniq[sel, 1:])[None, :].astype(np.float64)
        point_sizes[key] = float(counts[sel].sum())
    return combine(a, point_sums, point_sizes)[0], combine(a, sums, sizes)


def _stratified_sample(strata: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """Row mask of about ``m`` items, each stratum kept in proportion (at least 2 of each)."""
    keep = np.zeros(len(strata), dtype=bool)
    frac = m / len(strata)
    for c in np.unique(strata).tolist():
        rows = np.flatnonzero(strata == c)
        k = min(len(rows), max(2, int(round(len(rows) * frac))))
        keep[rng.choice(rows, size=k, replace=False)] = True
    return keep


def _num(v) -> float | None:
    v = float(v)
    return None if math.isnan(v) else v
