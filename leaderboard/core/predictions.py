"""Streaming validation of a predictions file (design.md, "Predictions").

JSONL, optionally gzip (detected by its magic bytes, not its name): one row per item, ``id`` plus
the task's fields. The file is read line by line and only compact columns are kept (numbers, bit
masks, and the free text a scorer needs), so a 1 GB file validates in flat memory. Every problem
names its line and field; at most 50 are listed, all are counted; whatever the bytes, the outcome is
a `PredictionSet` or a `PredictionError`, never another exception.

A submission is scored on every (task, modality) block it covers completely; a block covered in
part is an error that names the missing ids.
"""
from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, field
from typing import IO, Callable

import numpy as np
import orjson

from leaderboard.core.errors import LeaderboardError, PredictionError, ProblemList
from leaderboard.core.prediction_io import (  # noqa: F401  (open_predictions: part of this API)
    MAX_DECOMPRESSED_BYTES,
    MAX_LINE_BYTES,
    UTF8_BOM,
    Lines,
    TooBig,
    is_zip,
    open_predictions,
    open_stream,
    read_capped,
)
from leaderboard.core.prediction_rows import LETTERS, MASK_BATCH, RowCollector

#: past this many problems reading stops (a gzip bomb of bad lines must not keep a worker busy)
STOP_AFTER_PROBLEMS = 100_000
#: the authors' offline format is one JSON document, parsed whole: keep it bounded
MAX_OFFLINE_BYTES = 512 * 1024**2


@dataclass
class PredictionSet:
    """Validated predictions aligned to the split's item rows (row i = ``items.ids[i]``)."""

    n_items: int
    present: np.ndarray
    columns: dict[str, np.ndarray]
    covered: list[tuple[str, str]] = field(default_factory=list)  # (task, modality) blocks
    rows: int = 0
    unparsable: int = 0
    notes: list[str] = field(default_factory=list)   # e.g. how the authors' format was aligned


def _authors_format(pack, split: str, docs: list, labels, col: RowCollector,
                    problems: ProblemList) -> tuple[int, list[str]]:
    """Add the rows of the authors' documents (`leaderboard.core.authors_format`)."""
    from leaderboard.core.authors_format import authors_rows

    if labels is None:
        try:
            labels = pack.labels(split)
        except (OSError, LeaderboardError):
            problems.add("the authors' format is aligned through the split's hidden labels, "
                         "which this copy of the pack does not have; submit it to the server",
                         field="responses")
            return 0, []
    rows, notes = authors_rows(pack, split, docs, labels, problems)
    for r in rows:
        col.add(None, r)
    return len(rows), notes


def validate_predictions(pack, split: str, source: str | os.PathLike | IO[bytes], *,
                         labels=None, progress: Callable[[int], None] | None = None
                         ) -> PredictionSet:
    """Validate a predictions file against ``pack``'s ``split``; raise `PredictionError`.

    ``labels``: the split's compiled hidden labels (the server's decrypted copy); only the authors'
    format reads them (to align responses by file and index); default: the pack's labels file.
    """
    problems = ProblemList()
    col = RowCollector(pack, split, problems)
    rows = 0
    stopped_at = None
    docs: list | None = None   # the authors' documents, when the file is in their format
    offline = pack.benchmark.accepts_offline_format
    if pack.key == "tridf" and is_zip(source):
        return _validate_zip(pack, split, source, col, problems)
    try:
        fh, owned = open_stream(source)
    except OSError as exc:
        raise PredictionError(f"cannot read the predictions file: {exc.strerror or exc}") from None
    try:
        lines = iter(Lines(fh))
        first = True
        for n, raw in lines:
            if progress and n % 10000 == 0:
                progress(n)
            if problems.total >= STOP_AFTER_PROBLEMS:
                stopped_at = n
                break
            if raw is None:
                problems.add(f"line longer than {MAX_LINE_BYTES} bytes", line=n)
                continue
            if n == 1 and raw.startswith(UTF8_BOM):
                raw = raw[len(UTF8_BOM):]  # Windows editors write one; it is not an error
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                # a pretty-printed {"model", "responses"} document starts with a lone "{"
                if first and raw.strip() == b"{" and offline:
                    rest = raw + read_capped(lines, MAX_OFFLINE_BYTES)
                    try:
                        doc = orjson.loads(rest)
                    except orjson.JSONDecodeError:
                        doc = None
                    if isinstance(doc, dict) and "responses" in doc:
                        docs = [(None, doc)]
                        break
                msg = str(exc)
                problems.add("invalid UTF-8" if "UTF-8" in msg or "utf-8" in msg
                             else f"not valid JSON ({msg.split(':')[0][:120]})", line=n)
                continue
            if first and offline and isinstance(row, dict) and "responses" in row \
                    and "id" not in row:
                docs = []   # the authors' documents, one per line, from here on
            first = False
            if docs is not None:
                docs.append((n, row))
                continue
            if not isinstance(row, dict):
                problems.add("each line must be a JSON object", line=n)
                continue
            rows += 1
            col.add(n, row)
            if len(col.pending_masks) >= MASK_BATCH:
                col.flush_masks()
    except TooBig:
        problems.add(f"the file decompresses to more than {MAX_DECOMPRESSED_BYTES} bytes")
    except (OSError, EOFError, zlib.error) as exc:  # truncated or corrupt gzip
        problems.add(f"the file could not be read to the end: {exc}")
    finally:
        for h in owned:
            h.close()
    notes: list[str] = []
    if docs is not None and not problems:
        rows, notes = _authors_format(pack, split, docs, labels, col, problems)
    if rows == 0 and not problems:
        problems.add("the file has no predictions")
    col.flush_masks()
    if stopped_at is not None:
        raise _with_unknown(PredictionError(
            f"{_unknown_summary(col, rows, split)}{problems.total} problems in the first "
            f"{stopped_at - 1} lines; stopped reading at line {stopped_at}: fix the ones listed "
            "and submit again", problems), col)
    covered = _coverage(pack, col, problems)
    if problems:
        raise _with_unknown(PredictionError(
            f"{_unknown_summary(col, rows, split)}{problems.total} problem(s) in the predictions "
            "file", problems), col)
    return PredictionSet(col.n, col.present, _finish(pack, col), covered, rows, col.unparsable,
                         notes)


