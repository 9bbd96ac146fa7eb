"""Where each submission's per-item outcomes live: ``<DATA_DIR>/outcomes/<submission id>.npz``.

One file per submission, holding every (part, task) `leaderboard.core.outcomes.Outcome` of its
last scoring (flat arrays and a JSON header per entry, no pickle; 0/1 outcomes as bits). The
scoring job (and the judge job, which rescores) writes it right after the scores are committed and
before the boards are invalidated; a rescoring replaces it atomically (a reader sees the old
file or the new one); an invalid file or a deleted submission removes it.

These files reveal labels (the strata are the classes): they are read only by the board's rank
intervals and the paired comparison, which publish aggregates, and no route serves them.
"""
from __future__ import annotations

import io
import logging
import os
import uuid
from pathlib import Path

import numpy as np

from leaderboard.core.outcomes import FORMAT_VERSION, Outcome

log = logging.getLogger(__name__)

_VERSION_KEY = "format_version"


def path_of(data_dir: str | os.PathLike, submission_id: int) -> Path:
    return Path(data_dir) / "outcomes" / f"{int(submission_id)}.npz"


def write(data_dir: str | os.PathLike, submission_id: int,
          outcomes: dict[str, dict[str, Outcome]]) -> Path | None:
    """Replace the submission's outcome file with ``outcomes`` (part -> task -> Outcome);
    with none, remove it. Returns the path written, or None."""
    path = path_of(data_dir, submission_id)
    if not any(outcomes.values()):
        delete(data_dir, submission_id)
        return None
    arrays: dict[str, np.ndarray] = {
        _VERSION_KEY: np.frombuffer(FORMAT_VERSION.encode(), dtype=np.uint8)}
    for part, per_task in outcomes.items():
        for task, outcome in per_task.items():
            arrays.update(outcome.to_arrays(f"{part}/{task}/"))
    write_npz_atomic(path, arrays)
    return path


def write_npz_atomic(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as a compressed npz at ``path`` in one rename: a reader sees the old
    file or the new one, never half of it (OSError for the caller to handle)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        tmp.write_bytes(buf.getvalue())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read(data_dir: str | os.PathLike, submission_id: int, *, part: str | None = None,
         task: str | None = None) -> dict[str, dict[str, Outcome]]:
    """The stored outcomes of a submission (part -> task -> Outcome), only ``part``'s and
    ``task``'s when given (the other arrays are not decompressed); {} when there is no file, or
    it was written in another format version (rescoring brings it back)."""
    path = path_of(data_dir, submission_id)
    try:
        with np.load(path, allow_pickle=False) as z:
            if bytes(z[_VERSION_KEY]).decode() != FORMAT_VERSION:
                return {}
            wanted = [k for k in z.files if k.endswith("/meta")
                      and (part is None or k.split("/")[0] == part)
                      and (task is None or k.split("/")[1] == task)]
            out: dict[str, dict[str, Outcome]] = {}
            for key in wanted:
                p, t, _ = key.split("/")
                prefix = f"{p}/{t}/"
                arrays = {k: z[k] for k in z.files if k.startswith(prefix)}
                out.setdefault(p, {})[t] = Outcome.from_arrays(arrays, prefix)
            return out
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError) as exc:  # truncated or foreign file: as if absent
        log.warning("outcomes submission=%s unreadable: %s", submission_id, exc)
        return {}


def read_one(data_dir, submission_id: int, part: str, task: str) -> Outcome | None:
    return read(data_dir, submission_id, part=part, task=task).get(part, {}).get(task)


def delete(data_dir: str | os.PathLike, submission_id: int) -> None:
    path_of(data_dir, submission_id).unlink(missing_ok=True)


def save_result(data_dir, submission_id: int, result) -> None:
    """Write a scoring result's outcomes; a failure is logged, never raised: the scores are
    already stored, and only the row's rank interval is missing until it is rescored."""
    try:
        write(data_dir, submission_id, getattr(result, "outcomes", {}) or {})
    except OSError:
        log.exception("outcomes submission=%s could not be written", submission_id)
