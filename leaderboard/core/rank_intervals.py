"""Rank intervals from a joint bootstrap over items (issue 14).

Two submissions scored on the same items are strongly correlated, so overlapping marginal CIs
say little about who is ahead. Here every submission of a board is evaluated on the *same*
resampled items (`joint_draws`: one resample matrix shared by all rows, items resampled within the
metric's strata, each stratum keeping its size), so the paired differences carry the correlation.

The rule (written under every board, `RULE`): submission s is *significantly better* than r when
s beats r in more than 97.5% of the joint resamples (the paired 95% percentile interval of the
difference excludes 0). Then r's 95% rank interval is

    lo = 1 + #{s significantly better than r},   hi = R - #{s significantly worse than r}

over the R ranked rows considered, clamped to contain the shown rank. Rows whose interval
contains 1 are tied for first. Identical submissions never beat one another (their difference is
0 in every resample), so they always share their interval. This is the "pairwise" rank interval
(no multiplicity correction): each bound is off only when some pair is misjudged, which for a
pair of equal true values happens in about 2.5% of samples per side.

Cost: values are B x n weights times the n x R outcome matrix (one float32 GEMM per chunk of
resamples; per stratum for VCT²'s cells), then R rank counts over B x R draws. Keep BLAS on one
thread around it (`threadpoolctl` on the server) so a board refresh uses one core.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from leaderboard.core.outcomes import Outcome, evaluate

ALPHA = 0.05
N_RESAMPLES = 1000
SEED = 20261201
#: resamples per chunk: bounds the weight matrix to CHUNK x n float32 (VCT²: 23 MB at 50)
CHUNK = 50

RULE = ("Rank interval (95%): from 1 + the number of submissions significantly better to the "
        "number of ranked submissions minus those significantly worse, where \"significantly "
        "better\" means better in more than 97.5% of 1,000 joint bootstrap resamples of the items "
        "(the same resampled items for every submission, within the metric's strata). Rows whose "
        "interval includes rank 1 are marked as tied for first. Among more than {top} ranked "
        "rows only the top {top} get an interval; \"{top}+\" means the row may rank below "
        "them.")


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

    Deterministic for a given ``seed``: the same board gives the same intervals on every
    refresh, whatever the row order (the resamples depend on the items only).
    """
    if not outcomes:
        raise ValueError("no outcomes to resample")
    fp = outcomes[0].fingerprint()
    if any(o.fingerprint() != fp for o in outcomes[1:]):
        raise ValueError("outcomes were not scored on the same items (fingerprints differ)")
    n = len(outcomes[0])
    point = evaluate(outcomes, np.ones((1, n), dtype=np.float32))[0]
    rng = np.random.default_rng(seed)
    draws = np.empty((n_resamples, len(outcomes)))
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        w = stratified_weights(outcomes[0].strata, b, rng)
        draws[start:start + b] = evaluate(outcomes, w)
    return point, draws


@dataclass(frozen=True)
class RankInterval:
    rank: int
    lo: int
    hi: int
    #: the upper end stops at the last row considered: the row may rank lower than ``hi``
    open_end: bool = False

    @property
    def tied_first(self) -> bool:
        return self.lo == 1

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
