"""Columnar tables compiled once from a pack's JSONL rows.

Scoring never re-parses label JSON: ``labels.jsonl`` is compiled into a `Table` (numpy arrays plus
an id index) that serializes to a single ``.npz`` byte string without pickle. The server encrypts
those bytes at rest; the offline scorer keeps them in ``<pack>/.cache/``.

Column encodings (``Field.type``):

========== =========================================== ===========================================
type       stored                                      decoded for scorers (`Table.decoded`)
========== =========================================== ===========================================
category   int32 codes into ``vocab`` (-1 = missing)    ``<U`` array, "" = missing
float      float64, NaN = missing                       same
int        int64, -1 = missing                          same
bool       int8: 1/0, -1 = missing                      same
tags       uint8 matrix n x len(choices)                bool matrix (column order = Field.choices)
text       utf-8 blob + int64 offsets                   object array of str / None
json       compact JSON text, as ``text``               object array of parsed values / None
rle        counts text + (n, 2) int32 sizes             object array of {"size", "counts"} / None
========== =========================================== ===========================================
"""
from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from leaderboard.core.benchmarks.base import Field

_FORMAT = 1


@dataclass
class Column:
    type: str
    data: np.ndarray
    present: np.ndarray
    vocab: tuple[str, ...] = ()
    blob: bytes = b""
    sizes: np.ndarray | None = None

    def decoded(self) -> np.ndarray:
        t = self.type
        if t == "category":
            width = max((len(v) for v in self.vocab), default=1)
            lut = np.array(list(self.vocab) + [""], dtype=f"<U{max(width, 1)}")
            return lut[self.data]  # code -1 picks the trailing ""
        if t in ("float", "int", "bool"):
            return self.data
        if t == "tags":
            return self.data.astype(bool)
        if t in ("text", "json", "rle"):
            out = np.empty(len(self.present), dtype=object)
            offs = self.data
            for i in np.flatnonzero(self.present):
                s = self.blob[offs[i]:offs[i + 1]].decode("utf-8")
                if t == "json":
                    out[i] = json.loads(s)
                elif t == "rle":
                    h, w = (int(x) for x in self.sizes[i])
                    out[i] = {"size": [h, w], "counts": s}
                else:
                    out[i] = s
            return out
        raise ValueError(f"unknown column type {t!r}")


@dataclass
class Table:
    """Rows of one split's items or labels. ``ids[i]`` is row i; ``index`` maps id -> row."""

    ids: np.ndarray
    columns: dict[str, Column]
    index: dict[str, int] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    _decoded: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.index:
            self.index = {str(x): i for i, x in enumerate(self.ids.tolist())}

    def __len__(self) -> int:
        return len(self.ids)

    def decoded(self, name: str) -> np.ndarray:
        """The decoded column (memoized: scoring the same pack twice decodes once)."""
        if name not in self._decoded:
            self._decoded[name] = self.columns[name].decoded()
        return self._decoded[name]

    def value(self, name: str, row: int):
        """One decoded cell; cheap for text columns (does not decode the whole column)."""
        col = self.columns[name]
        if col.type in ("text", "json", "rle"):
            if not col.present[row]:
                return None
            s = col.blob[col.data[row]:col.data[row + 1]].decode("utf-8")
            if col.type == "json":
                return json.loads(s)
            if col.type == "rle":
                return {"size": [int(x) for x in col.sizes[row]], "counts": s}
            return s
        return self.decoded(name)[row]

    # -- serialization (no pickle: safe to load from an untrusted cache) --
    def to_bytes(self) -> bytes:
        header = {"format": _FORMAT, "meta": self.meta, "columns": {}}
        arrays: dict[str, np.ndarray] = {"ids": np.asarray(self.ids, dtype=str)}
        for name, col in self.columns.items():
            header["columns"][name] = {"type": col.type, "vocab": list(col.vocab)}
            arrays[f"d:{name}"] = col.data
            arrays[f"p:{name}"] = col.present
            if col.blob:
                arrays[f"b:{name}"] = np.frombuffer(col.blob, dtype=np.uint8)
            if col.sizes is not None:
                arrays[f"s:{name}"] = col.sizes
        arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Table":
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            header = json.loads(z["header"].tobytes().decode())
            if header.get("format") != _FORMAT:
                raise ValueError("table cache format changed; rebuild it")
            cols = {}
            for name, spec in header["columns"].items():
                blob_key, sizes_key = f"b:{name}", f"s:{name}"
                cols[name] = Column(
                    type=spec["type"], data=z[f"d:{name}"], present=z[f"p:{name}"],
                    vocab=tuple(spec["vocab"]),
                    blob=z[blob_key].tobytes() if blob_key in z.files else b"",
                    sizes=z[sizes_key] if sizes_key in z.files else None)
            return cls(ids=z["ids"], columns=cols, meta=header["meta"])