def _unknown_summary(col: RowCollector, rows: int, split: str) -> str:
    """The line that comes before the list when ids are not in the split ("42 of 50 rows ...")."""
    if not col.unknown:
        return ""
    return (f"{col.unknown} of {rows} rows have ids that are not in the {split} split of "
            f"{col.pack.key}; ")


def _with_unknown(err: PredictionError, col: RowCollector) -> PredictionError:
    err.unknown_ids = list(col.unknown_sample)
    return err


def _validate_zip(pack, split: str, source, col: RowCollector,
                  problems: ProblemList) -> PredictionSet:
    """TriDF's challenge ZIP (four JSONL members): rows converted, then checked as any upload."""
    from leaderboard.core.tridf_zip import zip_to_rows

    rows = 0
    for row in zip_to_rows(source, pack, split):  # raises PredictionError naming member + line
        col.add(None, row)
        rows += 1
    col.flush_masks()
    covered = _coverage(pack, col, problems)
    if problems:
        raise PredictionError(f"{problems.total} problem(s) in the predictions ZIP", problems)
    return PredictionSet(col.n, col.present, _finish(pack, col), covered, rows, col.unparsable)


def _coverage(pack, col: RowCollector, problems: ProblemList) -> list[tuple[str, str]]:
    items = col.items
    task, modality = col.task, items.decoded("modality")
    covered = []
    for t in pack.tasks:
        for m in t.modalities:
            rows = np.flatnonzero((task == t.key) & (modality == m))
            if len(rows) == 0:
                continue
            have = col.present[rows]
            seen = have | col.rejected[rows]  # a rejected row is reported once, not as missing
            if have.all():
                covered.append((t.key, m))
            elif seen.any() and not seen.all():
                missing = items.ids[rows[~seen]]
                problems.add(f"block ({t.key}, {m}) is covered only in part: {len(missing)} of "
                             f"{len(rows)} ids missing, e.g. {list(map(str, missing[:50]))}",
                             field="id")
    if not covered and not problems:
        problems.add("the file covers no (task, modality) block completely")
    return covered


def _finish(pack, col: RowCollector) -> dict[str, np.ndarray]:
    cols = dict(col.cols)
    if "label" in cols or "score" in cols:
        label = cols.setdefault("label", np.full(col.n, -1, dtype=np.int8))
        score = cols.setdefault("score", np.full(col.n, np.nan))
        cols["has_score"] = ~np.isnan(score)
        cols["decision"] = np.where(label >= 0, label == 1, score >= 0.5)
    if "artifact_bits" in cols:
        bits = cols.pop("artifact_bits")
        k = len(pack.benchmark.artifact_keys)
        cols["artifacts"] = ((bits[:, None] >> np.arange(k, dtype=np.uint32)) & 1).astype(bool)
    if "selected_bits" in cols:
        cols["selected_bits"] = cols["selected_bits"]
    return cols


def letters_of(pack, split: str, rows: np.ndarray) -> str:
    """Sorted option letters used by the given item rows (multiselect column order)."""
    items = pack.items(split)
    seen: set[str] = set()
    for i in rows.tolist():
        seen.update((items.value("options", i) or {}).keys())
    return "".join(sorted(seen))


def selected_matrix(bits: np.ndarray, letters: str) -> np.ndarray:
    """Bool matrix n x len(letters) from per-row letter bit masks."""
    shifts = np.array([LETTERS.index(c) for c in letters], dtype=np.uint32)
    return ((bits[:, None] >> shifts) & 1).astype(bool)
