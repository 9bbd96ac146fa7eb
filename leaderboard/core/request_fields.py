"""A benchmark's own questions on its data-access request form (``request_fields`` in
``benchmark.yaml``; optional, issue 35).

Every request already asks for the signer's full name, institution (affiliation), role and
intended use; a pack may add its own, e.g. an ethics approval number or the project's URL::

    request_fields:
      - key: ethics_approval          # lower-case letters, digits and '_'; unique
        label: Ethics approval number # what the form shows
        required: true                # default false
        help: IRB or equivalent        # optional hint under the field
        max_length: 200               # default 500, at most 5000
        multiline: false              # a text area instead of one line (default false)

A pack without the key behaves as before. The answers are kept with the request
(``access_request.answers_json``) and shown to the reviewing administrator.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from leaderboard.core.errors import PackError, ProblemList

_KEY_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
#: the questions every request asks anyway: a pack may not redefine them
RESERVED = frozenset({"full_name", "affiliation", "role", "intended_use", "accept",
                      "csrf_token"})
MAX_FIELDS = 10
DEFAULT_MAX_LENGTH = 500
MAX_LENGTH = 5000


@dataclass(frozen=True)
class RequestField:
    key: str
    label: str
    required: bool = False
    help: str = ""
    max_length: int = DEFAULT_MAX_LENGTH
    multiline: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


def parse_request_fields(raw) -> tuple[RequestField, ...]:
    """Check ``benchmark.yaml``'s ``request_fields`` (None = none); PackError names each bad
    entry as ``request_fields[i].<name>``."""
    if raw is None:
        return ()
    problems = ProblemList()

    def bad(message: str, where: str) -> None:
        problems.add(message, field=where, file="benchmark.yaml")

    if not isinstance(raw, list):
        bad("must be a list of fields (key, label, required, help, max_length, multiline)",
            "request_fields")
        raise PackError("invalid benchmark.yaml", problems)
    if len(raw) > MAX_FIELDS:
        bad(f"at most {MAX_FIELDS} fields, got {len(raw)}", "request_fields")
    out, seen = [], set()
    for i, entry in enumerate(raw):
        where = f"request_fields[{i}]"
        if not isinstance(entry, dict):
            bad("must be a mapping with key and label", where)
            continue
        unknown = sorted(set(entry) - {"key", "label", "required", "help", "max_length",
                                        "multiline"})
        if unknown:
            bad(f"unknown settings {unknown}", where)
        key, label = entry.get("key"), entry.get("label")
        if not isinstance(key, str) or not _KEY_RE.match(key):
            bad(f"must be lower-case letters, digits or '_' (at most 40), got {key!r}",
                f"{where}.key")
            continue
        if key in RESERVED:
            bad(f"{key!r} is asked on every request already; choose another key",
                f"{where}.key")
        if key in seen:
            bad(f"duplicate key {key!r}", f"{where}.key")
        seen.add(key)
        if not isinstance(label, str) or not label.strip() or len(label) > 200:
            bad("required text of at most 200 characters", f"{where}.label")
            continue
        for flag in ("required", "multiline"):
            if not isinstance(entry.get(flag, False), bool):
                bad(f"must be true or false, got {entry.get(flag)!r}", f"{where}.{flag}")
        length = entry.get("max_length", DEFAULT_MAX_LENGTH)
        if isinstance(length, bool) or not isinstance(length, int) \
                or not 1 <= length <= MAX_LENGTH:
            bad(f"must be a whole number from 1 to {MAX_LENGTH}, got {length!r}",
                f"{where}.max_length")
            length = DEFAULT_MAX_LENGTH
        hint = entry.get("help", "")
        if not isinstance(hint, str) or len(hint) > 500:
            bad("must be text of at most 500 characters", f"{where}.help")
            hint = ""
        out.append(RequestField(key=key, label=label.strip(),
                                required=entry.get("required") is True, help=hint,
                                max_length=length, multiline=entry.get("multiline") is True))
    if problems:
        raise PackError("invalid benchmark.yaml", problems)
    return tuple(out)
