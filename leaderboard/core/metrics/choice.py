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


def mcq_scores(*, selected, correct, clamp: bool = False, offered=None) -> np.ndarray:
    """Per-question TriDF MCQ score; ``selected`` and ``correct`` are bool matrices n x M.

    ``offered`` (bool n x M, default all True) marks the options each question actually lists: M
    is counted per question, as the authors count each question's lettered lines
    (``_infer_mcq_total_options`` in TRIDENT's ``evaluate_predictions.py``, ``mc_option_letters``
    in TriDF's ``score_perception_original.py``), so a task mixing A-D and A-E questions scores
    each with its own M. Selected or correct options outside ``offered`` are invalid.

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
    >>> mcq_scores(selected=[[1, 1, 0, 0, 0]], correct=[[1, 0, 0, 0, 0]],
    ...            offered=[[1, 1, 1, 1, 0]]).tolist()   # four options listed: 1 - 1/3
    [0.6666666666666667]
    """
    sel = bool_matrix("selected", selected)
    cor = bool_matrix("correct", correct)
    if sel.shape != cor.shape:
        raise ValueError(f"selected and correct must have the same shape, got {sel.shape} and {cor.shape}")
    if not isinstance(clamp, (bool, np.bool_)):
        raise ValueError(f"clamp must be a bool, got {clamp!r}")
    if offered is None:
        off = np.ones(cor.shape, dtype=bool)
    else:
        off = bool_matrix("offered", offered)
        if off.shape != cor.shape:
            raise ValueError(f"offered must have the shape of correct {cor.shape}, got {off.shape}")
        outside = ((sel | cor) & ~off).any(axis=1)
        if outside.any():
            row = int(np.flatnonzero(outside)[0])
            raise ValueError(f"row {row} selects or marks correct an option it does not offer")
    n_options = off.sum(axis=1)
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
