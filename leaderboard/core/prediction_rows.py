"""Per-row checks of a predictions file and the compact columns they fill (design.md,
"Predictions"): each row's id is looked up in the split, its fields checked against its task's
kind (`KIND_FIELDS`), and only numbers, bit masks and the free text a scorer needs are kept.
Every problem names its line and field (`ProblemList`); `leaderboard.core.predictions` drives it.
"""
from __future__ import annotations

import math
import re

import numpy as np

from leaderboard.core.benchmarks.base import KIND_FIELDS
from leaderboard.core.errors import ProblemList, describe
from leaderboard.core.extract import NOT_AN_OPTION
from leaderboard.core.tridf_records import AuthorsRecords, is_authors_record

MASK_BATCH = 4096
MAX_TEXT_CHARS = 100_000
#: unknown ids kept to recognise a file meant for another benchmark or split
UNKNOWN_SAMPLE = 200
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SPLIT_LETTERS = re.compile(r"[\s,;/]+")


def _numeric(value) -> bool:
    """Whether ``value`` is a string that reads as a number (a score written with quotes)."""
    if not isinstance(value, str):
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


class RowCollector:
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
            if "id" not in row:
                p.add("required, must be a string item id", line=n, field="id")
            elif rid is None:
                p.add("is null: every row needs its item's id (a string)", line=n, field="id")
            else:
                p.add(f"must be a string item id, got {describe(rid)}", line=n, field="id")
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
            self.problems.add(f"must be a string, got {describe(v)}", line=n, field=name)
            return None
        if len(v) > MAX_TEXT_CHARS:
            self.problems.add(f"longer than {MAX_TEXT_CHARS} characters", line=n, field=name)
            return None
        return v

    def _needs(self, n: int, row: dict, names: tuple[str, ...], what: str) -> None:
        """A row that gives none of ``names``: the problem says which of them it gave as null
        (``"response": null`` is a null response, not a missing one), on the first such field."""
        nulls = [k for k in names if k in row and row[k] is None]
        if nulls:
            what = " and ".join(f"{k} is null" for k in nulls) + f": {what}"
        self.problems.add(what, line=n, field=(nulls or names)[0])

    def _keep(self, i: int, name: str, value) -> None:
        if value is not None:
            self.col(name, object, None)[i] = value

    def _label(self, i: int, n: int, row: dict) -> None:
        v = row.get("label")
        if v is None:
            return
        if v not in ("fake", "real"):
            self.problems.add(f'must be "fake" or "real", got {describe(v)}', line=n,
                              field="label")
            return
        self.col("label", np.int8, -1)[i] = 1 if v == "fake" else 0

    def _detection(self, i: int, n: int, row: dict) -> None:
        if row.get("label") is None and row.get("score") is None:
            self._needs(n, row, ("label", "score"), 'a detection row needs "label" or "score" '
                        "(or both)")
            return
        self._label(i, n, row)
        s = row.get("score")
        if s is not None:
            if isinstance(s, bool) or not isinstance(s, (int, float)):
                self.problems.add(f"must be a number, got {describe(s)}"
                                  + (" (write numbers without quotes)" if _numeric(s) else ""),
                                  line=n, field="score")
            elif not math.isfinite(s) or not 0.0 <= s <= 1.0:
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
            if row.get("response") is None:  # else _text said why the response is unusable
                self._needs(n, row, ("answer", "response"), 'needs "answer" or "response"')
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
            self.problems.add(f'must be "yes" or "no", got {describe(ans)}', line=n,
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
                              f"{describe(ans)}", line=n, field="answer")
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
            self.problems.add('must be a list of option letters, e.g. ["A", "C"], got '
                              f"{describe(ans)}", line=n, field="answer")
            return
        opts = self.options(i)
        bits = 0
        for a in ans:
            a = a.strip().upper()
            if a not in opts:
                self.problems.add(f"{a[:10]!r} is not an option of this item {sorted(opts)}",
                                  line=n, field="answer")
                return
            bits |= 1 << LETTERS.index(a)
        col[i] = bits
        answered[i] = True

    def _explanation(self, i: int, n: int, row: dict) -> None:
        resp = self._text(n, row, "response")
        self._text(n, row, "rationale")
        if resp is None:
            if "response" not in row:
                self.problems.add("required for an explanation task", line=n, field="response")
            elif row["response"] is None:
                self.problems.add("is null: an explanation task needs the response text",
                                  line=n, field="response")
            return
        self._keep(i, "response", resp)

    def _artifacts(self, i: int, n: int, row: dict) -> None:
        arts, resp = row.get("artifacts"), self._text(n, row, "response")
        self._text(n, row, "rationale")
        if arts is None and resp is None:
            if row.get("response") is not None:
                return  # a response that is not usable text: _text said why
            self._needs(n, row, ("artifacts", "response"),
                        'needs "artifacts" (taxonomy keys) or "response"')
            return
        self._label(i, n, row)
        self._keep(i, "response", resp)
        bits = self.col("artifact_bits", np.uint32, 0)
        self.col("self_mapped", bool, False)
        if arts is not None:
            if not isinstance(arts, list) or not all(isinstance(a, str) for a in arts):
                self.problems.add(f"must be a list of artifact keys, got {describe(arts)}",
                                  line=n, field="artifacts")
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
