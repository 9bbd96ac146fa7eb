"""Record builders shared by the benchmark modules."""
from __future__ import annotations

import numpy as np

from leaderboard.core.benchmarks.base import ScoringContext
from leaderboard.core.metrics import bootstrap
from leaderboard.core.records import MetricRecord


def proportion(task: str, metric: str, slc: dict, ok: np.ndarray, ctx: ScoringContext,
               judge: str | None = None) -> MetricRecord:
    """A proportion (e.g. accuracy) with its exact bootstrap CI: resampling n items with k
    successes is drawing Binomial(n, k/n), so no row is resampled. n/a when there are no items.

    ``ok`` may hold expected correctness in [0, 1] (LOKI's random fallback counts 1/#options):
    the value is then the mean and the CI draws the multinomial counts of each distinct value.
    """
    n = int(ok.size)
    low = high = None
    if ok.dtype != bool and not np.isin(ok, (0, 1)).all():
        if n >= bootstrap.MIN_N:
            low, high = bootstrap.bootstrap_mean_ci(ok, n_resamples=ctx.n_resamples, seed=ctx.seed)
        return MetricRecord(task, metric, slc, float(ok.mean()) if n else None, low, high, n, judge)
    k = int(ok.sum())
    if n >= bootstrap.MIN_N:
        draws = bootstrap.binomial_draws(n=[n], k=[k], n_resamples=ctx.n_resamples,
                                         seed=ctx.seed)[:, 0]
        low, high = bootstrap.percentile_ci(draws / n)
    return MetricRecord(task, metric, slc, k / n if n else None, low, high, n, judge)


def mean(task: str, metric: str, slc: dict, values: np.ndarray, ctx: ScoringContext,
         judge: str | None = None) -> MetricRecord | None:
    """The mean of the non-NaN ``values`` with its bootstrap CI; None when there are none."""
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    low, high = bootstrap.bootstrap_mean_ci(values, n_resamples=ctx.n_resamples, seed=ctx.seed)
    return MetricRecord(task, metric, slc, float(values.mean()), low, high, int(values.size),
                        judge)
