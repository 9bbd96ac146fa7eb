"""Receipts and signed tree heads: the documents, how they are built and checked.

A **receipt** (``lb-receipt/1``) is ``{"receipt": BODY, "signature": SIG}``, stored in the log as
its canonical bytes (the log's leaf data, byte for byte what a user downloads). BODY:

=====================  =====================================================================
``format``             ``"lb-receipt/1"``
``key_id``             the signing key (also in SIG; both must agree)
``log_index``          this receipt's position in the transparency log
``previous_index``     the log index of the same submission's previous receipt (null: first)
``event``              why it was issued: one of `EVENTS`
``issued_at``          UTC, microseconds, "Z"
``benchmark``          ``{"key", "version", "revealed"}`` (revealed: the private part is public),
                       plus ``"family"`` and ``"release"`` (issue 37) for a benchmark's
                       release 2 onwards (key ``<family>-v<N>``); without them: release 1
``pack``               ``{"digest", "benchmark_yaml", "items"}``: SHA-256 digests of the pack's
                       ``benchmark.yaml`` narrowed to the split (byte for byte the file of
                       the split's download) and of the split's ``items.jsonl``, and of both
                       together (`pack_digests`); what a user's copy of the pack must match
``submission``         ``{"id", "split", "kind", "team", "method", "submitted_at", "status",
                       "hidden", "disqualified" (reason or null), "public", "selected",
                       "baseline" (kind or null)}``: everything a board row depends on
``input``              ``{"predictions_sha256"}`` (an upload: the file's bytes as uploaded) or
                       ``{"image_digest", "upload_sha256"}`` (a container run)
``records``            the metric records shown, each ``{"part", "task", "metric", "slice",
                       "value", "ci_low", "ci_high", "n", "judge", "metric_version"}``, real
                       numbers as canonical strings (`canonical.encode_real`), sorted by
                       their canonical bytes
``sealed_parts``       parts scored but not shown (the private part, and "all", which includes
                       it, until the reveal)
``records_commitment`` ``sha256`` of the canonical ``{"records": ALL records, "salt": SALT}``:
                       the full record set, sealed parts included, fixed at issue time
``salt``               present only when nothing is sealed: then anyone recomputes the
                       commitment, and checks that an earlier sealed receipt committed to the
                       same records (the private values were not changed before the reveal)
=====================  =====================================================================

A random 32-byte salt per submission makes the sealed commitment useless for guessing private
values (a metric has few possible values; an unsalted hash could be searched). A **tree head**
(``lb-tree-head/1``) is ``{"head": {"format", "key_id", "tree_size", "root_hash" (hex),
"timestamp"}, "signature": SIG}``.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from leaderboard.core.transparency.bounds import MAX_FILE_BYTES, check_bounds
from leaderboard.core.pack_copy import split_meta
from leaderboard.core.transparency.canonical import (
    MAX_INT,
    CanonicalError,
    canonical_bytes,
    decode_real,
    digest,
    encode_real,
)
from leaderboard.core.transparency.errors import Malformed
from leaderboard.core.transparency.signing import KeySet, PublishedKey, Signer, parse_time

RECEIPT_FORMAT = "lb-receipt/1"
HEAD_FORMAT = "lb-tree-head/1"
EVENTS = ("scored", "rescored", "unscored", "hidden", "unhidden", "disqualified", "reinstated",
          "revealed", "withdrawn", "updated")
RECORD_FIELDS = ("part", "task", "metric", "slice", "value", "ci_low", "ci_high", "n", "judge",
                 "metric_version")
BODY_FIELDS = ("format", "key_id", "log_index", "previous_index", "event", "issued_at",
               "benchmark", "pack", "submission", "input", "records", "sealed_parts",
               "records_commitment")


def record(*, part: str, task: str, metric: str, slice: Mapping[str, str], value, ci_low=None,
           ci_high=None, n: int = 0, judge: str | None = None,
           metric_version: str = "1") -> dict:
    """One metric record in receipt form (reals as canonical strings)."""
    return {"part": part, "task": task, "metric": metric,
            "slice": {str(k): str(v) for k, v in dict(slice).items()},
            "value": encode_real(value), "ci_low": encode_real(ci_low),
            "ci_high": encode_real(ci_high), "n": int(n), "judge": judge,
            "metric_version": str(metric_version)}


def sort_records(records: Iterable[dict]) -> list[dict]:
    """Records in their canonical order: by their own canonical JSON bytes (a total order any
    implementation reproduces with its canonical encoder and a byte comparison)."""
    return sorted(records, key=lambda r: canonical_bytes(r, check=False))


def commitment(records: Iterable[dict], salt: str, *, presorted: bool = False) -> str:
    """The commitment to the full record set (see the module docstring)."""
    records = list(records) if presorted else sort_records(records)
    return "sha256:" + hashlib.sha256(canonical_bytes({"records": records, "salt": salt},
                                                      check=False)).hexdigest()


def commitment_of_encoded(encoded: Sequence[bytes], salt: str) -> str:
    """`commitment` of the records whose canonical bytes, in their canonical order, are
    ``encoded`` (the issuer has them already: they are its sort keys), with the records not
    encoded a second time; the same string byte for byte."""
    return "sha256:" + hashlib.sha256(
        b'{"records":[' + b",".join(encoded) + b'],"salt":' + canonical_bytes(salt, check=False)
        + b"}").hexdigest()


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def sha256_file(path: str | Path) -> str:
    """``"sha256:<hex>"`` of a file's bytes (a predictions file as uploaded)."""
    return _sha256_file(Path(path))


