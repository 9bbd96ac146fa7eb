"""Rank intervals and paired tests on simulated submissions with known true values (issue 14)."""
from __future__ import annotations

import numpy as np
import pytest

from leaderboard.core.outcomes import Outcome, evaluate, point_value
from leaderboard.core.paired import compare_outcomes, mcnemar_exact
from leaderboard.core.rank_intervals import (
    RankInterval,
    joint_draws,
    rank_intervals,
    stratified_weights,
    stratum_sums,
)


def outcome(x, strata=None, model="mean", params=None) -> Outcome:
    x = np.asarray(x, dtype=np.float32)
    strata = np.zeros(len(x), dtype=np.int16) if strata is None else strata
    return Outcome("t", "accuracy", model, x, strata, np.zeros(len(x), dtype=np.uint8),
                   ("image",), params or {})


def simulate(rng, accuracies, n):
    return [outcome(rng.random(n) < p) for p in accuracies]


def intervals_of(outcomes, *, n_resamples=300, seed=0, higher_is_better=True):
    point, draws = joint_draws(outcomes, n_resamples=n_resamples, seed=seed)
    order = np.argsort(-point if higher_is_better else point, kind="stable")
    ranks = [0] * len(outcomes)
    for pos, j in enumerate(order):
        ranks[j] = pos + 1
    got = rank_intervals(draws[:, order], [ranks[j] for j in order],
                         higher_is_better=higher_is_better)
    out = [None] * len(outcomes)
    for pos, j in enumerate(order):
        out[j] = got[pos]
    return out


def true_rank(acc, j):
    return 1 + sum(a > acc[j] for a in acc)


def test_weights_keep_each_stratum_size():
    strata = np.array([0] * 7 + [1] * 3 + [2] * 5, dtype=np.int16)
    w = stratified_weights(strata, 40, np.random.default_rng(1))
    assert w.shape == (40, 15)
    for c, size in ((0, 7), (1, 3), (2, 5)):
        assert (w[:, strata == c].sum(axis=1) == size).all()


def test_stratum_sums_have_the_bootstrap_moments():
    """Agreeing items take the shortcut; the sums keep the mean, variance and covariance of
    the item bootstrap (per-row variance m p (1 - p) relative to the size, covariance likewise)."""
    rng = np.random.default_rng(2)
    m = 400
    a = rng.random(m) < 0.6
    b = a.copy()
    b[:60] = ~b[:60]                                 # 60 informative items, 340 agreeing
    X = np.stack([a, b], axis=1).astype(np.float32)
    sums, sizes = stratum_sums(X, 4000, np.random.default_rng(3))
    means = sums / sizes
    p = X.mean(axis=0)
    assert np.allclose(means.mean(axis=0), p, atol=0.005)
    assert np.allclose(means.var(axis=0), p * (1 - p) / m, rtol=0.12)
    d = means[:, 0] - means[:, 1]
    dx = X[:, 0] - X[:, 1]
    assert d.var() == pytest.approx(dx.var() / m, rel=0.12)
    ident, _ = stratum_sums(np.stack([a, a], axis=1).astype(np.float32), 50,
                            np.random.default_rng(4))
    assert (ident[:, 0] == ident[:, 1]).all()


def test_far_apart_get_their_exact_ranks():
    rng = np.random.default_rng(0)
    acc = [0.9, 0.5, 0.7, 0.3]
    got = intervals_of(simulate(rng, acc, 2000))
    for j, iv in enumerate(got):
        assert (iv.lo, iv.hi) == (true_rank(acc, j), true_rank(acc, j))
    assert not any(iv.tied_first for iv in got)  # a clear first is not a tie


def test_identical_submissions_are_always_tied():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        x = rng.random(300) < 0.6
        subs = [outcome(x), outcome(x), outcome(x), outcome(rng.random(300) < 0.2)]
        got = intervals_of(subs, seed=seed)
        assert got[0].tied_first and got[1].tied_first and got[2].tied_first
        assert {(g.lo, g.hi) for g in got[:3]} == {(1, 3)}
        assert not got[3].tied_first


@pytest.mark.parametrize("acc", [[0.70, 0.70, 0.70], [0.72, 0.70, 0.68, 0.66],
                                 [0.80, 0.60, 0.60, 0.59]])
def test_intervals_cover_true_ranks_at_nominal_rate(acc):
    hits = total = 0
    for seed in range(60):
        got = intervals_of(simulate(np.random.default_rng(100 + seed), acc, 400), n_resamples=200,
                           seed=seed)
        for j, iv in enumerate(got):
            hits += iv.lo <= true_rank(acc, j) <= iv.hi
            total += 1
    assert hits / total >= 0.93


