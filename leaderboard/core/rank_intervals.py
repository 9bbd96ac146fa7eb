"""Rank intervals from a joint bootstrap over items (issue 14).

Two submissions scored on the same items are strongly correlated, so overlapping marginal CIs
say little about who is ahead. Here every submission of a board is evaluated on the *same*
resampled items (`joint_draws`: one set of item weights shared by all rows), so the paired
differences carry the correlation. Item-mean and cell models (accuracy, partial credit, VCT²'s
cells) use the Poisson bootstrap (every item weighted Poisson(1) times; per-stratum sums and
sizes, so each stratum's ratio is recomputed as the metric defines it); SynCred's TPR(5), a
ranking metric, resamples each class with its size kept (`stratified_weights`).

The rule (written under every board, `RULE`): submission s is *significantly better* than r when
s beats r in more than 97.5% of the joint resamples (the paired 95% percentile interval of the
difference excludes 0). Then r's 95% rank interval is

    lo = 1 + #{s significantly better than r},   hi = R - #{s significantly worse than r}

over the R ranked rows considered, clamped to contain the shown rank. Rows whose interval
contains 1 are tied for first. Identical submissions never beat one another (their difference is
0 in every resample), so they always share their interval. A row whose interval includes rank 1
and another rank is tied for first; an interval of exactly 1 is a clear first. This is the "pairwise" rank interval
(no multiplicity correction): each bound is off only when some pair is misjudged, which for a
pair of equal true values happens in about 2.5% of samples per side.

Cost (`stratum_sums`): items on which every considered row agrees add the same amount to every
row and cost one Poisson draw per group; the others get a weight each and one float32 GEMM per
chunk of resamples. Then R rank counts over B x R draws. Keep BLAS on one thread around it
(`threadpoolctl` on the server) so a board refresh uses one core.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from leaderboard.core.outcomes import Outcome, combine, evaluate

ALPHA = 0.05
N_RESAMPLES = 1000
SEED = 20261201
#: resamples per chunk: bounds the weight matrix to CHUNK x n float32 (VCT²: 23 MB at 50)
CHUNK = 50

RULE = ("Rank interval (95%): from 1 + the number of submissions significantly better to the "
        "number of ranked submissions minus those significantly worse, where \"significantly "
        "better\" means better in more than 97.5% of 1,000 joint bootstrap resamples of the items "
        "(the same resampled items for every submission, the metric recomputed on each). Rows "
        "whose interval includes rank 1 and another rank are marked as tied for first. Among "
        "more than {top} ranked rows only the top {top} get an interval; \"{top}+\" means the "
        "row may rank below them.")


def stratified_weights(strata: np.ndarray, n_resamples: int, rng: np.random.Generator
                       ) -> np.ndarray:
    """B x n multiplicities: each stratum's items drawn with replacement, its size kept."""
    strata = np.asarray(strata)
    n = len(strata)
    idx = np.empty((n_resamples, n), dtype=np.int64)
    col = 0
    for c in np.unique(strata):
        rows = np.flatnonzero(strata == c)
        draw = rng.integers(0, len(rows), size=(n_resamples, len(rows)))
        idx[:, col:col + len(rows)] = rows[draw]
        col += len(rows)
    idx += (np.arange(n_resamples, dtype=np.int64) * n)[:, None]
    counts = np.bincount(idx.ravel(), minlength=n_resamples * n)
    return counts.reshape(n_resamples, n).astype(np.float32)


