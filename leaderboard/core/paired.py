"""Paired comparison of two submissions scored on the same items (issue 14).

* Difference: value(A) - value(B) of the headline metric, with a paired 95% percentile CI from
  the joint bootstrap (`leaderboard.core.rank_intervals.joint_draws`: both evaluated on the same
  resampled items, within the metric's strata).
* Test: McNemar's exact test when the metric is a plain accuracy (a ``mean`` of 0/1 outcomes):
  under H0 the discordant items split Binomial(b + c, 1/2); two-sided p = min(1, 2 P(X <= min)),
  as ``scipy.stats.binomtest(min(b, c), b + c, 0.5)`` gives it. Otherwise the paired bootstrap:
  p = min(1, 2 min(P*(d <= 0), P*(d >= 0))) over the resampled differences d.

Only aggregates leave this module: counts per slice, never which items. `compare_outcomes`
refuses (``refused`` with the reason) a slice with fewer than `MIN_ITEMS` items or fewer than
`MIN_DIFFERING` items on which the two submissions differ: with so few, the counts could pin
down single items' labels (two submissions of one team that differ on one item would reveal it).
"""
from __future__ import annotations

import math

import numpy as np

from leaderboard.core.outcomes import Outcome
from leaderboard.core.rank_intervals import N_RESAMPLES, SEED, joint_draws

MIN_ITEMS = 30
MIN_DIFFERING = 10


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
                     seed: int = SEED) -> dict:
    """The paired comparison of A and B on one slice's items (see the module docstring).

    Returns ``{"n", "differing", "value_a", "value_b", "difference", "ci_low", "ci_high",
    "test", "p_value", "a_only", "b_only"}`` (``a_only``/``b_only``: McNemar's discordant counts,
    accuracy only), or ``{"n", "refused": reason}`` when the slice is too small to show.
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
    point, draws = joint_draws([a, b], n_resamples=n_resamples, seed=seed)
    diffs = draws[:, 0] - draws[:, 1]
    low, high = percentile(diffs)
    out = {"n": n, "differing": differing, "value_a": _num(point[0]), "value_b": _num(point[1]),
           "difference": _num(point[0] - point[1]), "ci_low": low, "ci_high": high}
    if a.model == "mean" and a.binary and b.binary:
        a_only = int(np.count_nonzero((a.x == 1) & (b.x == 0)))
        b_only = int(np.count_nonzero((a.x == 0) & (b.x == 1)))
        out.update(test="McNemar exact", p_value=mcnemar_exact(a_only, b_only),
                   a_only=a_only, b_only=b_only)
    else:
        out.update(test="paired bootstrap", p_value=bootstrap_p(diffs))
    return out


def _num(v) -> float | None:
    v = float(v)
    return None if math.isnan(v) else v
