"""The one place request input is checked before any view sees it: ids, control characters,
and where ``next`` may send a browser.

PostgreSQL is stricter than SQLite, and every check here exists because a value that SQLite
stored or compared happily made PostgreSQL raise (a 500): an id past the ``integer`` columns'
range, a NUL character in any text. So:

* ``<int:...>`` in every URL rule is `IdConverter`: 0 to 2**31 - 1 (the ``integer`` primary
  keys), anything else does not match the rule (404);
* `int_param` parses ids and counts from query strings and forms with the same bounds (400
  naming the parameter and the range), with `leaderboard.server.numbers` (ASCII digits only:
  "²" or "٣" is a 400, not a 500 or a 3);
* `refuse_control_characters` (a ``before_request`` hook) answers 400 to a NUL or other control
  character, or a lone surrogate, in the path, a query parameter, a form field, a JSON body or a
  header, naming where it was; tab, newline and carriage return are allowed in form and JSON
  text (text areas hold them). Upload bodies are checked field by field by
  `leaderboard.server.web.uploads` as it parses them, never read here;
* `safe_next` lets a ``next`` parameter redirect only to a path on this site.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, request
from werkzeug.routing import IntegerConverter

from leaderboard.server.errors import ServiceError
from leaderboard.server.numbers import DB_INT_MAX, MAX_DIGITS, parse_int

#: in a path, a query string or a header: no control character at all
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")
#: in form fields and JSON text: tab, newline and carriage return are text
_CONTROL_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


#: endpoints whose bodies carry a file (predictions files and image tarballs): their bodies are
#: streamed by `leaderboard.server.web.uploads`, never parsed here
UPLOAD_ENDPOINTS = frozenset({"api.create_submission", "submit.upload"})


def is_upload() -> bool:
    return request.method == "POST" and request.endpoint in UPLOAD_ENDPOINTS


class BadInput(ServiceError):
    status = 400
    code = "bad_request"


class IdConverter(IntegerConverter):
    """``<int:...>`` limited to the ids the database can hold (0 to 2**31 - 1), written in
    ASCII digits (werkzeug's ``\\d+`` also matches other scripts' digits)."""

    regex = rf"[0-9]{{1,{MAX_DIGITS}}}"

    def __init__(self, map, fixed_digits: int = 0, min: int | None = 0,
                 max: int | None = DB_INT_MAX, signed: bool = False) -> None:
        super().__init__(map, fixed_digits=fixed_digits, min=min, max=max, signed=signed)


def install_converters(app: Flask) -> None:
    """Make ``<int:...>`` an `IdConverter`; call before any blueprint is registered."""
    app.url_map.converters["int"] = IdConverter


def int_param(name: str, raw: Any, *, default: int | None = None, low: int = 0,
              high: int = DB_INT_MAX) -> int | None:
    """``raw`` (a query or form string) as an int in [low, high]; ``default`` when empty.

    Raises a 400 (`leaderboard.server.numbers.BadNumber`) naming the parameter, the value and
    the allowed range.
    """
    return parse_int(name, raw, default=default, low=low, high=high)


def safe_next(target: Any) -> str | None:
    """``target`` if it is a path on this site (``/...``), else None.

    Refused: absolute URLs, scheme-relative ``//host``, backslashes (browsers read ``/\\host``
    as ``//host``), control characters, anything not starting with ``/``.
    """
    if not isinstance(target, str) or not target.startswith("/") or len(target) > 2000:
        return None
    if target.startswith("//") or "\\" in target or _CONTROL.search(target):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return None
    return target


def refuse_control_characters() -> None:
    """``before_request``: 400 for a control character anywhere in the request's text."""
    _check(_CONTROL, "the URL path", request.path)
    for key, value in request.args.items(multi=True):
        _check(_CONTROL, "a query parameter name", key)
        _check(_CONTROL, f"query parameter {key!r}", value)
    for key, value in request.headers.items():
        _check(re.compile(r"[\x00\ud800-\udfff]"), f"header {key!r}", value)
    if is_upload():
        return  # streamed and checked field by field by leaderboard.server.web.uploads
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        check_form(request.form.items(multi=True))
    elif request.is_json:
        _walk(request.get_json(silent=True), "the JSON body")


def check_form(items) -> None:
    """Raise BadInput for a control character in any (name, value) form pair."""
    for key, value in items:
        _check(_CONTROL, "a form field name", key)
        _check(_CONTROL_TEXT, f"form field {key!r}", value)


def _walk(value: Any, where: str) -> None:
    if isinstance(value, str):
        _check(_CONTROL_TEXT, where, value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check(_CONTROL, f"a key in {where}", key)
            _walk(item, f"field {key!r} of {where}")
    elif isinstance(value, list):
        for item in value:
            _walk(item, where)


def _check(pattern: re.Pattern, where: str, text: Any) -> None:
    if not isinstance(text, str):
        return
    match = pattern.search(text)
    if match:
        raise BadInput(f"{where} contains the control character "
                       f"U+{ord(match.group()):04X}, which is not allowed")
