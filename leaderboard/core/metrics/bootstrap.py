"""95% bootstrap confidence intervals: items resampled with replacement, fixed seed, vectorized.

Percentile intervals (the 2.5th and 97.5th percentiles of the resampled metric). Every function
returns ``(low, high)``, or ``(None, None)`` when the interval is undefined: fewer than
``MIN_N`` items, a point value that is itself undefined, or more than half of the resamples
undefined (e.g. precision when most resamples predict nothing fake). Resamples where the metric is
undefined are otherwise dropped before taking percentiles.

Three paths, no Python loop over resamples:

- **Counts (exact, fast).** Resampling the n_s items of a stratum with replacement and counting
  the correct ones is exactly a Binomial(n_s, k_s / n_s) draw. Stratified by class, TP ~
  Bin(n_fake, TPR) and TN ~ Bin(n_real, TNR); accuracy, precision, recall, f.Acc, r.Acc, FPR,
  balanced accuracy and NBI all follow from the same draws (``count_metric_cis``). A mean of
  per-group metrics that share the real items (VCT²: each generator's fakes with the subset's
  reals) draws the shared TN once per resample (``shared_negatives_mean_ci``).
- **Per-item means** (MCQ score, IoU, Cover, ...): ``bootstrap_mean_ci``. With few distinct
  values the resampled counts of each value are one multinomial draw (exact); otherwise indices
  are drawn in chunks that bound memory.
- **Ranking metrics** (AP, ROC-AUC, PR-AUC, TPR@FPR): ``bootstrap_ranking_ci`` sorts once, draws
  per-item multiplicities stratified by class, and evaluates all resamples through weighted
  cumulative counts. Cost is O(n_resamples x n); the default ``N_RESAMPLES_RANKING`` = 1000
  keeps n = 30,000 under about a second.

Class stratification keeps the class sizes of every resample equal to the data's, so metrics that
need both classes stay defined; the spec asks for it where a metric needs both classes, and it is
used for every count metric here for consistency.
"""
from __future__ import annotations

import numpy as np

from . import classification, ranking
from ._validate import bool_vector, fraction, same_length, score_vector

N_RESAMPLES = 2000
N_RESAMPLES_RANKING = 1000
SEED = 0
CONFIDENCE = 0.95
MIN_N = 2
_CHUNK_CELLS = 4_000_000        # resamples x items per chunk (~32 MB of int64)
_FEW_VALUES = 64                # distinct values up to which the multinomial path is used

CI = tuple[float | None, float | None]
_NONE: CI = (None, None)


