"""TriDF multi-select MCQ partial credit (TriDF 3.4, "MCQ").

Each question offers M options (A-D plus "E. None of the options are correct") and has K correct
ones. With S the selected set and C the correct set, the per-question score is

    |S ∩ C| / K  -  |S \\ C| / (M - K)

in [-1, 1]; a random selection scores about 0. The paper does not clamp; the authors' later
challenge clamps at 0 (``clamp=True``), shown as a second column.
"""
from __future__ import annotations

import numpy as np

from ._validate import bool_matrix


def mcq_scores(*, selected, correct, clamp: bool = False) -> np.ndarray:
    """Per-question TriDF MCQ score; ``selected`` and ``correct`` are bool matrices n x M.

    Choices:
    - K = M (every option correct): there is no wrong option to pick, so the penalty term is 0
      and the score is |S ∩ C| / K.
    - K = 0 is invalid truth (TriDF always has at least one correct option, E when none of A-D
      is): raises ValueError naming the first such row.
    - An empty selection (including an unparsable answer) scores 0: no credit and no penalty,
      the same as a random guess on average. It is never treated as a random pick.

    >>> mcq_scores(selected=[[1, 0, 1, 0, 0]], correct=[[1, 1, 0, 0, 0]]).tolist()
    [0.16666666666666669]
    >>> mcq_scores(selected=[[0, 0, 1, 1, 0]], correct=[[1, 0, 0, 0, 0]], clamp=True).tolist()
    [0.0]
    """
    sel = bool_matrix("selected", selected)
    cor = bool_matrix("correct", correct)
    if sel.shape != cor.shape:
        raise ValueError(f"selected and correct must have the same shape, got {sel.shape} and {cor.shape}")
    if not isinstance(clamp, (bool, np.bool_)):
        raise ValueError(f"clamp must be a bool, got {clamp!r}")
    n_options = cor.shape[1]
    k = cor.sum(axis=1)
    if (k == 0).any():
        row = int(np.flatnonzero(k == 0)[0])
        raise ValueError(f"correct has no correct option in row {row}; every question needs K >= 1")
    hits = (sel & cor).sum(axis=1)
    false_picks = (sel & ~cor).sum(axis=1)
    wrong = n_options - k
    # false_picks is 0 whenever wrong == 0, so the penalty is 0 there (the K = M rule).
    penalty = np.divide(false_picks, wrong, out=np.zeros(len(k)), where=wrong > 0)
    scores = hits / k - penalty
    return np.maximum(scores, 0.0) if clamp else scores.astype(np.float64)


def mcq_mean(*, selected, correct, clamp: bool = False) -> float:
    """Mean TriDF MCQ score over questions; NaN when there are none.

    >>> mcq_mean(selected=[[1, 0], [0, 1]], correct=[[1, 0], [1, 0]])
    0.0
    """
    scores = mcq_scores(selected=selected, correct=correct, clamp=clamp)
    return float(scores.mean()) if scores.size else float("nan")
