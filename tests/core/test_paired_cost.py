"""The bounded paired comparison (issue 24): grouped draws and the capped per-item bootstrap give
the intervals the full per-item bootstrap gives, at a cost that does not grow with the items."""
from __future__ import annotations

import time

import numpy as np
import pytest

from leaderboard.core.outcomes import Outcome
from leaderboard.core.paired import compare_outcomes, grouped_draws, groupable
from leaderboard.core.rank_intervals import joint_draws


def _outcome(x, strata, model="mean", params=None, metric="accuracy"):
    return Outcome("t", metric, model, np.asarray(x, dtype=np.float32), strata,
                   np.zeros(len(x), dtype=np.uint8), ("image",), params or {})


def _spread(a, b, **kw):
    got = compare_outcomes(a, b, n_resamples=2000, seed=3, **kw)
    return got["ci_high"] - got["ci_low"], got


@pytest.mark.parametrize("model", ["mean", "cells"])
def test_grouped_draws_match_the_per_item_bootstrap(model):
    rng = np.random.default_rng(0)
    n = 4000
    strata = rng.integers(0, 8, n).astype(np.int16) if model == "cells" else \
        rng.integers(0, 2, n).astype(np.int16)
    params = {"n_gen": 3} if model == "cells" else {}
    a = _outcome(rng.random(n) < 0.7, strata, model, params)
    b = _outcome(rng.random(n) < 0.65, strata, model, params)
    assert groupable(a, b)
    point, draws = grouped_draws(a, b, 3000, np.random.default_rng(1))
    ref_point, ref = joint_draws([a, b], n_resamples=3000, seed=1)
    np.testing.assert_allclose(point, ref_point)  # point values exact
    d, r = draws[:, 0] - draws[:, 1], ref[:, 0] - ref[:, 1]
    assert abs(d.std() / r.std() - 1) < 0.08 and abs(d.mean() - r.mean()) < 0.1 * r.std()


def test_ranking_metric_over_the_item_cap_keeps_its_interval_width():
    rng = np.random.default_rng(5)
    n = 6000
    y = (rng.random(n) < 0.5).astype(np.int16)
    params = {"max_fpr": 0.05, "scored": True}
    a = _outcome(rng.random(n) * 0.6 + y * 0.4, y, "tpr_at_fpr", params, "tpr_at_fpr_5")
    b = _outcome(rng.random(n) * 0.6 + y * 0.35, y, "tpr_at_fpr", params, "tpr_at_fpr_5")
    assert not groupable(a, b)
    full_width, full = _spread(a, b)
    capped_width, capped = _spread(a, b, max_items=1500)
    assert capped["bootstrap_items"] <= 1510 and full["bootstrap_items"] == n
    assert capped["difference"] == full["difference"]  # the point uses every item
    assert 0.75 < capped_width / full_width < 1.3


def test_a_vct2_sized_slice_costs_well_under_a_second():
    rng = np.random.default_rng(2)
    n = 166_000
    strata = rng.integers(0, 14, n).astype(np.int16)
    a = _outcome(rng.random(n) < 0.7, strata, "cells", {"n_gen": 6})
    b = _outcome(rng.random(n) < 0.72, strata, "cells", {"n_gen": 6})
    started = time.process_time()
    got = compare_outcomes(a, b)
    assert time.process_time() - started < 0.5
    assert got["resamples"] == 1000 and got["ci_low"] < got["difference"] < got["ci_high"]
