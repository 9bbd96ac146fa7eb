"""LOKI's released aggregate: accuracy balanced over fake and real per type, weighted by #fake.

This is the authors' ``Loki.aggregate_results`` (``lm_evaluate/tasks/loki.py``, opendatalab/LOKI
commit 251b4f6, the file last changed in 2a5723b), rule for rule, on per-row correctness. The rows
of one *scope* (one authors' question file; here one modality of one task) are split by their
*type key* (what the authors read from ``question_type``: the domain, the generator, or for 3D
reals simply ``real``) and by class (fake / real). With ``acc`` the mean correctness of a cell:

- several type keys have real rows: a type with fakes counts ``b_t = (acc_fake_t + acc_real_t) / 2``
  when it also has reals, else ``b_t = acc_fake_t`` (the code's ``real_accuracy = fake_accuracy``);
- exactly one type key has real rows (LOKI's 3D files: every real is ``..._real``): that one real
  accuracy is shared, ``b_t = (acc_fake_t + acc_real) / 2`` for every type with fakes;
- types with reals but no fakes are not counted; the total is ``sum_t n_fake_t b_t / sum_t n_fake_t``.

A scope without any real row is undefined in the authors' code (it divides by zero); here each of
its types counts its fake accuracy alone (the several-keys rule). Several scopes are combined with
the same weights (``n_fake``), each scope keeping its own rule; the authors only ever score one file.

Correctness may be fractional: LOKI's multiple-choice parser answers at random when it reads
nothing, and the leaderboard scores such a row as its expected value 1/#options; every formula
here is linear in the rows, so the result is the expected value of the authors' number.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validate import bool_vector, same_length
from .bootstrap import (
    CONFIDENCE,
    MIN_N,
    N_RESAMPLES,
    SEED,
    _check_common,
    binomial_draws,
    percentile_ci,
)

_SEP = "\x1f"


@dataclass(frozen=True)
class GroupCells:
    """Per (scope, type) cell sums of one block; ``keys[g] = (scope, type)``."""

    keys: list[tuple[str, str]]
    scope: np.ndarray        # scope code of each group
    fake_n: np.ndarray
    fake_sum: np.ndarray
    real_n: np.ndarray
    real_sum: np.ndarray
    row_cell: np.ndarray     # cell of each row: group code, fake cells first (g + code for reals)
    row_value: np.ndarray    # correctness of each row (float)

    @property
    def row_group(self) -> np.ndarray:
        """The group code of each row."""
        g = len(self.keys)
        return np.where(self.row_cell >= g, self.row_cell - g, self.row_cell)

    @property
    def weight(self) -> np.ndarray:
        """The authors' weight of each type: its number of fake rows."""
        return self.fake_n.astype(np.float64)


def _correct_vector(value) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"correct must be 1-D, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if arr.size and (arr.dtype.kind not in "iuf" or not np.isfinite(arr).all()
                     or arr.min() < 0 or arr.max() > 1):
        raise ValueError("correct must hold booleans or numbers in [0, 1] (expected correctness), "
                         f"got dtype {arr.dtype}")
    return arr.astype(np.float64)


def group_cells(*, correct, is_fake, group, scope=None) -> GroupCells:
    """Validate the rows and sum them per (scope, type) cell and class."""
    ok = _correct_vector(correct)
    fake = bool_vector("is_fake", is_fake)
    groups = np.asarray(group)
    if groups.ndim != 1:
        raise ValueError(f"group must be 1-D, got shape {groups.shape}")
    scopes = np.zeros(len(groups), dtype=np.int8) if scope is None else np.asarray(scope)
    if scopes.ndim != 1:
        raise ValueError(f"scope must be 1-D, got shape {scopes.shape}")
    same_length(correct=ok, is_fake=fake, group=groups, scope=scopes)
    pair = np.char.add(np.char.add(scopes.astype(str), _SEP), groups.astype(str))
    names, codes = np.unique(pair, return_inverse=True)
    codes = codes.ravel()
    keys = [tuple(str(n).split(_SEP, 1)) for n in names]
    _, scope_codes = np.unique(np.array([k[0] for k in keys] or [""]), return_inverse=True)
    g = len(keys)

    def sums(mask, weights=None):
        return np.bincount(codes[mask], weights=None if weights is None else weights[mask],
                           minlength=g)

    return GroupCells(keys, scope_codes.ravel()[:g], sums(fake), sums(fake, ok), sums(~fake),
                      sums(~fake, ok), np.where(fake, codes, codes + g), ok)


def group_values(cells: GroupCells, fake_mean, real_mean) -> np.ndarray:
    """Each type's ``b_t`` from cell means (the last axis is the group; leading axes, e.g.
    bootstrap resamples, are independent). NaN for a type without fake rows."""
    fake_mean, real_mean = np.asarray(fake_mean, float), np.asarray(real_mean, float)
    value = np.array(fake_mean, dtype=np.float64, copy=True)
    has_real = cells.real_n > 0
    for s in np.unique(cells.scope):
        in_s = cells.scope == s
        with_real = np.flatnonzero(in_s & has_real)
        if with_real.size == 1:       # one real type: its accuracy is shared by every type
            value[..., in_s] = (fake_mean[..., in_s] + real_mean[..., with_real]) / 2.0
        else:
            both = in_s & has_real
            value[..., both] = (fake_mean[..., both] + real_mean[..., both]) / 2.0
    return np.where(cells.fake_n > 0, value, np.nan)