def _check_common(n_resamples, seed, confidence) -> float:
    if not isinstance(n_resamples, (int, np.integer)) or n_resamples < 10:
        raise ValueError(f"n_resamples must be an integer >= 10, got {n_resamples!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    conf = fraction("confidence", confidence)
    if not 0.0 < conf < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return conf


def percentile_ci(samples, *, confidence: float = CONFIDENCE) -> CI:
    """Percentile interval of 1-D resampled values, dropping undefined (NaN) resamples."""
    s = np.asarray(samples, dtype=np.float64)
    ok = s[~np.isnan(s)]
    if ok.size == 0 or ok.size * 2 < s.size:
        return _NONE
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(ok, [tail, 100.0 - tail])
    return float(low), float(high)


def binomial_draws(*, n, k, n_resamples: int = N_RESAMPLES, seed: int = SEED) -> np.ndarray:
    """(n_resamples, S) draws of successes when each stratum's n items are resampled.

    ``n`` and ``k`` are per-stratum item and success counts (k <= n); an empty stratum draws 0.
    """
    n = np.atleast_1d(np.asarray(n, dtype=np.int64))
    k = np.atleast_1d(np.asarray(k, dtype=np.int64))
    if n.shape != k.shape or (n < 0).any() or (k < 0).any() or (k > n).any():
        raise ValueError(f"need 0 <= k <= n per stratum, got n={n.tolist()!r:.80} k={k.tolist()!r:.80}")
    p = np.divide(k, n, out=np.zeros(n.shape), where=n > 0)
    rng = np.random.default_rng(seed)
    return rng.binomial(n, p, size=(n_resamples, n.size))


def count_metric_cis(*, tp: int, fp: int, tn: int, fn: int, metrics=tuple(classification.FROM_COUNTS),
                     n_resamples: int = N_RESAMPLES, seed: int = SEED,
                     confidence: float = CONFIDENCE) -> dict[str, CI]:
    """CIs of count metrics (names of ``classification.FROM_COUNTS``) from one confusion table.

    Exact class-stratified bootstrap: TP ~ Bin(TP + FN, TPR), TN ~ Bin(TN + FP, TNR).

    >>> cis = count_metric_cis(tp=80, fp=10, tn=90, fn=20, metrics=["accuracy"])
    >>> [round(v, 3) for v in cis["accuracy"]]
    [0.8, 0.9]
    """
    conf = _check_common(n_resamples, seed, confidence)
    unknown = [m for m in metrics if m not in classification.FROM_COUNTS]
    if unknown:
        raise ValueError(f"unknown count metric(s) {unknown}; known: {sorted(classification.FROM_COUNTS)}")
    n_pos, n_neg = tp + fn, tn + fp
    if n_pos + n_neg < MIN_N:
        return {m: _NONE for m in metrics}
    draws = binomial_draws(n=[n_pos, n_neg], k=[tp, tn], n_resamples=n_resamples, seed=seed)
    r_tp, r_tn = draws[:, 0], draws[:, 1]
    r_fn, r_fp = n_pos - r_tp, n_neg - r_tn
    out = {}
    for name in metrics:
        formula = classification.FROM_COUNTS[name]
        if np.isnan(formula(tp, fp, tn, fn)):
            out[name] = _NONE
            continue
        out[name] = percentile_ci(formula(r_tp, r_fp, r_tn, r_fn), confidence=conf)
    return out


def binary_metric_cis(*, y_true, y_pred, metrics=tuple(classification.FROM_COUNTS),
                      n_resamples: int = N_RESAMPLES, seed: int = SEED,
                      confidence: float = CONFIDENCE) -> dict[str, CI]:
    """``count_metric_cis`` from bool arrays (True = fake)."""
    c = classification.binary_counts(y_true=y_true, y_pred=y_pred)
    return count_metric_cis(tp=c.tp, fp=c.fp, tn=c.tn, fn=c.fn, metrics=metrics,
                            n_resamples=n_resamples, seed=seed, confidence=confidence)


def shared_negatives_mean_ci(*, metric: str = "accuracy", tp, fn, tn: int, fp: int,
                             n_resamples: int = N_RESAMPLES, seed: int = SEED,
                             confidence: float = CONFIDENCE) -> CI:
    """CI of the mean over groups of a count metric, where groups share one set of real items.

    Group g has its own fakes (``tp[g]``, ``fn[g]``) and the common reals (``tn``, ``fp``), as in
    VCT² where each generator's accuracy is measured on its fakes plus the subset's reals and the
    headline is the mean over generators. Each resample draws every group's TP and the shared TN
    once, so the correlation through the shared reals is kept.
    """
    conf = _check_common(n_resamples, seed, confidence)
    formula = classification.FROM_COUNTS.get(metric)
    if formula is None:
        raise ValueError(f"unknown count metric {metric!r}; known: {sorted(classification.FROM_COUNTS)}")
    tp = np.atleast_1d(np.asarray(tp, dtype=np.int64))
    fn = np.atleast_1d(np.asarray(fn, dtype=np.int64))
    if tp.shape != fn.shape or tp.size == 0:
        raise ValueError(f"tp and fn must be equal-length non-empty per-group counts, got {tp.shape} and {fn.shape}")
    point = np.asarray(formula(tp, fp, tn, fn))
    if np.isnan(point).any() or (tp + fn).min() + tn + fp < MIN_N:
        return _NONE
    n_pos = tp + fn
    draws = binomial_draws(n=np.append(n_pos, tn + fp), k=np.append(tp, tn),
                           n_resamples=n_resamples, seed=seed)
    r_tp, r_tn = draws[:, :-1], draws[:, -1:]
    values = formula(r_tp, (tn + fp) - r_tn, r_tn, n_pos - r_tp)
    return percentile_ci(np.mean(values, axis=1), confidence=conf)


def _stratum_codes(strata, n: int) -> np.ndarray:
    if strata is None:
        return np.zeros(n, dtype=np.intp)
    s = np.asarray(strata)
    if s.ndim != 1 or len(s) != n:
        raise ValueError(f"strata must be 1-D with one entry per value ({n}), got shape {s.shape}")
    return np.unique(s, return_inverse=True)[1].ravel()


def _resampled_sums(values: np.ndarray, n_resamples: int, rng) -> np.ndarray:
    """Sums of ``n_resamples`` with-replacement resamples of ``values`` (one stratum)."""
    n = values.size
    uniq, inverse = np.unique(values, return_inverse=True)
    if uniq.size <= _FEW_VALUES:
        # Resampled counts of each distinct value are one multinomial draw: exact, O(R x U).
        freq = np.bincount(inverse.ravel(), minlength=uniq.size) / n
        return rng.multinomial(n, freq, size=n_resamples) @ uniq
    sums = np.empty(n_resamples)
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, step):     # chunks bound memory, not one loop per resample
        rows = min(step, n_resamples - start)
        sums[start:start + rows] = values[rng.integers(0, n, size=(rows, n))].sum(axis=1)
    return sums


