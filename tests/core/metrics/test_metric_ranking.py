import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from leaderboard.core.metrics import ranking as R

# Scores drawn from a small grid so that ties are common.
rows = st.lists(st.tuples(st.booleans(), st.integers(0, 10).map(lambda k: k / 10)), min_size=2, max_size=80)


def split(pairs):
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


@settings(max_examples=200, deadline=None)
@given(rows)
def test_matches_sklearn(pairs):
    t, s = split(pairs)
    if t.any():
        assert R.average_precision(y_true=t, y_score=s) == pytest.approx(skm.average_precision_score(t, s))
        # SynCred's PR-AUC is average precision (the step sum), not sklearn.metrics.auc's trapezoids
        assert R.pr_auc(y_true=t, y_score=s) == pytest.approx(skm.average_precision_score(t, s))
    if t.any() and not t.all():
        assert R.roc_auc(y_true=t, y_score=s) == pytest.approx(skm.roc_auc_score(t, s))


def test_pinned_values():
    kw = dict(y_true=[False, False, True, True], y_score=[0.1, 0.4, 0.35, 0.8])
    assert R.average_precision(**kw) == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)
    assert R.roc_auc(**kw) == 0.75
    assert R.pr_auc(**kw) == R.average_precision(**kw)


def test_pr_auc_of_a_constant_score_is_the_prevalence():
    # The case: the trapezoid gave (1 + 0.59) / 2 ~ 0.80 to a detector that ranks nothing.
    y = np.r_[np.ones(59, bool), np.zeros(41, bool)]
    assert R.pr_auc(y_true=y, y_score=np.full(100, 0.5)) == pytest.approx(0.59)


def test_ties_fall_together():
    # One fake and one real tied at the top: AP = precision 1/2 at recall 1.
    assert R.average_precision(y_true=[True, False], y_score=[0.7, 0.7]) == 0.5
    assert R.roc_auc(y_true=[True, False], y_score=[0.7, 0.7]) == 0.5


def test_missing_score_or_class_is_nan():
    assert math.isnan(R.average_precision(y_true=[True, False], y_score=[0.2, np.nan]))
    assert math.isnan(R.roc_auc(y_true=[True, True], y_score=[0.2, 0.3]))
    assert math.isnan(R.average_precision(y_true=[False, False], y_score=[0.2, 0.3]))
    assert math.isnan(R.pr_auc(y_true=[], y_score=[]))
    assert R.average_precision(y_true=[True, True], y_score=[0.2, 0.3]) == 1.0


def test_score_validation():
    with pytest.raises(ValueError, match=r"y_score must lie in \[0, 1\].*1.7"):
        R.average_precision(y_true=[True], y_score=[1.7])
    with pytest.raises(ValueError, match="y_score must be numeric"):
        R.roc_auc(y_true=[True], y_score=["high"])


# --- SynCred TPR(lambda) ---------------------------------------------------------------------

def test_paper_fact_labels_only():
    # Llama-3.2-11B-V: TPR 86.3%, FPR 79.6% -> TPR(5) = 0.
    y_true = np.r_[np.ones(1000, bool), np.zeros(1000, bool)]
    y_pred = np.r_[np.arange(1000) < 863, np.arange(1000) < 796]
    assert R.tpr_at_fpr(y_true=y_true, y_pred=y_pred, max_fpr=0.05) == 0.0
    assert R.tpr_at_fpr(y_true=y_true, y_pred=y_pred, max_fpr=0.80) == pytest.approx(0.863)


def test_labels_only_within_budget_keeps_tpr():
    # Hive-like: FPR 0.9% <= 5% keeps the TPR.
    y_true = np.r_[np.ones(600, bool), np.zeros(450, bool)]
    y_pred = np.r_[np.arange(600) < 451, np.arange(450) < 4]
    assert R.tpr_at_fpr(y_true=y_true, y_pred=y_pred, max_fpr=0.05) == pytest.approx(451 / 600)


def test_budget_boundary_is_inclusive_without_rounding_loss():
    # 29/100 = 0.29 exactly at the budget; 0.29 * 100 would round to 28.999999999999996.
    y_true = np.r_[np.ones(10, bool), np.zeros(100, bool)]
    y_pred = np.r_[np.ones(10, bool), np.arange(100) < 29]
    assert R.tpr_at_fpr(y_true=y_true, y_pred=y_pred, max_fpr=0.29) == 1.0