def pack_digests(pack_dir: str | Path, split: str) -> dict:
    """``{"digest", "benchmark_yaml", "items"}`` of a pack folder and split: what every copy of
    a pack shares (the server's, a team's download, the organisers' release). ``benchmark_yaml``
    is the SHA-256 of the file narrowed to the split (`pack_copy.split_meta`): the bytes a
    team's download of the split holds, whatever other splits the full pack lists. Media files
    are left out (a large pack holds hundreds of thousands; ``items.jsonl`` names them).

    OSError when a file is missing; PackError when ``benchmark.yaml`` is not a mapping that
    lists ``split``."""
    root = Path(pack_dir)
    yaml_digest = "sha256:" + hashlib.sha256(
        split_meta((root / "benchmark.yaml").read_bytes(), split)).hexdigest()
    items = _sha256_file(root / "splits" / split / "items.jsonl")
    return {"digest": digest({"benchmark_yaml": yaml_digest, "items": items, "split": split}),
            "benchmark_yaml": yaml_digest, "items": items}


def build_body(*, log_index: int, previous_index: int | None, event: str, issued_at: datetime,
               key_id: str, benchmark: dict, pack: dict, submission: dict, input: dict,
               records: Iterable[dict], shown_parts: Iterable[str], salt: str,
               records_commitment: str | None = None, presorted: bool = False) -> dict:
    """A receipt body: ``records`` is the full record set (every part); only ``shown_parts``
    appear, the rest are sealed under the commitment (``records_commitment`` when the caller
    computed it already, over the same records)."""
    from leaderboard.core.transparency.signing import format_time

    if event not in EVENTS:
        raise ValueError(f"event must be one of {EVENTS}, got {event!r}")
    records = list(records) if presorted else sort_records(records)
    shown = set(shown_parts)
    body = {"format": RECEIPT_FORMAT, "key_id": key_id, "log_index": int(log_index),
            "previous_index": previous_index, "event": event,
            "issued_at": format_time(issued_at), "benchmark": dict(benchmark),
            "pack": dict(pack), "submission": dict(submission), "input": dict(input),
            "records": [r for r in records if r["part"] in shown],
            "sealed_parts": sorted({r["part"] for r in records} - shown),
            "records_commitment": records_commitment or commitment(records, salt,
                                                                   presorted=True)}
    if not body["sealed_parts"]:
        body["salt"] = salt
    return body


