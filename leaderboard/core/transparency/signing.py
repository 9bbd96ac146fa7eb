"""Ed25519 signing keys, their ids, and the published key set with validity windows.

* A key's id is ``"ed25519:" + the first 16 hex digits of SHA-256(raw 32-byte public key)``:
  short enough to print, and a receipt's id names exactly one published key.
* A signature is Ed25519 over the canonical bytes of the signed object
  (`leaderboard.core.transparency.canonical`), carried as unpadded-free standard base64.
* The **published key set** (``/api/v1/keys`` and ``/.well-known/leaderboard-keys.json``) is
  ``{"keys": [{"key_id", "algorithm": "ed25519", "public_key": base64, "not_before": ISO time,
  "not_after": ISO time | null}]}``: every key the server ever signed with, the current one
  open-ended. A signature counts only when its key is published and the signed time lies in the
  key's window, so a retired (or stolen, then retired) key cannot sign anything dated after its
  retirement, while everything it signed before stays valid.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from functools import cached_property
from datetime import UTC, datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from leaderboard.core.transparency.canonical import canonical_bytes
from leaderboard.core.transparency.errors import BadSignature, UnknownKey

ALGORITHM = "ed25519"


class SignatureError(BadSignature):
    """A signature that does not verify."""


class UnknownKeyError(UnknownKey):
    """A key id that the published key set lacks, or a time outside the key's window."""


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return f"{ALGORITHM}:{hashlib.sha256(raw).hexdigest()[:16]}"


def public_b64(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def generate_pem() -> bytes:
    """A new private key as unencrypted PKCS#8 PEM (what `load_private` reads)."""
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())


def load_private(data: bytes | str) -> Ed25519PrivateKey:
    """A private key from PKCS#8 PEM, or base64 of the raw 32-byte seed (an environment
    variable's form). ValueError says which form was expected."""
    if isinstance(data, str):
        data = data.encode("ascii", "replace")
    text = data.strip()
    if text.startswith(b"-----BEGIN"):
        key = serialization.load_pem_private_key(text, password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ValueError("the signing key must be an Ed25519 key")
        return key
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise ValueError("a signing key is a PKCS#8 PEM Ed25519 private key or the base64 of "
                         "its 32-byte seed")
    return Ed25519PrivateKey.from_private_bytes(raw)


@dataclass(frozen=True)
class Signer:
    """A private key and its id: signs canonical objects."""

    private: Ed25519PrivateKey

    @cached_property
    def key_id(self) -> str:
        # once per signer (derived from the public key: an encoding and a hash each time,
        # and every receipt asks three times); cached_property bypasses the frozen setattr
        return key_id(self.private.public_key())

    @property
    def public_key_b64(self) -> str:
        return public_b64(self.private.public_key())

    def sign(self, obj) -> dict:
        """``{"algorithm", "key_id", "value"}`` over ``obj``'s canonical bytes."""
        return self.sign_bytes(canonical_bytes(obj))

    def sign_bytes(self, data: bytes) -> dict:
        """The signature of ``data`` (already canonical bytes)."""
        sig = self.private.sign(data)
        return {"algorithm": ALGORITHM, "key_id": self.key_id,
                "value": base64.b64encode(sig).decode("ascii")}


@dataclass(frozen=True)
class PublishedKey:
    key_id: str
    public: Ed25519PublicKey
    not_before: datetime
    not_after: datetime | None

    def covers(self, when: datetime) -> bool:
        return self.not_before <= when and (self.not_after is None or when < self.not_after)


def parse_time(value: str, what: str) -> datetime:
    """An ISO 8601 time with a zone ("Z" or an offset) as an aware UTC datetime."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be an ISO 8601 time, got {value!r}")
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{what} must be an ISO 8601 time, got {value!r}") from None
    if t.tzinfo is None:
        raise ValueError(f"{what} must carry a time zone, got {value!r}")
    return t.astimezone(UTC)


def format_time(t: datetime) -> str:
    """UTC, microseconds, "Z": the one spelling receipts and key windows use."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class KeySet:
    """The published keys, by id (what a verifier trusts)."""

    def __init__(self, keys: list[PublishedKey]):
        self.keys = {k.key_id: k for k in keys}

    @classmethod
    def from_document(cls, doc: dict) -> KeySet:
        """Parse a published key set; ValueError names the bad entry."""
        if not isinstance(doc, dict) or not isinstance(doc.get("keys"), list):
            raise ValueError('a key set is {"keys": [...]}')
        out = []
        for i, entry in enumerate(doc["keys"]):
            where = f"keys[{i}]"
            if not isinstance(entry, dict) or entry.get("algorithm") != ALGORITHM:
                raise ValueError(f"{where}: only {ALGORITHM} keys are known")
            try:
                raw = base64.b64decode(entry.get("public_key") or "", validate=True)
                public = Ed25519PublicKey.from_public_bytes(raw)
            except (binascii.Error, ValueError):
                raise ValueError(f"{where}: public_key is not base64 of 32 bytes") from None
            if key_id(public) != entry.get("key_id"):
                raise ValueError(f"{where}: key_id {entry.get('key_id')!r} does not match "
                                 f"its public key ({key_id(public)})")
            after = entry.get("not_after")
            out.append(PublishedKey(
                entry["key_id"], public, parse_time(entry.get("not_before"), f"{where}.not_before"),
                None if after is None else parse_time(after, f"{where}.not_after")))
        return cls(out)

    def verify(self, obj, signature: dict, *, signed_at: datetime) -> PublishedKey:
        """Check ``signature`` over ``obj``: UnknownKeyError for a key not published or not
        valid at ``signed_at``, SignatureError for a signature that does not verify."""
        return self.verify_bytes(canonical_bytes(obj), signature, signed_at=signed_at)

    def verify_bytes(self, data: bytes, signature: dict, *, signed_at: datetime) -> PublishedKey:
        """`verify` of ``data``, the signed object's canonical bytes."""
        if not isinstance(signature, dict) or signature.get("algorithm") != ALGORITHM:
            raise SignatureError(f"the signature is not an {ALGORITHM} signature")
        kid = signature.get("key_id")
        key = self.keys.get(kid)
        if key is None:
            raise UnknownKeyError(f"key {kid!r} is not among the server's published keys "
                                  f"({', '.join(sorted(self.keys)) or 'none'})")
        if not key.covers(signed_at):
            window = (f"{format_time(key.not_before)} to "
                      f"{'now' if key.not_after is None else format_time(key.not_after)}")
            raise UnknownKeyError(f"key {kid} was not valid at {format_time(signed_at)} "
                                  f"(valid {window})")
        try:
            sig = base64.b64decode(signature.get("value") or "", validate=True)
            key.public.verify(sig, data)
        except (binascii.Error, ValueError, InvalidSignature):
            raise SignatureError(f"the signature does not match the signed content (key "
                                 f"{kid}): something in it was changed") from None
        return key
