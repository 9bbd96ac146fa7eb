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

import gzip
import io
import math
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable

import numpy as np
import orjson

from leaderboard.core.benchmarks.base import KIND_FIELDS
from leaderboard.core.errors import LeaderboardError, PredictionError, ProblemList
from leaderboard.core.extract import NOT_AN_OPTION
from leaderboard.core.tridf_records import AuthorsRecords, is_authors_record

MAX_LINE_BYTES = 8 * 1024 * 1024
MASK_BATCH = 4096
MAX_TEXT_CHARS = 100_000
MAX_DECOMPRESSED_BYTES = 8 * 1024**3
#: past this many problems reading stops (a gzip bomb of bad lines must not keep a worker busy)
STOP_AFTER_PROBLEMS = 100_000
#: unknown ids kept to recognise a file meant for another benchmark or split
UNKNOWN_SAMPLE = 200
UTF8_BOM = b"\xef\xbb\xbf"
#: the authors' offline format is one JSON document, parsed whole: keep it bounded
MAX_OFFLINE_BYTES = 512 * 1024**2
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SPLIT_LETTERS = re.compile(r"[\s,;/]+")


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


class _Lines:
    """Binary line reader with a per-line cap and a cap on decompressed bytes."""

    def __init__(self, fh: IO[bytes]):
        self.fh, self.total = fh, 0

    def __iter__(self):
        n = 0
        while True:
            n += 1
            line = self.fh.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            self.total += len(line)
            if self.total > MAX_DECOMPRESSED_BYTES:
                raise _TooBig()
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest without keeping it
                    line = self.fh.readline(MAX_LINE_BYTES)
                    self.total += len(line)
                yield n, None
                continue
            yield n, line


class _TooBig(Exception):
    pass


def _read_capped(lines, cap: int) -> bytes:
    parts, total = [], 0
    for _, r in lines:
        total += len(r or b"")
        if total > cap:
            raise _TooBig()
        parts.append(r or b"")
    return b"".join(parts)


def _open(source) -> tuple[IO[bytes], list]:
    """The decoded byte stream and the handles to close (gzip is detected by magic bytes)."""
    raw = open(source, "rb") if isinstance(source, (str, os.PathLike)) else source
    owned = [raw] if isinstance(source, (str, os.PathLike)) else []
    fh = raw if hasattr(raw, "peek") else io.BufferedReader(raw)  # type: ignore[arg-type]
    if fh.peek(2)[:2] == b"\x1f\x8b":
        fh = gzip.GzipFile(fileobj=fh, mode="rb")
        owned.insert(0, fh)
    return fh, owned


