import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from leaderboard.core.metrics import classification as C

bools = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60)


def split(pairs):
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def test_counts_pinned():
    # fake fake fake real real : predicted fake real fake fake real
    c = C.binary_counts(y_true=[1, 1, 1, 0, 0], y_pred=[1, 0, 1, 1, 0])
    assert c == C.BinaryCounts(tp=2, fp=1, tn=1, fn=1)


def test_pinned_values():
    kw = dict(y_true=[1, 1, 1, 0, 0], y_pred=[1, 0, 1, 1, 0])
    assert C.accuracy(**kw) == pytest.approx(3 / 5)
    assert C.precision(**kw) == pytest.approx(2 / 3)
    assert C.recall(**kw) == pytest.approx(2 / 3)
    assert C.real_accuracy(**kw) == pytest.approx(1 / 2)
    assert C.false_positive_rate(**kw) == pytest.approx(1 / 2)
    assert C.balanced_accuracy(**kw) == pytest.approx((2 / 3 + 1 / 2) / 2)
    # NBI = (R_real - R_fake) / (R_real + R_fake) = (1/2 - 2/3) / (7/6) = -1/7
    assert C.normalized_bias_index(**kw) == pytest.approx(-1 / 7)


def test_nbi_sign_positive_means_biased_toward_real():
    # A model that answers "real" almost always: recall on reals 1.0, on fakes 0.2.
    y_true = [True] * 10 + [False] * 10
    y_pred = [True] * 2 + [False] * 8 + [False] * 10
    assert C.normalized_bias_index(y_true=y_true, y_pred=y_pred) == pytest.approx((1 - 0.2) / 1.2)
    assert C.normalized_bias_index(y_true=y_true, y_pred=[True] * 20) == -1.0


def test_nbi_zero_when_both_recalls_zero_and_nan_without_a_class():
    assert C.normalized_bias_index(y_true=[1, 0], y_pred=[0, 1]) == 0.0
    assert math.isnan(C.normalized_bias_index(y_true=[1, 1], y_pred=[1, 0]))


@pytest.mark.parametrize("fn, kw", [
    (C.precision, dict(y_true=[1, 0], y_pred=[0, 0])),           # nothing predicted fake
    (C.recall, dict(y_true=[0, 0], y_pred=[1, 0])),              # no fake items
    (C.real_accuracy, dict(y_true=[1, 1], y_pred=[1, 0])),       # no real items
    (C.false_positive_rate, dict(y_true=[1], y_pred=[1])),
    (C.balanced_accuracy, dict(y_true=[1, 1], y_pred=[1, 1])),
    (C.accuracy, dict(y_true=[], y_pred=[])),
])
def test_ill_defined_is_nan_not_zero(fn, kw):
    assert math.isnan(fn(**kw))


def test_validation_messages_name_the_argument():
    with pytest.raises(ValueError, match="y_pred"):
        C.accuracy(y_true=[True], y_pred=["fake"])
    with pytest.raises(ValueError, match="y_true has 2, y_pred has 1"):
        C.accuracy(y_true=[True, False], y_pred=[True])
    with pytest.raises(ValueError, match="y_true must be 1-D"):
        C.accuracy(y_true=[[True]], y_pred=[True])
    with pytest.raises(TypeError):
        C.accuracy([True], [True])  # keyword-only


@settings(max_examples=150, deadline=None)
@given(bools)
def test_matches_sklearn(pairs):
    t, p = split(pairs)
    nan = np.nan
    assert C.accuracy(y_true=t, y_pred=p) == pytest.approx(skm.accuracy_score(t, p))
    for ours, ref in [
        (C.precision(y_true=t, y_pred=p), skm.precision_score(t, p, zero_division=nan)),
        (C.recall(y_true=t, y_pred=p), skm.recall_score(t, p, zero_division=nan)),
        (C.real_accuracy(y_true=t, y_pred=p), skm.recall_score(t, p, pos_label=0, zero_division=nan)),
    ]:
        assert ours == pytest.approx(ref, nan_ok=True)
    if t.any() and not t.all():
        assert C.balanced_accuracy(y_true=t, y_pred=p) == pytest.approx(skm.balanced_accuracy_score(t, p))


def test_count_formulas_vectorize():
    tp, fp, tn, fn = np.array([1, 0]), np.array([1, 0]), np.array([2, 3]), np.array([0, 0])
    np.testing.assert_allclose(C.FROM_COUNTS["precision"](tp, fp, tn, fn), [0.5, np.nan])
    np.testing.assert_allclose(C.FROM_COUNTS["normalized_bias_index"](tp, fp, tn, fn), [(2 / 3 - 1) / (5 / 3), np.nan])