def test_lower_is_better_reverses_the_order():
    rng = np.random.default_rng(3)
    got = intervals_of(simulate(rng, [0.1, 0.5], 1000), higher_is_better=False)
    assert (got[0].lo, got[0].hi, got[1].lo) == (1, 1, 2)


def test_open_end_beyond_the_window():
    draws = np.tile(np.array([[3.0, 2.0, 2.0]]), (50, 1))
    got = rank_intervals(draws, [1, 2, 3], total=10)
    assert got[0] == RankInterval(1, 1, 1, False)
    assert got[1].open_end and got[2].open_end and got[1].label() == "2 (2\u20133+)"


def test_cells_model_matches_hand_value():
    # COCO: gen0 fakes [1,0], gen1 fakes [1,1], reals [1,0] -> cells (1+1)/4, (2+1)/4
    n_gen = 6
    strata = np.array([0, 0, 1, 1, n_gen, n_gen], dtype=np.int16)
    o = outcome([1, 0, 1, 1, 1, 0], strata, model="cells", params={"n_gen": n_gen})
    assert point_value(o) == pytest.approx((0.5 + 0.75) / 2)


def test_tpr_at_fpr_model_matches_the_metric():
    from leaderboard.core.metrics.ranking import tpr_at_fpr

    rng = np.random.default_rng(5)
    y = rng.random(300) < 0.5
    score = np.where(y, rng.random(300) * 0.7 + 0.3, rng.random(300) * 0.8).astype(np.float32)
    o = outcome(score, y.astype(np.int16), "tpr_at_fpr", {"max_fpr": 0.05, "scored": True})
    assert point_value(o) == pytest.approx(tpr_at_fpr(y_true=y, y_pred=y, y_score=score,
                                                      max_fpr=0.05))
    w = stratified_weights(o.strata, 3, rng)
    rows = np.repeat(np.arange(300), w[0].astype(int))
    assert evaluate([o], w)[0, 0] == pytest.approx(
        tpr_at_fpr(y_true=y[rows], y_pred=y[rows], y_score=score[rows], max_fpr=0.05))


def test_mcnemar_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    for b, c in ((3, 12), (40, 61), (0, 7), (500, 430)):
        assert mcnemar_exact(b, c) == pytest.approx(stats.binomtest(min(b, c), b + c, 0.5).pvalue,
                                                   rel=1e-9)


@pytest.mark.parametrize("binary", [True, False])
def test_paired_test_false_positive_rate_is_nominal(binary):
    rejected = runs = 0
    for seed in range(300):
        rng = np.random.default_rng(seed)
        if binary:
            a, b = rng.random(400) < 0.7, rng.random(400) < 0.7
        else:  # partial credit in [-1, 1], as TriDF's MCQ score
            a, b = rng.uniform(-1, 1, 400).round(1), rng.uniform(-1, 1, 400).round(1)
        got = compare_outcomes(outcome(a), outcome(b), n_resamples=200, seed=seed)
        rejected += got["p_value"] < 0.05
        runs += 1
        assert got["test"] == ("McNemar exact" if binary else "paired bootstrap")
    assert 0.01 <= rejected / runs <= 0.08


def test_compare_refuses_slices_that_could_pin_down_items():
    rng = np.random.default_rng(1)
    a = rng.random(200) < 0.5
    b = a.copy()
    b[:3] = ~b[:3]
    assert "refused" in compare_outcomes(outcome(a), outcome(b))
    assert "refused" in compare_outcomes(outcome(a[:20]), outcome(~a[:20]))
    got = compare_outcomes(outcome(a), outcome(~a))
    assert got["a_only"] + got["b_only"] == 200 and got["ci_low"] < got["difference"]


def test_outcomes_of_different_items_do_not_compare():
    with pytest.raises(ValueError, match="same items"):
        joint_draws([outcome([1, 0, 1]), outcome([1, 0, 1], np.array([0, 1, 1]))])


def test_arrays_round_trip_exactly():
    for x in ([1, 0, 1, 1, 0], [0.25, -1, 0.5, 1, 0]):
        o = outcome(x, np.array([0, 1, 0, 1, 1], dtype=np.int16))
        back = Outcome.from_arrays(o.to_arrays("p/"), "p/")
        assert back.fingerprint() == o.fingerprint()
        assert np.array_equal(back.x, o.x) and back.x.dtype == np.float32
