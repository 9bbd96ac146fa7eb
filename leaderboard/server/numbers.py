"""Whole numbers from untrusted text: the one parser for every integer a request carries.

Python's own tests are too lenient for input: ``str.isdigit()`` is true for "²" (which ``int``
then refuses: the 500 of issue 36), ``\\d`` and ``int`` accept every script's digits ("٣" is 3),
``int`` accepts "1_000" and surrounding Unicode spaces, and raises on more than 4,300 digits.
So a number from a request is an optional sign and 1 to `MAX_DIGITS` ASCII digits, nothing else;
anything else is a `BadNumber` (400) that names the field, the value and the allowed range.

Used by the web's `int_param` (query strings and forms), the id converter of every URL rule,
the boards' keyset cursors and the services that take numbers from forms.
"""
from __future__ import annotations

import re
from typing import Any

from leaderboard.server.errors import ServiceError

#: the largest value of the schema's ``integer`` columns (PostgreSQL int4)
DB_INT_MAX = 2**31 - 1
#: more digits than any bound here needs; keeps ``int()`` far from its 4,300-digit limit
MAX_DIGITS = 18
_INT = re.compile(rf"[+-]?[0-9]{{1,{MAX_DIGITS}}}")
_UNSIGNED = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}")


class BadNumber(ServiceError):
    status = 400
    code = "bad_request"


def ascii_int(text: Any, *, signed: bool = False) -> int | None:
    """``text`` as an int when it is exactly ASCII digits (with a sign when ``signed``) and at
    most `MAX_DIGITS` long; None for anything else (never raises)."""
    if not isinstance(text, str):
        return None
    if (_INT if signed else _UNSIGNED).fullmatch(text) is None:
        return None
    return int(text)


def parse_int(field: str, raw: Any, *, default: int | None = None, low: int = 0,
              high: int = DB_INT_MAX) -> int | None:
    """``raw`` (a query, form or JSON value) as an int in [low, high]; ``default`` when it is
    None or blank (spaces and tabs around a number are ignored).

    Raises BadNumber (400) naming ``field``, the value and the range.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip(" \t")):
        return default
    if isinstance(raw, int) and not isinstance(raw, bool):
        value: int | None = raw
    else:
        value = ascii_int(raw.strip(" \t"), signed=True) if isinstance(raw, str) else None
    if value is None or not low <= value <= high:
        raise BadNumber(f"{field} must be a whole number from {low} to {high} "
                        f"(ASCII digits), got {str(raw)[:40]!r}")
    return value