def build_body_encoded(*, records: Sequence[tuple[bytes, str]], shown_parts: Iterable[str],
                       salt: str, records_commitment: str, **fields) -> tuple[dict, list[bytes]]:
    """`build_body` of records given as (canonical bytes, part), in canonical order (the
    issuer's hot path: no record is decoded into a dict and encoded again): the body with an
    empty ``"records"`` list, and the bytes of the records it shows, for `sign_encoded`'s
    ``records``. ``fields``: `build_body`'s other arguments."""
    shown = set(shown_parts)
    body = build_body(records=(), shown_parts=shown, salt=salt,
                      records_commitment=records_commitment, presorted=True, **fields)
    body["sealed_parts"] = sorted({part for _, part in records} - shown)
    if body["sealed_parts"]:
        del body["salt"]
    return body, [b for b, part in records if part in shown]


def sign(body: dict, signer: Signer) -> dict:
    if body.get("key_id") != signer.key_id:
        raise ValueError("the body names another key than the signer's")
    key = "head" if body.get("format") == HEAD_FORMAT else "receipt"
    return {key: body, "signature": signer.sign(body)}


def encode(doc: dict) -> bytes:
    """A signed document's bytes: what the log stores and hashes, and users download."""
    return canonical_bytes(doc)


def _assemble(key: str, body_bytes: bytes, signature: dict) -> bytes:
    # {"head"|"receipt": ..., "signature": ...} with the keys in order: the canonical bytes of
    # the whole document without encoding the body a second time
    return (b'{"' + key.encode() + b'":' + body_bytes + b',"signature":'
            + canonical_bytes(signature) + b"}")


_NO_RECORDS = b'"records":[]'


def sign_encoded(body: dict, signer: Signer, *, records: Sequence[bytes] | None = None) -> bytes:
    """`encode(sign(body, signer))` with the body encoded once (issuing's hot path: the body
    comes from `build_body`, whose reals are strings already). ``records``: the canonical
    bytes of the body's records, in order, when ``body["records"]`` is an empty list in their
    place (`build_body_encoded`): spliced into the body's bytes, not encoded again."""
    if body.get("key_id") != signer.key_id:
        raise ValueError("the body names another key than the signer's")
    body_bytes = canonical_bytes(body, check=False)
    if records is not None:
        if body.get("records") != []:
            raise ValueError("records are spliced only in place of an empty records list")
        # the one "records" key with an empty list: the body's own (its other objects have
        # fixed keys, and a quote inside a JSON string is always escaped); a second match
        # would be refused rather than guessed at
        at = body_bytes.find(_NO_RECORDS)
        if at < 0 or body_bytes.find(_NO_RECORDS, at + 1) >= 0:
            raise ValueError("the body's records list is not found once in its bytes")
        body_bytes = (body_bytes[:at] + b'"records":[' + b",".join(records) + b"]"
                      + body_bytes[at + len(_NO_RECORDS):])
    key = "head" if body.get("format") == HEAD_FORMAT else "receipt"
    return _assemble(key, body_bytes, signer.sign_bytes(body_bytes))


def check_entry(data: bytes, keys: KeySet) -> dict:
    """A log entry's receipt, checked: JSON, shape, canonical form (Malformed), signature
    (BadSignature / UnknownKey). One encoding of the body (an auditor's walk)."""
    doc = load(data)  # parsed by `parse`: no float, no oversized integer
    body_bytes = canonical_bytes(doc["receipt"], check=False)
    keys.verify_bytes(body_bytes, doc["signature"], signed_at=signed_at(doc))
    if _assemble("receipt", body_bytes, doc["signature"]) != data:
        raise Malformed("the entry is not in canonical form")
    return doc


def _no_float(text: str):
    raise CanonicalError(f"a real number ({text}) where canonical JSON has strings")


def _bounded_int(text: str) -> int:
    value = int(text)
    if abs(value) > MAX_INT:
        raise CanonicalError(f"integer {text} is outside +-(2**53 - 1)")
    return value


