"""Cohen's kappa between judges, hand-derived values, and the per-artifact comparison."""
from __future__ import annotations

import pytest

from leaderboard.judges.agreement import cohen_kappa, compare


def test_kappa_pinned():
    # 2x2 table: both yes 20, ref yes/other no 5, ref no/other yes 10, both no 15 (n=50)
    ref = [True] * 25 + [False] * 25
    oth = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    # p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.2/0.5 = 0.4
    assert cohen_kappa(ref, oth) == pytest.approx(0.4)
    assert cohen_kappa(ref, ref) == 1.0
    assert cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)


def test_kappa_undefined_cases():
    assert cohen_kappa([], []) is None
    assert cohen_kappa([False, False], [False, False]) is None  # nothing to agree on but chance
    with pytest.raises(ValueError, match="same items, got 2 and 1"):
        cohen_kappa([True, False], [True])


def test_compare_counts_only_candidate_artifacts():
    cands = [("hiss", "buzz"), ("hiss", "buzz"), ("blurriness",)]
    ref = [frozenset({"hiss"}), frozenset(), frozenset({"blurriness"})]
    oth = [frozenset({"hiss", "buzz"}), frozenset(), frozenset({"blurriness", "hiss"})]
    rep = compare(cands, ref, oth)
    assert rep["responses"] == 3 and rep["overall"]["n"] == 5  # hiss is no candidate of row 3
    assert rep["per_artifact"]["hiss"] == {"n": 2, "kappa": 1.0, "agreement": 1.0,
                                           "reference_rate": 0.5, "other_rate": 0.5,
                                           "precision": 1.0, "recall": 1.0}
    buzz = rep["per_artifact"]["buzz"]
    assert buzz["kappa"] == 0.0 and buzz["precision"] == 0.0 and buzz["recall"] is None
    assert rep["per_artifact"]["blurriness"]["kappa"] is None  # both always map it
    with pytest.raises(ValueError, match="one entry per response"):
        compare(cands, ref, oth[:2])
