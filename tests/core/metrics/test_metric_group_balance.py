"""LOKI's released aggregate (`group_balance`), pinned to what the authors' code returns.

Expected values were derived by running ``Loki.aggregate_results`` from opendatalab/LOKI
``lm_evaluate/tasks/loki.py`` (commit 251b4f6) on the same rows (outside this repository), with
each row's ``question_type`` spelling out the type and class given here.
"""
import math

import numpy as np
import pytest

from leaderboard.core.metrics import classification as C
from leaderboard.core.metrics import group_balance as G

# (correct, is_fake, type) -> (authors' total_accuracy, per_metric_accuracy)
PINNED = [
    # several real types (image): doc (1 + 0)/2 fake, 1 real -> 0.75; person 1, 1 -> 1.0
    (([1, 0, 1, 1, 1], [1, 1, 0, 1, 0], ["doc", "doc", "doc", "person", "person"]),
     (0.8333333333333334, {"doc": 0.75, "person": 1.0})),
    # one real type (3D: every real is "..._real"): its accuracy is shared by every generator
    (([1, 0, 1, 0], [1, 1, 0, 0], ["CLAY", "magic3d", "real", "real"]),
     (0.5, {"CLAY": 0.75, "magic3d": 0.25})),
    # one real type "a": the fake-only type "f" borrows a's real accuracy (not its fakes alone)
    (([1, 1, 1, 0], [1, 0, 1, 1], ["a", "a", "f", "f"]), (0.8333333333333334, {"a": 1.0, "f": 0.75})),
    # several real types: a type with reals and no fakes does not count
    (([1, 1, 0, 0], [1, 0, 0, 0], ["a", "a", "r", "r"]), (1.0, {"a": 1.0})),
    # LOKI's point-cloud file: reals split into types "real" and "fake" (their question_type's
    # last word), none matches a generator, so only fake accuracies count
    (([1, 0, 0, 0], [1, 1, 0, 0], ["CLAY", "CLAY", "real", "fake"]), (0.5, {"CLAY": 0.5})),
    # expected correctness (the random fallback's 1/#options) is averaged like any value
    (([0.5, 1, 1 / 3, 0.5], [1, 0, 1, 0], ["doc", "doc", "sky", "sky"]),
     (0.5833333333333333, {"doc": 0.75, "sky": 0.41666666666666663})),
]


@pytest.mark.parametrize("rows, expected", PINNED)
def test_matches_the_authors_aggregate(rows, expected):
    correct, fake, group = rows
    total, per_type = expected
    assert G.group_balanced_accuracy(correct=correct, is_fake=fake, group=group) == \
        pytest.approx(total, abs=1e-12)
    got = G.group_balanced_per_group(correct=correct, is_fake=fake, group=group)
    assert {k[1]: v for k, v in got.items()} == pytest.approx(per_type, abs=1e-12)


def test_scopes_keep_their_own_rule():
    # each scope has one real type, whose accuracy its types share; weights are the fake counts
    got = G.group_balanced_accuracy(correct=[1, 0, 1, 0, 1, 1, 0],
                                    is_fake=[1, 1, 0, 0, 1, 0, 1],
                                    group=["CLAY", "magic", "real", "real", "doc", "doc", "sky"],
                                    scope=["3d"] * 4 + ["image"] * 3)
    # 3d: CLAY (1+.5)/2, magic (0+.5)/2; image: doc (1+1)/2, sky (0+1)/2
    assert got == pytest.approx((0.75 + 0.25 + 1.0 + 0.5) / 4)
    # one scope: two real types, so the fake-only types count their fakes alone
    merged = G.group_balanced_accuracy(correct=[1, 0, 1, 0, 1, 1, 0], is_fake=[1, 1, 0, 0, 1, 0, 1],
                                       group=["CLAY", "magic", "real", "real", "doc", "doc", "sky"])
    assert merged == pytest.approx((1.0 + 0.0 + 1.0 + 0.0) / 4)


def test_edge_cases():
    assert math.isnan(G.group_balanced_accuracy(correct=[1], is_fake=[0], group=["x"]))
    assert math.isnan(G.group_balanced_accuracy(correct=[], is_fake=[], group=[]))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        G.group_balanced_accuracy(correct=[2], is_fake=[1], group=["x"])
    with pytest.raises(ValueError, match="same number"):
        G.group_balanced_accuracy(correct=[1, 0], is_fake=[1], group=["x"])


def test_single_type_equals_balanced_accuracy():
    rng = np.random.default_rng(3)
    t = rng.random(200) < 0.4
    p = rng.random(200) < 0.5
    got = G.group_balanced_accuracy(correct=t == p, is_fake=t, group=np.zeros(200, dtype=int))
    assert got == pytest.approx(C.balanced_accuracy(y_true=t, y_pred=p))


@pytest.mark.parametrize("fractional", [False, True])
def test_ci_matches_item_resampling(fractional):
    rng = np.random.default_rng(2)
    group = rng.choice(["animals", "doc", "person"], 500)
    fake = rng.random(500) < 0.6
    ok = (rng.random(500) < np.where(fake, 0.7, 0.55)).astype(float)
    if fractional:
        ok[rng.random(500) < 0.2] = 0.5
    ci = G.group_balanced_accuracy_ci(correct=ok, is_fake=fake, group=group)
    cells = [np.flatnonzero((group == g) & (fake == f)) for g in np.unique(group) for f in (True, False)]
    r = np.random.default_rng(9)
    vals = []
    for _ in range(500):
        idx = np.concatenate([r.choice(c, c.size) for c in cells])
        vals.append(G.group_balanced_accuracy(correct=ok[idx], is_fake=fake[idx], group=group[idx]))
    ref = np.percentile(vals, [2.5, 97.5])
    point = G.group_balanced_accuracy(correct=ok, is_fake=fake, group=group)
    assert ci[0] < point < ci[1]
    assert ci == pytest.approx(tuple(ref), abs=0.015)
    assert G.group_balanced_accuracy_ci(correct=[1, 0], is_fake=[0, 0], group=["a", "a"]) == (None, None)
