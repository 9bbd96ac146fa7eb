"""Invariance tests run over every registered metric (sklearn's test_common idea)."""
import inspect
import math

import numpy as np
import pytest

from leaderboard.core.metrics import masks
from leaderboard.core.metrics.registry import METRICS

SCALAR_INPUTS = {"acc_typeb", "f05_a", "f05_b", "acc_tfq", "mcq_clamped"}
ITEM_METRICS = sorted(name for name, m in METRICS.items() if not SCALAR_INPUTS & set(m.inputs))


def make_inputs(inputs, n, rng):
    """Random valid inputs for the named keyword arguments, n items."""
    y_true = rng.random(n) < 0.5
    if n >= 2:
        y_true[:2] = [True, False]             # both classes, so most metrics are defined
    out = {}
    for name in inputs:
        if name in ("y_true", "is_fake"):
            out[name] = y_true
        elif name in ("y_pred", "correct") and "selected" not in inputs:
            out[name] = rng.random(n) < 0.5
        elif name == "y_score":
            out[name] = rng.integers(0, 8, n) / 7
        elif name == "group":
            out[name] = rng.choice(["a", "b", "c"], n)
        elif name == "selected":
            out[name] = rng.random((n, 5)) < 0.4
        elif name == "correct":
            cor = rng.random((n, 5)) < 0.3
            cor[np.arange(n), rng.integers(0, 5, n)] = True
            out[name] = cor
        elif name in ("predicted", "truth"):
            out[name] = rng.random((n, 27)) < 0.1
        elif name == "answered":
            out[name] = rng.random(n) < 0.9
        elif name == "called_authentic":
            out[name] = rng.random(n) < 0.2
        elif name in ("gt", "pred"):
            out[name] = [masks.encode_mask(rng.random((6, 5)) < 0.5) for _ in range(n)]
        else:
            raise AssertionError(f"no input factory for {name!r}")
    return out


def permute(inputs, perm):
    return {k: (np.asarray(v)[perm] if not isinstance(v, list) else [v[i] for i in perm]) for k, v in inputs.items()}


def test_registry_metadata():
    for name, m in METRICS.items():
        assert m.name == name
        assert m.lower < m.upper
        assert m.higher_is_better in (True, False, None)
        assert m.title and m.paper
        params = inspect.signature(m.fn).parameters
        assert set(m.inputs) <= set(params), name
        for p in m.inputs:
            assert params[p].kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD), name
    assert {"accuracy", "precision", "recall", "average_precision", "tpr_at_fpr_5", "mcq_score",
            "f05", "miou", "normalized_bias_index", "group_balanced_accuracy", "tridf_tcs"} <= set(METRICS)


@pytest.mark.parametrize("name", ITEM_METRICS)
def test_bounds_and_permutation_invariance(name):
    m = METRICS[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    for n in (2, 7, 60):
        inputs = make_inputs(m.inputs, n, rng)
        value = m.fn(**inputs)
        assert isinstance(value, float)
        assert math.isnan(value) or m.lower - 1e-12 <= value <= m.upper + 1e-12, (name, value)
        shuffled = m.fn(**permute(inputs, rng.permutation(n)))
        assert shuffled == pytest.approx(value, nan_ok=True, abs=1e-12)


@pytest.mark.parametrize("name", ITEM_METRICS)
def test_empty_input_is_nan(name):
    m = METRICS[name]
    inputs = make_inputs(m.inputs, 0, np.random.default_rng(0))
    if "selected" in inputs:
        inputs = {k: np.zeros((0, 5), bool) for k in inputs}
    if "predicted" in inputs:
        inputs.update(predicted=np.zeros((0, 27), bool), truth=np.zeros((0, 27), bool))
    assert math.isnan(m.fn(**inputs))


@pytest.mark.parametrize("name", sorted(n for n in ITEM_METRICS if "y_score" in METRICS[n].inputs))
def test_missing_scores(name):
    m = METRICS[name]
    inputs = make_inputs(m.inputs, 30, np.random.default_rng(1))
    inputs["y_score"] = inputs["y_score"].copy()
    inputs["y_score"][3] = np.nan
    value = m.fn(**inputs)
    if m.needs_score:
        assert math.isnan(value)             # "n/a", never 0
    else:                                    # TPR(lambda) falls back to its labels-only rule
        assert value == m.fn(**{**inputs, "y_score": None})


def test_scalar_composite_bounds():
    m = METRICS["tridf_tcs"]
    assert m.fn(acc_typeb=1, f05_a=1, f05_b=1, acc_tfq=1, mcq_clamped=1) == m.upper
    assert m.fn(acc_typeb=0, f05_a=0, f05_b=0, acc_tfq=0, mcq_clamped=0) == m.lower
