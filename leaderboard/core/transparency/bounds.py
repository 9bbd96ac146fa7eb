"""Size and nesting limits on every JSON document the verifier reads, checked before parsing.

Python's ``json`` parser recurses once per nested array or object and raises `RecursionError`
past about a thousand levels (100,000 ``[`` in a receipt file was a traceback, not "malformed");
``orjson`` stops at 1,024 levels, and the code that walks a parsed document (`canonical`'s
checks) recurses too. Receipts, tree heads, key sets and the log's answers are a few levels
deep, so a document deeper than `MAX_DEPTH` or larger than its byte cap is refused as malformed
before any parser sees it. The scan is linear and iterative: strings are blanked out with one
regular expression (their brackets are text), and the depth is the running sum of the remaining
brackets (numpy), whatever the input.
"""
from __future__ import annotations

import re

import numpy as np

from leaderboard.core.transparency.errors import Malformed

#: deeper than any document of the log's formats (a receipt is 4 levels, an answer 3)
MAX_DEPTH = 32
#: a receipt, tree head, key set or proof read from a file (receipts of the largest benchmarks
#: are a few hundred KiB)
MAX_FILE_BYTES = 64 * 1024 * 1024
#: one answer of the server (a page of 1,000 log entries)
MAX_ANSWER_BYTES = 512 * 1024 * 1024

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STEP = np.zeros(256, dtype=np.int8)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1


def check_bounds(data: bytes | str, *, what: str, max_bytes: int = MAX_FILE_BYTES,
                 max_depth: int = MAX_DEPTH) -> bytes:
    """``data`` as bytes when it is at most ``max_bytes`` long and nests arrays and objects at
    most ``max_depth`` deep; Malformed (naming ``what``, the size or the depth) otherwise."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise Malformed(f"the {what} is {len(raw):,} bytes, more than the {max_bytes:,} a "
                        "document of the log's formats can be")
    depth = nesting_depth(raw)
    if depth > max_depth:
        raise Malformed(f"the {what} nests arrays or objects {depth:,} levels deep; documents "
                        f"of the log's formats are at most {max_depth}")
    return raw


def nesting_depth(raw: bytes) -> int:
    """The deepest nesting of ``[``/``{`` outside JSON strings (an unterminated string's
    brackets count: such a document is malformed anyway)."""
    codes = np.frombuffer(_STRING.sub(b'""', raw), dtype=np.uint8)
    steps = _STEP[codes]
    if not steps.any():
        return 0
    return int(np.cumsum(steps, dtype=np.int64).max())
