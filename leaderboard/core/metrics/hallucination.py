"""TriDF open-ended artifact metrics: Cover, CHAIR, Hal and F0.5 (TriDF 3.4, appendix H).

For each sample, Y is its annotated artifact set and R the artifact set the response was mapped to
(27 artifacts: bool matrices n x 27). Only samples with |Y| > 0 count:

- Cover = |R ∩ Y| / |Y|
- CHAIR = 1 - |R ∩ Y| / |R|; CHAIR = 1 when R is empty, or (type B) when a fake sample is called
  authentic
- Hal = 1 if CHAIR > 0 else 0
- F0.5 = 1.25 (1 - CHAIR) Cover / (0.25 (1 - CHAIR) + Cover), 0 when the denominator is 0
  (the F-beta of precision 1 - CHAIR and recall Cover with beta = 0.5)

A missing prediction counts as Cover 0, CHAIR 1, Hal 1 (hence F0.5 0).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._validate import bool_matrix, bool_vector, same_length


class ArtifactScores(NamedTuple):
    """Per-item arrays; NaN on items that do not count (|Y| = 0). ``counted`` marks the others."""

    cover: np.ndarray
    chair: np.ndarray
    hal: np.ndarray
    f05: np.ndarray
    counted: np.ndarray


def artifact_scores(*, predicted, truth, answered, called_authentic=None) -> ArtifactScores:
    """Per-item Cover, CHAIR, Hal and F0.5 for TriDF OEQ type A/B.

    ``predicted`` (R) and ``truth`` (Y) are bool matrices n x A; ``answered`` is False where the
    submission has no prediction for the item; ``called_authentic`` (type B only) is True where
    the response's decision was "Likely Authentic". A fake called authentic gets CHAIR = 1 while
    its Cover is still computed from R, as the spec only overrides CHAIR (F0.5 is then 0).
    Items with |Y| = 0 (e.g. real samples of type B) are NaN in every array and excluded from
    ``counted``; means are taken over ``counted`` (``artifact_means``).

    >>> s = artifact_scores(predicted=[[1, 1, 0, 0]], truth=[[1, 0, 1, 0]], answered=[True])
    >>> [float(s.cover[0]), float(s.chair[0]), float(s.hal[0]), float(s.f05[0])]
    [0.5, 0.5, 1.0, 0.5]
    """
    r = bool_matrix("predicted", predicted)
    y = bool_matrix("truth", truth)
    ans = bool_vector("answered", answered)
    if r.shape != y.shape:
        raise ValueError(f"predicted and truth must have the same shape, got {r.shape} and {y.shape}")
    same_length(truth=y, answered=ans)
    authentic = (np.zeros(len(ans), dtype=bool) if called_authentic is None
                 else bool_vector("called_authentic", called_authentic))
    same_length(truth=y, called_authentic=authentic)

    r = r & ans[:, None]                      # a missing prediction has R empty
    n_y = y.sum(axis=1)
    n_r = r.sum(axis=1)
    hits = (r & y).sum(axis=1)
    counted = n_y > 0
    cover = np.divide(hits, n_y, out=np.zeros(len(n_y)), where=counted)
    precision = np.divide(hits, n_r, out=np.zeros(len(n_r)), where=n_r > 0)
    chair = 1.0 - precision                   # R empty -> precision 0 -> CHAIR 1
    chair[authentic | ~ans] = 1.0
    cover[~ans] = 0.0
    hal = (chair > 0).astype(np.float64)
    one_minus = 1.0 - chair
    den = 0.25 * one_minus + cover
    f05 = np.divide(1.25 * one_minus * cover, den, out=np.zeros(len(den)), where=den > 0)
    for arr in (cover, chair, hal, f05):
        arr[~counted] = np.nan
    return ArtifactScores(cover=cover, chair=chair, hal=hal, f05=f05, counted=counted)


def artifact_means(*, predicted, truth, answered, called_authentic=None) -> dict[str, float]:
    """Means of Cover, CHAIR, Hal and F0.5 over samples with |Y| > 0 (NaN when there are none)."""
    s = artifact_scores(predicted=predicted, truth=truth, answered=answered,
                        called_authentic=called_authentic)
    n = int(s.counted.sum())
    return {name: (float(np.mean(getattr(s, name)[s.counted])) if n else float("nan"))
            for name in ("cover", "chair", "hal", "f05")}