def test_sweep_hand_derived():
    # fakes: 0.9 0.8 0.6 0.3 ; reals: 0.85 0.5 0.2 0.1 0.05 ... (20 reals, others 0.0)
    y_true = np.r_[np.ones(4, bool), np.zeros(20, bool)]
    s = np.r_[[0.9, 0.8, 0.6, 0.3], [0.85, 0.5, 0.2, 0.1], np.zeros(16)]
    everything = np.ones(24, bool)
    # FPR <= 5% allows 1 false positive out of 20: tau = 0.6 gives TP 3, FP 1.
    assert R.tpr_at_fpr(y_true=y_true, y_pred=everything, y_score=s, max_fpr=0.05) == 0.75
    # FPR <= 0% : tau = 0.9 only (TP 1).
    assert R.tpr_at_fpr(y_true=y_true, y_pred=everything, y_score=s, max_fpr=0.0) == 0.25
    # Generous budget: tau = 0.3 gives TP 4 with FP 2 (10%).
    assert R.tpr_at_fpr(y_true=y_true, y_pred=everything, y_score=s, max_fpr=0.10) == 1.0


def test_sweep_ignores_the_submitted_decision():
    # The paper's pure sweep: fakes scored 0.2 and reals 0.1, no label (decision = score >= 0.5,
    # everything real) -> tau = 0.2 flags every fake and no real: TPR(5) = 1.
    y_true = np.r_[np.ones(6, bool), np.zeros(4, bool)]
    s = np.r_[np.full(6, 0.2), np.full(4, 0.1)]
    assert R.tpr_at_fpr(y_true=y_true, y_pred=s >= 0.5, y_score=s, max_fpr=0.05) == 1.0
    # A decision stricter than the sweep's best point does not cap it either.
    s = np.r_[[0.9, 0.8, 0.6, 0.3], [0.85, 0.5, 0.2, 0.1], np.zeros(16)]
    y_true = np.r_[np.ones(4, bool), np.zeros(20, bool)]
    assert R.tpr_at_fpr(y_true=y_true, y_pred=s >= 0.7, y_score=s, max_fpr=0.10) == 1.0
    assert R.tpr_at_fpr(y_true=y_true, y_pred=s >= 0.7, y_score=s, max_fpr=0.0) == 0.25


def test_sweep_ties_fall_together():
    # The top score is shared by a fake and a real: flagging the fake means flagging the real.
    y_true = np.r_[True, False, np.zeros(9, bool)]
    s = np.r_[0.9, 0.9, np.zeros(9)]
    y_pred = np.ones(11, bool)
    assert R.tpr_at_fpr(y_true=y_true, y_pred=y_pred, y_score=s, max_fpr=0.05) == 0.0
    assert R.tpr_at_fpr(y_true=y_true, y_pred=y_pred, y_score=s, max_fpr=0.10) == 1.0


@settings(max_examples=150, deadline=None)
@given(rows, st.lists(st.booleans(), min_size=80, max_size=80), st.sampled_from([0.0, 0.05, 0.1, 0.3]))
def test_sweep_matches_brute_force_and_sklearn_roc_curve(pairs, pred_bits, lam):
    t, s = split(pairs)
    p = np.array(pred_bits[: len(t)])
    got = R.tpr_at_fpr(y_true=t, y_pred=p, y_score=s, max_fpr=lam)
    if t.all() or not t.any():
        assert math.isnan(got)
        return
    best = 0.0
    for tau in np.unique(s):
        flag = s >= tau
        if (flag & ~t).sum() / (~t).sum() <= lam:
            best = max(best, (flag & t).sum() / t.sum())
    assert got == best
    fpr, tpr, _ = skm.roc_curve(t, s, drop_intermediate=False)
    assert got == tpr[fpr <= lam].max()


def test_missing_score_falls_back_to_labels_only():
    y_true = [True, True, False]
    got = R.tpr_at_fpr(y_true=y_true, y_pred=[True, False, False], y_score=[0.9, np.nan, 0.1], max_fpr=0.05)
    assert got == 0.5


def test_max_fpr_validation():
    with pytest.raises(ValueError, match="max_fpr must be a number in \\[0, 1\\], got 5"):
        R.tpr_at_fpr(y_true=[True], y_pred=[True], max_fpr=5)


def test_curve_points_downsampled_and_anchored():
    rng = np.random.default_rng(0)
    t = rng.random(5000) < 0.5
    s = rng.random(5000)
    roc = R.roc_points(y_true=t, y_score=s)
    assert len(roc.x) <= 200 and (roc.x[0], roc.y[0]) == (0.0, 0.0) and (roc.x[-1], roc.y[-1]) == (1.0, 1.0)
    assert np.all(np.diff(roc.x) >= 0) and np.all(np.diff(roc.y) >= 0)
    pr = R.pr_points(y_true=t, y_score=s, max_points=50)
    assert len(pr.x) <= 50 and (pr.x[0], pr.y[0]) == (0.0, 1.0) and pr.x[-1] == 1.0
    small = R.roc_points(y_true=[True, False], y_score=[0.8, 0.2])
    assert small.x.tolist() == [0.0, 0.0, 1.0] and small.y.tolist() == [0.0, 1.0, 1.0]
    assert R.roc_points(y_true=[True, True], y_score=[0.8, 0.2]) is None