def bootstrap_mean_ci(values, *, strata=None, n_resamples: int = N_RESAMPLES, seed: int = SEED,
                      confidence: float = CONFIDENCE) -> CI:
    """CI of the mean of per-item scores (MCQ score, IoU, Cover, F0.5, ...).

    ``values`` must be finite (drop items that do not count first). With ``strata`` each stratum
    is resampled within itself, so stratum sizes are fixed.

    >>> ci = bootstrap_mean_ci([0.0, 1.0] * 50)
    >>> 0.39 < ci[0] < 0.5 < ci[1] < 0.61
    True
    """
    conf = _check_common(n_resamples, seed, confidence)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("values must be finite; drop the items that do not count before the CI")
    if v.size < MIN_N:
        return _NONE
    codes = _stratum_codes(strata, v.size)
    rng = np.random.default_rng(seed)
    total = np.zeros(n_resamples)
    for code in range(int(codes.max()) + 1):
        total += _resampled_sums(v[codes == code], n_resamples, rng)
    return percentile_ci(total / v.size, confidence=conf)


_RANKING = ("average_precision", "roc_auc", "pr_auc", "tpr_at_fpr")
#: resamples x rows above which ranking CIs draw fewer resamples (see bootstrap_ranking_ci)
RANKING_CELL_BUDGET = 4_000_000
MIN_RANKING_RESAMPLES = 200


def _class_multiplicities(m: int, rows: int, rng) -> np.ndarray:
    """(rows, m) counts of how often each of m items is drawn in m draws with replacement."""
    idx = rng.integers(0, m, size=(rows, m)) + (np.arange(rows) * m)[:, None]
    return np.bincount(idx.ravel(), minlength=rows * m).reshape(rows, m)


