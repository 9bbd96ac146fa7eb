"""The stored per-row numbers of the generators view (issue 37's matrix at 1,000 x 40 x 3).

A row of the detectors x generators matrix (`leaderboard.server.boards.generators.row_numbers`:
its cells, seen, unseen and gap with their bootstrap CIs) depends only on the submission's
outcome file, the benchmark's generators table and the day the row counts as made; not on the
other rows of the board. So it is computed once per

    (submission, part, task, headline metric, generators table, made day, outcome format,
     bootstrap settings, code version)

and kept in ``<DATA_DIR>/generator_rows/<submission id>.json`` (one small JSON object per
submission, every key it was asked for), stamped with the outcome file's identity (inode,
size, mtime): a rescoring replaces the outcome file, so its old numbers no longer match and
the file is started afresh. A new submission on a board, or a cleared board cache, then costs
the view reading its rows' files, never bootstrapping them again; the scoring job fills the
file right after the outcomes (`generators.prepare_rows`), so even the new row is ready.

Each process also keeps the entries it read (`MEMO_ROWS`, least recently used dropped): a
warm process rebuilding a view after another row changed reads no file but the changed one.

The file holds aggregates only (the same numbers the API publishes), never per-item outcomes.
A file that cannot be read or written is as if absent: the view computes the row itself.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import uuid
from collections import OrderedDict
from pathlib import Path

log = logging.getLogger(__name__)

#: bump when `row_numbers` changes what it returns: every stored row is recomputed
VERSION = "1"
#: entries a process keeps in memory (a 1,000-row board x 3 releases x 2 modes fits)
MEMO_ROWS = 8192

_memo: OrderedDict = OrderedDict()
_lock = threading.Lock()


def path_of(data_dir, submission_id: int) -> Path:
    return Path(data_dir) / "generator_rows" / f"{int(submission_id)}.json"


def outcome_stamp(outcome_path: Path) -> str | None:
    """The outcome file's identity (inode, size, mtime in ns); None when there is none."""
    try:
        st = os.stat(outcome_path)
    except OSError:
        return None
    return f"{st.st_ino}-{st.st_size}-{st.st_mtime_ns}"


def table_digest(table: list[dict]) -> str:
    """A digest of a benchmark's generators table (keys, names, dates: the columns' order and
    the seen/unseen split)."""
    return hashlib.blake2s(json.dumps(sorted(json.dumps(g, sort_keys=True) for g in table))
                           .encode(), digest_size=12).hexdigest()


def key_of(*, part: str, task: str, metric: str, table: str, made: str, method: str) -> str:
    """The entry's key: everything but the outcome file a row's numbers depend on (``table``:
    its `table_digest`; ``method``: the outcome format and bootstrap settings)."""
    return hashlib.blake2s(json.dumps([VERSION, part, task, metric, made, table, method])
                           .encode(), digest_size=12).hexdigest()


def get(data_dir, submission_id: int, stamp: str, key: str) -> dict | None:
    """The stored entry, or None (not computed for this outcome file and key)."""
    memo_key = (str(data_dir), int(submission_id), key)
    with _lock:
        hit = _memo.get(memo_key)
        if hit is not None and hit[0] == stamp:
            _memo.move_to_end(memo_key)
            return hit[1]
    stored = _read(data_dir, submission_id)
    if stored.get("stamp") != stamp:
        return None
    entry = stored.get("entries", {}).get(key)
    if entry is not None:
        _remember(memo_key, stamp, entry)
    return entry


def put(data_dir, submission_id: int, stamp: str, key: str, entry: dict) -> None:
    """Store ``entry`` (JSON-able) under ``key`` for the outcome file ``stamp``; entries of an
    older outcome file are dropped. Never raises: a failed write only costs a recomputation."""
    _remember((str(data_dir), int(submission_id), key), stamp, entry)
    stored = _read(data_dir, submission_id)
    entries = stored.get("entries", {}) if stored.get("stamp") == stamp else {}
    entries[key] = entry
    path = path_of(data_dir, submission_id)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"stamp": stamp, "entries": entries}))
        os.replace(tmp, path)  # a reader sees the old file or the new one
    except OSError:
        log.exception("generator rows submission=%s could not be written", submission_id)
    finally:
        tmp.unlink(missing_ok=True)


def delete(data_dir, submission_id: int) -> None:
    path_of(data_dir, submission_id).unlink(missing_ok=True)


def _read(data_dir, submission_id: int) -> dict:
    try:
        data = json.loads(path_of(data_dir, submission_id).read_text())
        return data if isinstance(data, dict) else {}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # truncated or foreign: as if absent
        log.warning("generator rows submission=%s unreadable: %s", submission_id, exc)
        return {}


def _remember(memo_key, stamp: str, entry: dict) -> None:
    with _lock:
        _memo[memo_key] = (stamp, entry)
        _memo.move_to_end(memo_key)
        while len(_memo) > MEMO_ROWS:
            _memo.popitem(last=False)
