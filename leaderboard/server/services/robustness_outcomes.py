"""Per-item outcomes of a degraded run (the headline on the clean subset and on every
condition), for the robustness board's rank intervals: ``<DATA_DIR>/outcomes/robustness-<id>.npz``.

Written by the scoring of a degraded run after its records are stored, atomically; never served
(outcomes reveal labels). Arrays are `Outcome.to_arrays` under ``<task>/<modality>/<key>/``
(``key``: ``clean`` or a condition such as ``image-jpeg-3``); the condition order is kept in
``<task>/<modality>/order`` so a board compares like with like, and each condition's positions
among the clean subset's items (it degrades its own items: docs/robustness.md) in
``<task>/<modality>/<key>/pos``. A file without positions (written before the assignment) is
not read.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from leaderboard.core.outcomes import Outcome
from leaderboard.core.robustness.layout import CLEAN
from leaderboard.server.services.outcome_store import write_npz_atomic

log = logging.getLogger(__name__)


def path_of(data_dir, submission_id: int) -> Path:
    return Path(data_dir) / "outcomes" / f"robustness-{int(submission_id)}.npz"


def write(data_dir, submission_id: int, outcomes: dict, positions: dict) -> None:
    """``outcomes``: (task, modality) -> {key: Outcome} (``clean`` first); ``positions``:
    (task, modality) -> {condition key: positions among the clean outcome's items}; none
    removes the file. Logged, never raised: only the board's rank interval of this row depends
    on it."""
    path = path_of(data_dir, submission_id)
    try:
        if not outcomes:
            path.unlink(missing_ok=True)
            return
        arrays = {}
        for (task, modality), series in outcomes.items():
            base = f"{task}/{modality}/"
            arrays[base + "order"] = np.frombuffer(json.dumps(list(series)).encode(), np.uint8)
            for key, o in series.items():
                arrays.update(o.to_arrays(f"{base}{key}/"))
                if key != CLEAN:
                    arrays[f"{base}{key}/pos"] = np.asarray(
                        positions[(task, modality)][key], dtype=np.int64)
        write_npz_atomic(path, arrays)
    except OSError:
        log.exception("robustness outcomes submission=%s could not be written", submission_id)


def read(data_dir, submission_id: int, task: str, modality: str
         ) -> dict[str, tuple[Outcome, np.ndarray | None]] | None:
    """{key: (Outcome, positions)} in the stored order (``clean`` first, its positions None),
    or None (no file, unreadable, or without positions)."""
    base = f"{task}/{modality}/"
    try:
        with np.load(path_of(data_dir, submission_id), allow_pickle=False) as z:
            if base + "order" not in z.files:
                return None
            order = json.loads(bytes(z[base + "order"]).decode())
            out = {}
            for key in order:
                prefix = f"{base}{key}/"
                pos = None
                if key != CLEAN:
                    if prefix + "pos" not in z.files:
                        return None
                    pos = np.asarray(z[prefix + "pos"], dtype=np.int64)
                out[key] = (Outcome.from_arrays({k: z[k] for k in z.files
                                                 if k.startswith(prefix)}, prefix), pos)
            return out
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError) as exc:
        log.warning("robustness outcomes submission=%s unreadable: %s", submission_id, exc)
        return None