def joint_draws(outcomes: list[Outcome], *, n_resamples: int = N_RESAMPLES, seed: int = SEED,
                chunk: int = CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """(point values R, resampled values B x R) of outcomes that share one item set.

    Deterministic for a given ``seed`` and set of rows: the same board gives the same intervals
    on every refresh, whatever the row order.
    """
    if not outcomes:
        raise ValueError("no outcomes to resample")
    fp = outcomes[0].fingerprint()
    if any(o.fingerprint() != fp for o in outcomes[1:]):
        raise ValueError("outcomes were not scored on the same items (fingerprints differ)")
    rng = np.random.default_rng(seed)
    if outcomes[0].model != "tpr_at_fpr":
        return _linear_draws(outcomes, n_resamples, rng, chunk)
    n = len(outcomes[0])
    point = evaluate(outcomes, np.ones((1, n), dtype=np.float32))[0]
    draws = np.empty((n_resamples, len(outcomes)))
    for start in range(0, n_resamples, chunk):  # a ranking metric: every item's weight
        b = min(chunk, n_resamples - start)
        draws[start:start + b] = evaluate(outcomes, stratified_weights(outcomes[0].strata, b,
                                                                        rng))
    return point, draws


def _linear_draws(outcomes: list[Outcome], n_resamples: int, rng: np.random.Generator,
                  chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """(point values, resampled values) of a model linear in per-stratum sums (``mean``,
    ``cells``): one outcome matrix, per-stratum sums of the weighted items."""
    X = np.stack([o.x for o in outcomes], axis=1)                # n x R
    strata = outcomes[0].strata
    sums, sizes, point_sums, point_sizes = {}, {}, {}, {}
    for c in np.unique(strata).tolist():
        Xc = X[strata == c]
        sums[c], sizes[c] = stratum_sums(Xc, n_resamples, rng, chunk)
        point_sums[c] = Xc.sum(axis=0, dtype=np.float64)[None, :]
        point_sizes[c] = float(len(Xc))
    point = combine(outcomes[0], point_sums, point_sizes)[0]
    return point, combine(outcomes[0], sums, sizes)


#: more distinct shared values than this: every item is weighted one by one
_MAX_SHARED_VALUES = 64
#: Poisson(1) rounded to 1/256: of the 256 values of a random byte, 94 give weight 0, 94 give 1,
#: 47 give 2, 16 give 3, 4 give 4 and 1 gives 5 (256 x P(k) = 94.2, 94.2, 47.1, 15.7, 3.9, 0.8,
#: 0.1, ...). Its variance / mean^2, which sets the bootstrap's spread, is 0.996 (Poisson: 1),
#: so intervals are within 0.3% of the exact Poisson bootstrap's; one byte per weight keeps the
#: weights as cheap to draw as the GEMM that uses them.
_BYTE_WEIGHTS = np.repeat(np.arange(6, dtype=np.float32), [94, 94, 47, 16, 4, 1])
#: its mean (= its variance, 257/256): a group of c agreeing items' total weight has mean and
#: variance c x this, which Poisson(c x this) matches
_BYTE_MEAN = float(_BYTE_WEIGHTS.mean())


def poisson_weights(rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """rows x cols independent (byte-rounded, see `_BYTE_WEIGHTS`) Poisson(1) weights, float32."""
    n = rows * cols
    raw = rng.bit_generator.random_raw(-(-n // 8)).view(np.uint8)[:n]
    return _BYTE_WEIGHTS[raw].reshape(rows, cols)


def stratum_sums(Xc: np.ndarray, n_resamples: int, rng: np.random.Generator,
                 chunk: int = CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """(B x R sums of each row's outcomes, B x 1 stratum sizes) over Poisson-resampled items.

    The Poisson bootstrap: every item enters a resample Poisson(1) times, independently, the
    same times for every row (the joint bootstrap); a stratum's size varies with its draws and
    every model divides by it, as the multinomial bootstrap's fixed size would be divided by.
    Items on which every row has the same value add that value times their total weight to
    every row, so a group of them costs one draw (Poisson with their total mean); only the informative
    items get a weight each (`poisson_weights`), and one float32 GEMM per chunk of resamples.
    """
    m, R = Xc.shape
    sums, sizes = np.empty((n_resamples, R)), np.empty((n_resamples, 1))
    same = (Xc == Xc[:, :1]).all(axis=1)
    values, counts = np.unique(Xc[same, 0], return_counts=True)
    if len(values) > _MAX_SHARED_VALUES:
        same[:] = False
        values, counts = values[:0], counts[:0]
    # the informative items' outcomes, and a column of ones that sums their weights (the size)
    informative = np.ones((int((~same).sum()), R + 1), dtype=np.float32)
    informative[:, :R] = Xc[~same]
    k = len(informative)
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        shared = rng.poisson(counts * _BYTE_MEAN, size=(b, len(counts)))
        total = shared @ values.astype(np.float64)                 # agreeing items' share
        size = shared.sum(axis=1).astype(np.float64)
        if k:
            got = (poisson_weights(b, k, rng) @ informative).astype(np.float64)
            sums[start:start + b] = total[:, None] + got[:, :R]
            size += got[:, R]
        else:
            sums[start:start + b] = total[:, None]
        sizes[start:start + b, 0] = size
    return sums, sizes


@dataclass(frozen=True)
class RankInterval:
    rank: int
    lo: int
    hi: int
    #: the upper end stops at the last row considered: the row may rank lower than ``hi``
    open_end: bool = False

    @property
    def tied_first(self) -> bool:
        """The interval includes rank 1 and another rank (an interval of exactly 1 is a clear
        first, not a tie)."""
        return self.lo == 1 and (self.hi > 1 or self.open_end)

    def label(self) -> str:
        """"2 (1–4)", "1 (1)" when the rank is certain, "98 (90–100+)" for an open end."""
        hi = f"{self.hi}+" if self.open_end else str(self.hi)
        if self.lo == self.hi and not self.open_end:
            return f"{self.rank} ({self.lo})"
        return f"{self.rank} ({self.lo}–{hi})"

    def as_dict(self) -> dict:
        return {"rank": self.rank, "lo": self.lo, "hi": self.hi, "open_end": self.open_end,
                "tied_first": self.tied_first, "label": self.label()}


def better_fractions(draws: np.ndarray, *, higher_is_better: bool = True) -> np.ndarray:
    """F[r, s] = share of resamples in which s is strictly better than r (R x R)."""
    d = np.where(np.isnan(draws), -np.inf, draws if higher_is_better else -draws)
    R = d.shape[1]
    out = np.empty((R, R))
    for r in range(R):
        out[r] = (d > d[:, [r]]).mean(axis=0)
    return out


def rank_intervals(draws: np.ndarray, ranks: list[int], *, higher_is_better: bool = True,
                   alpha: float = ALPHA, total: int | None = None) -> list[RankInterval]:
    """95% rank interval of each of R rows from their joint draws (B x R, the board's order).

    ``ranks``: the board's rank of each row. ``total``: ranked rows on the board when only the
    top R are considered; a row not significantly better than the last considered one then gets
    an open upper end.
    """
    if draws.ndim != 2 or draws.shape[1] != len(ranks):
        raise ValueError("draws must be B x R with one rank per row")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    R = len(ranks)
    beyond = total is not None and total > R
    F = better_fractions(draws, higher_is_better=higher_is_better)
    sig_better = F > 1 - alpha / 2                       # [r, s]: s significantly better than r
    out = []
    for r in range(R):
        lo = 1 + int(sig_better[r].sum())
        worse = int(sig_better[:, r].sum())              # rows r is significantly better than
        hi = R - worse
        # rows beyond the window are observed no better than its last row: a row significantly
        # better than that one is taken to beat them too; any other row may rank below them
        open_end = beyond and (r == R - 1 or not sig_better[R - 1, r])
        if open_end:
            hi = R
        lo, hi = min(lo, ranks[r]), max(hi, ranks[r])
        out.append(RankInterval(ranks[r], lo, hi, bool(open_end)))
    return out