class _Collector:
    """Per-row checks and the compact columns they fill."""

    def __init__(self, pack, split: str, problems: ProblemList):
        self.pack, self.problems = pack, problems
        self.bench = pack.benchmark
        self.items = pack.items(split)
        n = len(self.items)
        self.n = n
        self.kind_of_task = {t.key: t.kind for t in pack.tasks}
        self.task = self.items.decoded("task")
        self.present = np.zeros(n, dtype=bool)
        #: rows whose id was known but whose fields failed: already reported, not "missing"
        self.rejected = np.zeros(n, dtype=bool)
        self.line = np.zeros(n, dtype=np.int64)
        self.cols: dict[str, np.ndarray] = {}
        self.art_index = {k: i for i, k in enumerate(self.bench.artifact_keys)}
        self.keep_text = set(self.bench.keeps_text)
        self.unparsable = 0
        self._options: dict[int, dict] = {}
        self.authors = None  # TriDF: the authors' inference records, aligned by their keys
        if pack.key == "tridf":
            self.authors = AuthorsRecords(pack, split)
        self.pending_masks: list[tuple[int, int | None, object, list | None]] = []
        #: rows whose id is not in the split, and the first of those ids (a file meant for
        #: another benchmark or split is recognised from them: see `PredictionError.unknown_ids`)
        self.unknown = 0
        self.unknown_sample: list[str] = []

    def col(self, name: str, dtype, fill) -> np.ndarray:
        if name not in self.cols:
            self.cols[name] = np.full(self.n, fill, dtype=dtype)
        return self.cols[name]

    def options(self, i: int) -> dict:
        if i not in self._options:
            self._options[i] = self.items.value("options", i) or {}
        return self._options[i]

    def add(self, n: int | None, row: dict) -> None:
        p = self.problems
        rid = row.get("id")
        if rid is None and self.authors is not None and is_authors_record(row):
            row, why = self.authors.convert(row)
            if why:
                p.add(why, line=n, field="question_file")
            if row is None:  # a problem, or another split's question (skipped)
                return
            rid = row["id"]
        if not isinstance(rid, str):
            p.add("required, must be a string item id", line=n, field="id")
            return
        i = self.items.index.get(rid)
        if i is None:
            p.add(f"unknown id {rid[:80]!r} (not in this split)", line=n, field="id")
            self.unknown += 1
            if len(self.unknown_sample) < UNKNOWN_SAMPLE:
                self.unknown_sample.append(rid[:200])
            return
        if self.present[i]:
            first = f"line {self.line[i]}" if self.line[i] else "an earlier row"
            p.add(f"duplicate id {rid[:80]!r} (first seen on {first})", line=n, field="id")
            return
        kind = self.kind_of_task[str(self.task[i])]
        allowed = KIND_FIELDS[kind]
        before = p.total
        for name in row:
            if name != "id" and name not in allowed:
                p.add(f"not a field of a {kind} task; allowed: {['id', *allowed]}", line=n,
                      field=str(name)[:80])
        if p.total == before:
            getattr(self, f"_{kind}")(i, n, row)
        if p.total == before:
            self.present[i] = True
            self.line[i] = n or 0  # 0: rows that came from a ZIP member or the offline format
        else:
            self.rejected[i] = True

    def flush_masks(self) -> None:
        """Check the masks read so far; a bad one rejects its row (line and field named)."""
        if not self.pending_masks:
            return
        from leaderboard.core.metrics.masks import validate_rles

        batch, self.pending_masks = self.pending_masks, []
        errors = validate_rles([m for _, _, m, _ in batch],
                               expected_sizes=[size for _, _, _, size in batch])
        for (i, n, _, _), why in zip(batch, errors):
            if why:
                self.problems.add(why, line=n, field="mask")
                self.present[i], self.rejected[i] = False, True
                self.cols["mask"][i] = None

    # -- field checks --
    def _text(self, n: int, row: dict, name: str) -> str | None:
        v = row.get(name)
        if v is None:
            return None
        if not isinstance(v, str):
            self.problems.add(f"must be a string, got {type(v).__name__}", line=n, field=name)
            return None
        if len(v) > MAX_TEXT_CHARS:
            self.problems.add(f"longer than {MAX_TEXT_CHARS} characters", line=n, field=name)
            return None
        return v

    def _keep(self, i: int, name: str, value) -> None:
        if value is not None:
            self.col(name, object, None)[i] = value

    def _label(self, i: int, n: int, row: dict) -> None:
        v = row.get("label")
        if v is None:
            return
        if v not in ("fake", "real"):
            self.problems.add(f'must be "fake" or "real", got {str(v)[:40]!r}', line=n,
                              field="label")
            return
        self.col("label", np.int8, -1)[i] = 1 if v == "fake" else 0

    def _detection(self, i: int, n: int, row: dict) -> None:
        if row.get("label") is None and row.get("score") is None:
            self.problems.add('a detection row needs "label" or "score" (or both)', line=n,
                              field="label")
            return
        self._label(i, n, row)
        s = row.get("score")
        if s is not None:
            if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) \
                    or not 0.0 <= s <= 1.0:
                self.problems.add(f"must be a number in [0, 1], got {str(s)[:40]}", line=n,
                                  field="score")
            else:
                self.col("score", np.float64, np.nan)[i] = float(s)
        m = row.get("mask")
        if m is not None:
            size = None
            if "height" in self.items.columns and "width" in self.items.columns:
                h, w = self.items.decoded("height")[i], self.items.decoded("width")[i]
                size = [int(h), int(w)] if h >= 0 and w >= 0 else None
            # kept now, checked in batches (one vectorized pass per MASK_BATCH masks)
            self._keep(i, "mask", m)
            self.pending_masks.append((i, n, m, size))
        for name in ("rationale", "response"):
            t = self._text(n, row, name)
            if name in self.keep_text:
                self._keep(i, name, t)

    def _answer_or_response(self, i: int, n: int, row: dict, kind: str):
        ans, resp = row.get("answer"), self._text(n, row, "response")
        self._text(n, row, "rationale")
        if ans is None and resp is None:
            self.problems.add('needs "answer" or "response"', line=n, field="answer")
            return None, False
        if ans is None:
            if "response" in self.keep_text:  # read again at scoring (TriDF: the TRIDENT kit)
                self._keep(i, "response", resp)
            try:
                parsed = self.bench.extract(kind, resp, self.options(i))
            except Exception as exc:  # an extractor bug must not become a 500
                self.problems.add(f"could not read the response ({type(exc).__name__})",
                                  line=n, field="response")
                return None, True
            if parsed is None:
                self.unparsable += 1
            return parsed, True
        return ans, False

    def _yesno(self, i: int, n: int, row: dict) -> None:
        ans, from_resp = self._answer_or_response(i, n, row, "yesno")
        col = self.col("answer_yesno", np.int8, -1)
        self.col("from_response", bool, False)[i] = from_resp
        if ans is None:
            return
        v = ans.strip().lower() if isinstance(ans, str) else ans
        if v not in ("yes", "no"):
            self.problems.add(f'must be "yes" or "no", got {str(ans)[:40]!r}', line=n,
                              field="answer")
            return
        col[i] = 1 if v == "yes" else 0

    def _choice(self, i: int, n: int, row: dict) -> None:
        ans, from_resp = self._answer_or_response(i, n, row, "choice")
        col = self.col("answer_choice", "<U1", "")
        self.col("from_response", bool, False)[i] = from_resp
        if ans is None:
            return
        if from_resp and ans == NOT_AN_OPTION:  # parsed, but to no option: wrong, not unparsable
            col[i] = NOT_AN_OPTION
            return
        opts = self.options(i)
        v = ans.strip().upper() if isinstance(ans, str) else None
        if v not in opts:
            self.problems.add(f"must be one of this item's options {sorted(opts)}, got "
                              f"{str(ans)[:40]!r}", line=n, field="answer")
            return
        col[i] = v

    def _multiselect(self, i: int, n: int, row: dict) -> None:
        ans, from_resp = self._answer_or_response(i, n, row, "multiselect")
        col = self.col("selected_bits", np.uint32, 0)
        self.col("from_response", bool, False)[i] = from_resp
        answered = self.col("answered", bool, False)
        if ans is None:
            return
        if isinstance(ans, str):
            ans = [a for a in _SPLIT_LETTERS.split(ans.strip()) if a]
            if len(ans) == 1 and len(ans[0]) > 1 and ans[0].isalpha():
                ans = list(ans[0])
        if not isinstance(ans, list) or not all(isinstance(a, str) for a in ans):
            self.problems.add('must be a list of option letters, e.g. ["A", "C"]', line=n,
                              field="answer")
            return
        opts = self.options(i)
        bits = 0
        for a in ans:
            a = a.strip().upper()
            if a not in opts:
                self.problems.add(f"{a[:10]!r} is not an option of this item {sorted(opts)}",
                                  line=n, field="answer")
                return
            bits |= 1 << _LETTERS.index(a)
        col[i] = bits
        answered[i] = True

    def _explanation(self, i: int, n: int, row: dict) -> None:
        resp = self._text(n, row, "response")
        self._text(n, row, "rationale")
        if resp is None:
            if "response" not in row:
                self.problems.add("required for an explanation task", line=n, field="response")
            return
        self._keep(i, "response", resp)

    def _artifacts(self, i: int, n: int, row: dict) -> None:
        arts, resp = row.get("artifacts"), self._text(n, row, "response")
        self._text(n, row, "rationale")
        if arts is None and resp is None:
            self.problems.add('needs "artifacts" (taxonomy keys) or "response"', line=n,
                              field="artifacts")
            return
        self._label(i, n, row)
        self._keep(i, "response", resp)
        bits = self.col("artifact_bits", np.uint32, 0)
        self.col("self_mapped", bool, False)
        if arts is not None:
            if not isinstance(arts, list) or not all(isinstance(a, str) for a in arts):
                self.problems.add("must be a list of artifact keys", line=n, field="artifacts")
                return
            unknown = [a for a in arts if a not in self.art_index]
            if unknown:
                self.problems.add(f"unknown artifact keys {[u[:40] for u in unknown[:5]]}; "
                                  f"allowed: {list(self.art_index)}", line=n, field="artifacts")
                return
            b = 0
            for a in arts:
                b |= 1 << self.art_index[a]
            bits[i] = b
            self.cols["self_mapped"][i] = True