def bootstrap_ranking_ci(*, metric: str, y_true, y_score, y_pred=None, max_fpr=None,
                         n_resamples: int = N_RESAMPLES_RANKING, seed: int = SEED,
                         confidence: float = CONFIDENCE) -> CI:
    """CI of a ranking metric (``average_precision``, ``roc_auc``, ``pr_auc``, ``tpr_at_fpr``).

    Items are resampled within each class; a resample is a vector of item multiplicities, so
    each resample's curve is a weighted cumulative sum over the one sorted order. ``tpr_at_fpr``
    needs ``y_pred`` and ``max_fpr`` and follows ``ranking.tpr_at_fpr`` (labels-only rule when
    ``y_score`` is None or has a missing score).
    """
    conf = _check_common(n_resamples, seed, confidence)
    # Cost is n_resamples x n cells; past the budget fewer resamples are drawn (never under
    # MIN_RANKING_RESAMPLES), so a 24k-row block's AP interval costs ~0.1 s, not ~0.3 s. At such
    # sizes the interval is narrow and 200+ resamples place its percentiles well enough.
    n_items = np.size(y_true)
    if n_items:
        n_resamples = max(min(n_resamples, MIN_RANKING_RESAMPLES),
                          min(n_resamples, RANKING_CELL_BUDGET // n_items))
    if metric not in _RANKING:
        raise ValueError(f"unknown ranking metric {metric!r}; known: {list(_RANKING)}")
    t = bool_vector("y_true", y_true)
    point_kwargs = {"y_true": t}
    if metric == "tpr_at_fpr":
        if y_pred is None or max_fpr is None:
            raise ValueError("tpr_at_fpr needs y_pred and max_fpr")
        point_kwargs.update(y_pred=y_pred, y_score=y_score, max_fpr=max_fpr)
    else:
        point_kwargs.update(y_score=y_score)
    if t.size < MIN_N or np.isnan(getattr(ranking, metric)(**point_kwargs)):
        return _NONE
    n_pos, n_neg = int(t.sum()), int((~t).sum())
    if metric == "tpr_at_fpr":
        p = bool_vector("y_pred", y_pred)
        s = None if y_score is None else score_vector("y_score", y_score)
        if s is None or np.isnan(s).any():
            # Labels only: the metric depends on the resampled TP and FP counts alone.
            c = classification.binary_counts(y_true=t, y_pred=p)
            draws = binomial_draws(n=[n_pos, n_neg], k=[c.tp, c.fp], n_resamples=n_resamples, seed=seed)
            lam = fraction("max_fpr", max_fpr)
            vals = np.where(draws[:, 1] / n_neg <= lam, draws[:, 0] / n_pos, 0.0)
            return percentile_ci(vals, confidence=conf)
        s = ranking.gated_scores(p, s)
    else:
        s = score_vector("y_score", y_score)
    same_length(y_true=t, y_score=s)
    order, last = ranking.sort_order(s)
    t_sorted = t[order]
    pos_cols, neg_cols = np.flatnonzero(t_sorted), np.flatnonzero(~t_sorted)
    candidate = np.isfinite(s[order][last])
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples)
    step = max(1, _CHUNK_CELLS // t.size)
    for start in range(0, n_resamples, step):     # chunks bound memory, not one loop per resample
        rows = min(step, n_resamples - start)
        w_pos = np.zeros((rows, t.size), dtype=np.int64)
        w_pos[:, pos_cols] = _class_multiplicities(n_pos, rows, rng)
        w_neg = np.zeros((rows, t.size), dtype=np.int64)
        if n_neg:
            w_neg[:, neg_cols] = _class_multiplicities(n_neg, rows, rng)
        tps = np.cumsum(w_pos, axis=1)[:, last]
        fps = np.cumsum(w_neg, axis=1)[:, last]
        if metric == "average_precision":
            v = ranking.average_precision_from_curve(tps, fps)
        elif metric == "roc_auc":
            v = ranking.roc_auc_from_curve(tps, fps)
        elif metric == "pr_auc":
            v = ranking.pr_auc_from_curve(tps, fps)
        else:
            v = ranking.tpr_at_fpr_from_curve(tps, fps, candidate=candidate, n_pos=n_pos, n_neg=n_neg,
                                              max_fpr=fraction("max_fpr", max_fpr))
        values[start:start + rows] = v
    return percentile_ci(values, confidence=conf)

