"""Expected calibration error and confusion matrices against hand computations (issue 38)."""
import numpy as np
import pytest

from leaderboard.core.metrics.calibration import (
    ece_with_ci,
    expected_calibration_error,
    reliability_bins,
)
from leaderboard.core.metrics.confusion import confusion_matrix


def test_ece_equals_a_hand_computation():
    # ten items, five equal-width bins of width 0.2
    y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    s = [0.05, 0.15, 0.10, 0.30, 0.50, 0.55, 0.70, 0.90, 0.95, 1.00]
    # bin [0, .2): scores .05 .15 .10 -> mean .10, fakes 1/3; |1/3 - .10| = .233333
    # bin [.2, .4): .30 -> .30, fakes 0; |0 - .30| = .30
    # bin [.4, .6): .50 .55 -> .525, fakes 2/2; |1 - .525| = .475
    # bin [.6, .8): .70 -> .70, fakes 0; .70
    # bin [.8, 1]: .90 .95 1.00 -> .95, fakes 1; .05
    # ECE = (3 * .233333 + 1 * .30 + 2 * .475 + 1 * .70 + 3 * .05) / 10
    #     = (.70 + .30 + .95 + .70 + .15) / 10 = 2.80 / 10 = 0.28
    assert expected_calibration_error(y, s, n_bins=5) == pytest.approx(0.28)
    bins = reliability_bins(y, s, n_bins=5)
    assert [b.n for b in bins] == [3, 1, 2, 1, 3]
    assert bins[2].confidence == pytest.approx(0.525) and bins[2].observed == 1.0
    assert bins[4].lo == pytest.approx(0.8) and bins[4].hi == pytest.approx(1.0)


def test_ece_of_a_calibrated_and_of_the_worst_detector():
    y = np.array([True] * 8 + [False] * 2)
    assert expected_calibration_error(y, np.full(10, 0.8)) == pytest.approx(0.0)
    assert expected_calibration_error([1, 0], [0.0, 1.0]) == pytest.approx(1.0)


def test_empty_bins_count_nothing():
    bins = reliability_bins([1, 0], [0.95, 0.05], n_bins=10)
    assert [b.n for b in bins] == [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert bins[1].confidence is None and bins[1].observed is None


def test_ece_ci_brackets_the_value_and_is_repeatable():
    rng = np.random.default_rng(3)
    s = rng.random(400)
    y = rng.random(400) < s ** 2
    value, lo, hi, reps = ece_with_ci(y, s, n_bins=10, n_resamples=300)
    assert lo <= value <= hi and 0.0 <= lo < hi <= 1.0 and reps == 300
    assert ece_with_ci(y, s, n_bins=10, n_resamples=300) == (value, lo, hi, reps)


@pytest.mark.parametrize("kwargs,message", [
    ({"y_true": [1, 0], "y_score": [0.2, 1.5]}, "y_score must lie in [0, 1]"),
    ({"y_true": [1, 0], "y_score": [0.2, float("nan")]}, "a score for every item"),
    ({"y_true": [1, 0, 1], "y_score": [0.2, 0.3]}, "same number of items"),
    ({"y_true": [], "y_score": []}, "at least one scored item"),
    ({"y_true": [1], "y_score": [0.5], "n_bins": 0}, "n_bins must be a positive integer"),
])
def test_bad_input_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        expected_calibration_error(**kwargs)


def test_confusion_matrix_on_a_constructed_case():
    truth = ["A", "A", "A", "B", "B", "C", "C", "C", "C"]
    said = ["A", "B", "", "B", "B", "A", "C", "C", "#"]
    c = confusion_matrix(truth, said, labels=["A", "B", "C"])
    # rows truth A, B, C; columns decision A, B, C; "" and "#" are none of the labels
    assert c.matrix.tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 2]]
    assert c.unanswered.tolist() == [1, 0, 1]
    assert c.n == 9 and c.other_truth == 0
    assert c.as_dict()["labels"] == ["A", "B", "C"]


def test_confusion_matrix_rejects_repeated_labels():
    with pytest.raises(ValueError, match="distinct"):
        confusion_matrix(["a"], ["a"], labels=["a", "a"])