def _authors_format(pack, split: str, docs: list, labels, col: _Collector,
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
    col = _Collector(pack, split, problems)
    rows = 0
    stopped_at = None
    docs: list | None = None   # the authors' documents, when the file is in their format
    offline = pack.benchmark.accepts_offline_format
    if pack.key == "tridf" and _is_zip(source):
        return _validate_zip(pack, split, source, col, problems)
    try:
        fh, owned = _open(source)
    except OSError as exc:
        raise PredictionError(f"cannot read the predictions file: {exc.strerror or exc}") from None
    try:
        lines = iter(_Lines(fh))
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
                    rest = raw + _read_capped(lines, MAX_OFFLINE_BYTES)
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
    except _TooBig:
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


def _unknown_summary(col: _Collector, rows: int, split: str) -> str:
    """The line that comes before the list when ids are not in the split ("42 of 50 rows ...")."""
    if not col.unknown:
        return ""
    return (f"{col.unknown} of {rows} rows have ids that are not in the {split} split of "
            f"{col.pack.key}; ")


def _with_unknown(err: PredictionError, col: _Collector) -> PredictionError:
    err.unknown_ids = list(col.unknown_sample)
    return err


def _is_zip(source) -> bool:
    if not isinstance(source, (str, os.PathLike)):
        return False
    try:
        with open(source, "rb") as fh:
            return fh.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def _validate_zip(pack, split: str, source, col: _Collector,
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


def _coverage(pack, col: _Collector, problems: ProblemList) -> list[tuple[str, str]]:
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


def _finish(pack, col: _Collector) -> dict[str, np.ndarray]:
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
    shifts = np.array([_LETTERS.index(c) for c in letters], dtype=np.uint32)
    return ((bits[:, None] >> shifts) & 1).astype(bool)


def open_predictions(path: str | Path) -> IO[bytes]:
    """Open a predictions file (gzip or plain) for reading as bytes; the caller closes it."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")