class _Builder:
    """Accumulates one column's cells, then encodes them (see the module table)."""

    def __init__(self, name: str, spec: Field, n: int):
        self.name, self.spec, self.n = name, spec, n
        self.cells: list = [None] * n

    def build(self) -> Column:
        t, cells, n = self.spec.type, self.cells, self.n
        present = np.array([c is not None for c in cells], dtype=bool)
        if t == "category":
            vocab = list(self.spec.choices or sorted({c for c in cells if c is not None}))
            lut = {v: i for i, v in enumerate(vocab)}
            codes = np.fromiter((lut[c] if c is not None else -1 for c in cells), np.int32, n)
            return Column(t, codes, present, tuple(vocab))
        if t == "float":
            return Column(t, np.array([math.nan if c is None else float(c) for c in cells],
                                      dtype=np.float64), present)
        if t == "int":
            return Column(t, np.array([-1 if c is None else int(c) for c in cells],
                                      dtype=np.int64), present)
        if t == "bool":
            return Column(t, np.array([-1 if c is None else int(bool(c)) for c in cells],
                                      dtype=np.int8), present)
        if t == "tags":
            vocab = list(self.spec.choices or ())
            lut = {v: i for i, v in enumerate(vocab)}
            mat = np.zeros((n, len(vocab)), dtype=np.uint8)
            for i, c in enumerate(cells):
                for v in c or ():
                    mat[i, lut[v]] = 1
            return Column(t, mat, present, tuple(vocab))
        if t in ("text", "json", "rle"):
            parts, offs, sizes = [], np.zeros(n + 1, dtype=np.int64), None
            if t == "rle":
                sizes = np.zeros((n, 2), dtype=np.int32)
            pos = 0
            for i, c in enumerate(cells):
                if c is not None:
                    if t == "json":
                        s = json.dumps(c, separators=(",", ":"), ensure_ascii=False)
                    elif t == "rle":
                        s = c["counts"]
                        sizes[i] = c["size"]
                    else:
                        s = c
                    b = s.encode("utf-8")
                    parts.append(b)
                    pos += len(b)
                offs[i + 1] = pos
            return Column(t, offs, present, blob=b"".join(parts), sizes=sizes)
        raise ValueError(f"unknown field type {t!r} for {self.name!r}")


def check_cell(value, spec: Field) -> str | None:
    """Why ``value`` does not fit ``spec`` (None when it fits). Never raises."""
    t = spec.type
    if t == "category":
        if not isinstance(value, str):
            return f"must be a string, got {type(value).__name__}"
        if spec.choices is not None and value not in spec.choices:
            return f"must be one of {list(spec.choices)}, got {value!r}"
    elif t in ("float", "int"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be a number, got {type(value).__name__}"
        if not math.isfinite(value):
            return "must be a finite number"
        if t == "int" and float(value) != int(value):
            return f"must be an integer, got {value!r}"
    elif t == "bool":
        if not isinstance(value, bool):
            return f"must be true or false, got {value!r}"
    elif t == "tags":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "must be a list of strings"
        bad = [v for v in value if spec.choices is not None and v not in spec.choices]
        if bad:
            return f"unknown values {bad[:5]}; allowed: {list(spec.choices)}"
    elif t == "text":
        if not isinstance(value, str):
            return f"must be a string, got {type(value).__name__}"
    elif t == "rle":
        from leaderboard.core.metrics.masks import validate_rle

        return validate_rle(value)
    return None


def build_table(n: int, fields: dict[str, Field]) -> tuple[dict[str, _Builder], Callable]:
    """Builders for ``n`` rows; returns (builders, finish(ids, meta) -> Table)."""
    builders = {name: _Builder(name, spec, n) for name, spec in fields.items()}

    def finish(ids: list[str], meta: dict) -> Table:
        cols = {name: b.build() for name, b in builders.items()}
        return Table(ids=np.asarray(ids, dtype=str), columns=cols, meta=meta)

    return builders, finish
