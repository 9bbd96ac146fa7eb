"""Boundary validation shared by the metric modules.

Every public metric converts its inputs through these helpers, so a bad argument fails with one
message shape: the argument's name, what was expected and what was given.
"""
from __future__ import annotations

import numpy as np


def bool_vector(name: str, value) -> np.ndarray:
    """A 1-D bool array; accepts bools or 0/1 integers, never strings or NaN."""
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr
    if arr.size == 0:
        return np.zeros(0, dtype=bool)
    if arr.dtype.kind in "iu" or (arr.dtype.kind == "f" and np.isfinite(arr).all()):
        if np.isin(arr, (0, 1)).all():
            return arr.astype(bool)
    raise ValueError(f"{name} must hold booleans (True = fake) or 0/1, got dtype {arr.dtype}")


def bool_matrix(name: str, value) -> np.ndarray:
    """A 2-D bool array (items x options/artifacts)."""
    arr = np.asarray(value)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D bool matrix (items x columns), got shape {arr.shape}")
    if arr.dtype != bool:
        if arr.size and not (arr.dtype.kind in "iu" and np.isin(arr, (0, 1)).all()):
            raise ValueError(f"{name} must hold booleans or 0/1, got dtype {arr.dtype}")
        arr = arr.astype(bool)
    return arr


def score_vector(name: str, value) -> np.ndarray:
    """A 1-D float64 array in [0, 1]; NaN is allowed and means "no score for this row"."""
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    finite = arr[~np.isnan(arr)]
    if finite.size and (finite.min() < 0.0 or finite.max() > 1.0):
        bad = finite[(finite < 0.0) | (finite > 1.0)][0]
        raise ValueError(f"{name} must lie in [0, 1] (NaN = missing), got {bad!r}")
    return arr


def same_length(**arrays: np.ndarray) -> int:
    """The common length of the given arrays; raises naming each length when they differ."""
    lengths = {name: len(arr) for name, arr in arrays.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"inputs must have the same number of items: {shown}")
    return next(iter(lengths.values()))


def fraction(name: str, value) -> float:
    """A float in [0, 1] (e.g. max_fpr, confidence)."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= out <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return out


def ratio(num, den):
    """num / den elementwise, NaN where den == 0 (the explicit "undefined" choice)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out if out.ndim else float(out)