def weighted_total(values, weight, mask=None) -> np.ndarray | float:
    """``sum n_fake b / sum n_fake`` over the groups in ``mask`` (all by default); NaN if none."""
    w = np.asarray(weight, float) if mask is None else np.where(mask, weight, 0.0)
    total = w.sum()
    if total <= 0:
        return np.full(np.shape(values)[:-1], np.nan) if np.ndim(values) > 1 else float("nan")
    out = (np.nan_to_num(np.asarray(values, float)) * w).sum(axis=-1) / total
    return float(out) if np.ndim(out) == 0 else out


def cell_means(cells: GroupCells) -> tuple[np.ndarray, np.ndarray]:
    """(fake, real) mean correctness of each group; NaN where the cell is empty."""
    fake = np.divide(cells.fake_sum, cells.fake_n, out=np.full(len(cells.keys), np.nan),
                     where=cells.fake_n > 0)
    real = np.divide(cells.real_sum, cells.real_n, out=np.full(len(cells.keys), np.nan),
                     where=cells.real_n > 0)
    return fake, real


def group_balanced_accuracy(*, correct, is_fake, group, scope=None) -> float:
    """The authors' total (``aggregate_results(...)["total_accuracy"]``); NaN without fakes.

    >>> group_balanced_accuracy(correct=[1, 0, 1, 1, 1], is_fake=[1, 1, 0, 1, 0],
    ...                         group=["a", "a", "a", "b", "b"])
    0.8333333333333334
    >>> # one real type (3D): its accuracy 0.5 is shared: (1 + .5)/2 and (0 + .5)/2, weights 1 and 1
    >>> group_balanced_accuracy(correct=[1, 0, 1, 0], is_fake=[1, 1, 0, 0],
    ...                         group=["CLAY", "magic3d", "real", "real"])
    0.5
    """
    cells = group_cells(correct=correct, is_fake=is_fake, group=group, scope=scope)
    return weighted_total(group_values(cells, *cell_means(cells)), cells.weight)


def group_balanced_per_group(*, correct, is_fake, group, scope=None) -> dict[tuple[str, str], float]:
    """The authors' ``per_metric_accuracy``: ``b_t`` of each (scope, type) that has fake rows."""
    cells = group_cells(correct=correct, is_fake=is_fake, group=group, scope=scope)
    values = group_values(cells, *cell_means(cells))
    return {k: float(v) for k, v in zip(cells.keys, values) if not np.isnan(v)}


def cell_mean_draws(cells: GroupCells, *, n_resamples: int = N_RESAMPLES, seed: int = SEED
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(fake, real) cell means of ``n_resamples`` stratified resamples, each (R, G).

    Rows are resampled within their (group, class) cell, so cell sizes stay fixed and every
    ``b_t`` stays defined. 0/1 correctness: a cell's count of correct rows is one Binomial draw;
    fractional correctness: a cell's counts per distinct value are one multinomial draw. Both are
    exact item resampling without touching rows.
    """
    g = len(cells.keys)
    n = np.concatenate([cells.fake_n, cells.real_n])
    levels, inverse = np.unique(cells.row_value, return_inverse=True)
    if np.isin(levels, (0.0, 1.0)).all():
        k = np.concatenate([cells.fake_sum, cells.real_sum]).round().astype(np.int64)
        sums = binomial_draws(n=n, k=k, n_resamples=n_resamples, seed=seed).astype(np.float64)
    else:
        counts = np.zeros((2 * g, levels.size))
        np.add.at(counts, (cells.row_cell, inverse.ravel()), 1.0)
        pvals = np.divide(counts, n[:, None], out=np.zeros_like(counts), where=n[:, None] > 0)
        pvals[n == 0, 0] = 1.0        # an empty cell draws nothing; any valid distribution
        rng = np.random.default_rng(seed)
        sums = rng.multinomial(n, pvals, size=(n_resamples, 2 * g)) @ levels
    means = np.divide(sums, n, out=np.full(sums.shape, np.nan), where=n > 0)
    return means[:, :g], means[:, g:]


def group_balanced_accuracy_ci(*, correct, is_fake, group, scope=None,
                               n_resamples: int = N_RESAMPLES, seed: int = SEED,
                               confidence: float = CONFIDENCE):
    """CI of `group_balanced_accuracy`, stratified by (scope, type, class)."""
    conf = _check_common(n_resamples, seed, confidence)
    cells = group_cells(correct=correct, is_fake=is_fake, group=group, scope=scope)
    point = weighted_total(group_values(cells, *cell_means(cells)), cells.weight)
    if cells.row_value.size < MIN_N or np.isnan(point):
        return None, None
    values = group_values(cells, *cell_mean_draws(cells, n_resamples=n_resamples, seed=seed))
    return percentile_ci(weighted_total(values, cells.weight), confidence=conf)
