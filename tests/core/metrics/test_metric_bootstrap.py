import numpy as np
import pytest

from leaderboard.core.metrics import bootstrap as B
from leaderboard.core.metrics import classification as C
from leaderboard.core.metrics import ranking as R


def loop_reference(metric, t, *arrays, n=400, seed=11):
    """Plain class-stratified item resampling, one resample at a time."""
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(t), np.flatnonzero(~t)
    vals = []
    for _ in range(n):
        idx = np.concatenate([rng.choice(pos, pos.size), rng.choice(neg, neg.size)])
        vals.append(metric(t[idx], *(a[idx] for a in arrays)))
    return np.percentile(vals, [2.5, 97.5])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    t = rng.random(600) < 0.4
    s = np.clip(rng.normal(0.35 + 0.3 * t, 0.2), 0, 1)
    return t, s, s >= 0.5


def test_count_cis_match_item_resampling(data):
    t, _, p = data
    cis = B.binary_metric_cis(y_true=t, y_pred=p)
    for name in ("accuracy", "precision", "recall", "real_accuracy", "normalized_bias_index"):
        fn = getattr(C, name)
        ref = loop_reference(lambda a, b: fn(y_true=a, y_pred=b), t, p)
        assert cis[name][0] == pytest.approx(ref[0], abs=0.015)
        assert cis[name][1] == pytest.approx(ref[1], abs=0.015)
        point = fn(y_true=t, y_pred=p)
        assert cis[name][0] <= point <= cis[name][1]


@pytest.mark.parametrize("metric", ["average_precision", "roc_auc", "pr_auc", "tpr_at_fpr"])
def test_ranking_cis_match_item_resampling(data, metric):
    t, s, p = data
    if metric == "tpr_at_fpr":
        ci = B.bootstrap_ranking_ci(metric=metric, y_true=t, y_score=s, y_pred=p, max_fpr=0.1)
        ref = loop_reference(lambda a, b, c: R.tpr_at_fpr(y_true=a, y_score=b, y_pred=c, max_fpr=0.1), t, s, p)
    else:
        ci = B.bootstrap_ranking_ci(metric=metric, y_true=t, y_score=s)
        fn = getattr(R, metric)
        ref = loop_reference(lambda a, b: fn(y_true=a, y_score=b), t, s)
    assert ci[0] == pytest.approx(ref[0], abs=0.02)
    assert ci[1] == pytest.approx(ref[1], abs=0.02)


def test_weighted_curve_equals_duplicated_items():
    # One resample as multiplicities must give the metric of the duplicated data set exactly.
    rng = np.random.default_rng(5)
    t = rng.random(40) < 0.5
    s = rng.integers(0, 6, 40) / 5
    w = rng.integers(0, 3, 40)
    w[np.flatnonzero(t)[0]] = 1
    order, last = R.sort_order(s)
    tps = np.cumsum((w * t)[order])[last]
    fps = np.cumsum((w * ~t)[order])[last]
    dup_t, dup_s = np.repeat(t, w), np.repeat(s, w)
    assert R.average_precision_from_curve(tps, fps) == pytest.approx(R.average_precision(y_true=dup_t, y_score=dup_s))
    assert R.roc_auc_from_curve(tps, fps) == pytest.approx(R.roc_auc(y_true=dup_t, y_score=dup_s))


def test_labels_only_tpr_ci(data):
    t, _, p = data
    ci = B.bootstrap_ranking_ci(metric="tpr_at_fpr", y_true=t, y_score=None, y_pred=p, max_fpr=0.5)
    assert ci[0] <= R.tpr_at_fpr(y_true=t, y_pred=p, max_fpr=0.5) <= ci[1]


def test_mean_ci_paths_agree():
    rng = np.random.default_rng(1)
    few = rng.integers(0, 3, 500) / 2          # 3 distinct values: multinomial path
    many = few + rng.normal(0, 1e-9, 500)      # 500 distinct values: index path
    a = B.bootstrap_mean_ci(few, n_resamples=4000)
    b = B.bootstrap_mean_ci(many, n_resamples=4000)
    assert a == pytest.approx(b, abs=0.01)
    se = few.std() / np.sqrt(few.size)
    assert a[1] - a[0] == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_stratified_mean_ci_fixes_stratum_sizes():
    values = np.r_[np.zeros(50), np.ones(50)]
    # Strata that separate the values exactly leave nothing to resample.
    assert B.bootstrap_mean_ci(values, strata=values) == (0.5, 0.5)
    low, high = B.bootstrap_mean_ci(values)
    assert low < 0.5 < high


def test_shared_negatives_mean_ci():
    tp, fn = np.array([80, 60, 90]), np.array([20, 40, 10])
    tn, fp = 150, 50
    low, high = B.shared_negatives_mean_ci(tp=tp, fn=fn, tn=tn, fp=fp)
    point = np.mean((tp + tn) / (tp + fn + tn + fp))
    assert low < point < high and high - low < 0.1
    # Sharing the reals widens the interval of the mean compared with independent reals.
    rng = np.random.default_rng(0)
    draws_pos = rng.binomial(tp + fn, tp / (tp + fn), size=(20000, 3))
    draws_neg = rng.binomial(tn + fp, tn / (tn + fp), size=(20000, 3))
    independent = np.percentile(((draws_pos + draws_neg) / (tp + fn + tn + fp)).mean(1), [2.5, 97.5])
    assert high - low > independent[1] - independent[0]


def test_determinism_and_degenerate_inputs():
    t = np.array([True, False] * 20)
    p = np.array([True, True, False, False] * 10)
    assert B.binary_metric_cis(y_true=t, y_pred=p) == B.binary_metric_cis(y_true=t, y_pred=p)
    assert B.binary_metric_cis(y_true=[True], y_pred=[True])["accuracy"] == (None, None)
    assert B.binary_metric_cis(y_true=[True, True], y_pred=[True, False])["real_accuracy"] == (None, None)
    assert B.bootstrap_mean_ci([0.5]) == (None, None)
    assert B.bootstrap_ranking_ci(metric="roc_auc", y_true=[True, True, True], y_score=[0.1, 0.2, 0.3]) == (None, None)
    assert B.bootstrap_ranking_ci(metric="average_precision", y_true=[True, False], y_score=[0.1, np.nan]) == (None, None)
    # Precision undefined in some resamples (TP = 0 and FP = 0): those resamples are dropped.
    t = np.r_[np.ones(10, bool), np.zeros(990, bool)]
    p = np.r_[True, np.zeros(999, bool)]
    assert B.binary_metric_cis(y_true=t, y_pred=p, metrics=["precision"])["precision"] == (1.0, 1.0)
    # More than half undefined: no interval.
    assert B.percentile_ci([np.nan] * 6 + [1.0] * 4) == (None, None)
    assert B.percentile_ci([np.nan] * 4 + [1.0] * 6) == (1.0, 1.0)


def test_validation():
    with pytest.raises(ValueError, match="n_resamples"):
        B.bootstrap_mean_ci([1.0, 2.0], n_resamples=0)
    with pytest.raises(ValueError, match="finite"):
        B.bootstrap_mean_ci([1.0, np.nan])
    with pytest.raises(ValueError, match="unknown count metric"):
        B.count_metric_cis(tp=1, fp=1, tn=1, fn=1, metrics=["f1"])
    with pytest.raises(ValueError, match="unknown ranking metric"):
        B.bootstrap_ranking_ci(metric="f1", y_true=[True], y_score=[0.1])
