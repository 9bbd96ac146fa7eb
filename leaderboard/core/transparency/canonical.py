"""The canonical byte encoding every receipt, tree head and digest is computed over.

UTF-8 JSON with object keys sorted (by code point), no whitespace (``,`` and ``:`` separators),
strings escaped only where JSON requires it (``"``, ``\\`` and control characters: ``\\b \\t \\n
\\f \\r`` short, the others ``\\u00xx``; every other character as itself, the output of
Python's ``json.dumps(..., ensure_ascii=False)`` and of ``orjson``), and **no floating-point
numbers**: a JSON number is an integer, and a real value (a metric value,
a confidence bound) is carried as a string, `encode_real`'s shortest round-trip decimal (Python's
``repr``: ``0.1`` -> ``"0.1"``, ``1.0`` -> ``"1.0"``, ``1e-07`` -> ``"1e-07"``), which any
language reads back to the same IEEE 754 double. So two implementations never disagree on how a
number prints, the ambiguity that makes signed JSON with floats unverifiable.

Integers must be within +-(2**53 - 1) (they survive every JSON reader). Anything else (floats,
NaN, bytes, sets, tuples of mixed intent) raises `CanonicalError` naming the path.
"""
from __future__ import annotations

import hashlib
import math

import orjson

MAX_INT = 2**53 - 1


class CanonicalError(ValueError):
    """A value the canonical encoding refuses (names where it is)."""


def encode_real(x: float | None) -> str | None:
    """A real number as its canonical string (None stays None: "n/a"); refuses NaN and
    infinities, which the metric records never carry (they become None)."""
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise CanonicalError(f"a real value must be a number or None, got {x!r}")
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise CanonicalError(f"a real value must be finite, got {x!r}")
    return repr(x + 0.0)  # + 0.0: -0.0 and 0.0 are the same value, one spelling


def decode_real(s: str | None) -> float | None:
    """The float `encode_real` wrote (None for None); ValueError for anything else."""
    if s is None:
        return None
    if not isinstance(s, str):
        raise ValueError(f"a real value is a string, got {s!r}")
    x = float(s)
    if encode_real(x) != s:
        raise ValueError(f"{s!r} is not a canonical real (expected {encode_real(x)!r})")
    return x


def _check(obj, path: str) -> None:
    if obj is None or isinstance(obj, (bool, str)):
        return
    if isinstance(obj, int):
        if abs(obj) > MAX_INT:
            raise CanonicalError(f"{path}: integer {obj} is outside +-(2**53 - 1)")
        return
    if isinstance(obj, float):
        raise CanonicalError(f"{path}: floats are not canonical; encode {obj!r} with "
                             "encode_real")
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, str):
                raise CanonicalError(f"{path}: object keys must be strings, got {k!r}")
            _check(v, f"{path}.{k}")
        return
    if isinstance(obj, list):
        for i, v in enumerate(obj):
            _check(v, f"{path}[{i}]")
        return
    raise CanonicalError(f"{path}: {type(obj).__name__} has no canonical JSON form")


_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


def canonical_bytes(obj, *, check: bool = True) -> bytes:
    """``obj`` (dicts, lists, strings, integers, booleans, None) as canonical JSON bytes.

    ``check=False`` skips the walk that refuses floats (the one costly step), for documents
    built by `leaderboard.core.transparency.receipts` (whose reals are strings already)."""
    if check:
        _check(obj, "$")
    try:
        return orjson.dumps(obj, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError) as exc:
        raise CanonicalError(f"no canonical JSON form: {exc}") from None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(obj) -> str:
    """``"sha256:<hex>"`` of ``obj``'s canonical bytes."""
    return "sha256:" + sha256_hex(canonical_bytes(obj))