def parse(data: bytes | str, *, what: str = "document", max_bytes: int = MAX_FILE_BYTES):
    """JSON that can be canonical: a float, NaN or an integer beyond 2**53 anywhere raises
    (the C parser calls these hooks only for such literals), so what it returns re-encodes
    with ``canonical_bytes(..., check=False)``. Larger or deeper than `bounds` allows:
    Malformed, before the parser recurses."""
    raw = check_bounds(data, what=what, max_bytes=max_bytes)
    return json.loads(raw, parse_float=_no_float, parse_int=_bounded_int,
                      parse_constant=_no_float)


def load(data: bytes | str | dict, *, what: str = "receipt") -> dict:
    """A signed document from bytes/text/dict, its shape checked; Malformed says what is
    wrong (the byte that broke JSON, a field missing)."""
    if isinstance(data, (bytes, str)):
        try:
            doc = parse(data, what=what)
        except (ValueError, CanonicalError) as exc:
            raise Malformed(f"the {what} is not valid JSON: {exc}") from None
    else:
        doc = data
    key = "head" if what == "tree head" else "receipt"
    if not isinstance(doc, dict) or set(doc) != {key, "signature"}:
        raise Malformed(f'a {what} is {{"{key}": ..., "signature": ...}} and nothing else')
    body = doc[key]
    if not isinstance(body, dict):
        raise Malformed(f"the {what}'s {key!r} must be an object")
    expected = HEAD_FORMAT if key == "head" else RECEIPT_FORMAT
    if body.get("format") != expected:
        raise Malformed(f"the {what}'s format is {body.get('format')!r}, not {expected!r}")
    fields = ("format", "key_id", "tree_size", "root_hash", "timestamp") if key == "head" \
        else BODY_FIELDS
    missing = [f for f in fields if f not in body]
    if missing:
        raise Malformed(f"the {what} lacks {', '.join(missing)}")
    if not isinstance(doc["signature"], dict) or doc["signature"].get("key_id") != body["key_id"]:
        raise Malformed(f"the {what}'s signature names another key than its body")
    return doc


def signed_at(doc: dict) -> datetime:
    body = doc.get("receipt") or doc.get("head")
    stamp = body.get("issued_at") if "receipt" in doc else body.get("timestamp")
    try:
        return parse_time(stamp, "the signing time")
    except ValueError as exc:
        raise Malformed(str(exc)) from None


def check_signature(doc: dict, keys: KeySet) -> PublishedKey:
    """BadSignature / UnknownKey unless ``doc`` is signed by a key published for its time."""
    body = doc.get("receipt") or doc.get("head")
    try:
        body_bytes = canonical_bytes(body)
    except CanonicalError as exc:
        raise Malformed(f"not a canonical document: {exc}") from None
    return keys.verify_bytes(body_bytes, doc["signature"], signed_at=signed_at(doc))


def check_commitment(body: dict) -> bool:
    """True when the receipt shows every part and its commitment matches its records; False
    when parts are sealed (nothing to recompute). Malformed when it does not match."""
    if body.get("sealed_parts"):
        return False
    if commitment(body["records"], body.get("salt", "")) != body["records_commitment"]:
        raise Malformed("the receipt's records_commitment does not match its records")
    return True


def record_value(r: dict) -> float | None:
    try:
        return decode_real(r.get("value"))
    except ValueError as exc:
        raise Malformed(f"record {r.get('task')}/{r.get('metric')}: {exc}") from None


def head_body(*, key_id: str, tree_size: int, root_hash: bytes, timestamp: datetime) -> dict:
    from leaderboard.core.transparency.signing import format_time

    return {"format": HEAD_FORMAT, "key_id": key_id, "tree_size": int(tree_size),
            "root_hash": root_hash.hex(), "timestamp": format_time(timestamp)}


def head_root(doc: dict) -> bytes:
    try:
        root = bytes.fromhex(doc["head"]["root_hash"])
        size = doc["head"]["tree_size"]
    except (KeyError, TypeError, ValueError):
        raise Malformed("the tree head's root_hash is not hex") from None
    if len(root) != 32 or not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise Malformed("a tree head has a 32-byte root_hash and a tree_size >= 0")
    return root
