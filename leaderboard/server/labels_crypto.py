"""Hidden labels at rest: Fernet (AES-128-CBC + HMAC-SHA256) with key rotation.

``LABEL_KEYS`` lists keys newest first: the newest encrypts, all of them decrypt (MultiFernet),
so a new key can be prepended, `rotate` run, and the old key removed afterwards.
Labels are decrypted only inside scoring; nothing serves them. The same keys protect the
TOTP secrets of second factors (`leaderboard.server.services.two_factor`), which `rotate`
re-encrypts too.
"""
from __future__ import annotations

from collections.abc import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.models import LabelSet
from leaderboard.server.models.identity import UserTotp


class LabelKeyError(Exception):
    """The configured keys are unusable, or none of them decrypts a label set."""


def _fernet(keys: Sequence[str | bytes]) -> MultiFernet:
    if not keys:
        raise LabelKeyError("LABEL_KEYS is empty: at least one Fernet key is needed")
    fernets = []
    for i, key in enumerate(keys):
        try:
            fernets.append(Fernet(key))
        except (ValueError, TypeError):
            raise LabelKeyError(f"LABEL_KEYS[{i}] is not a Fernet key (32 url-safe base64 "
                                f"bytes); generate one with Fernet.generate_key()") from None
    return MultiFernet(fernets)


def _keys(keys):
    if keys is None:
        from flask import current_app
        keys = current_app.config["LABEL_KEYS"]
    return keys


def encrypt(data: bytes, *, keys: Sequence[str | bytes] | None = None) -> bytes:
    """Encrypt with the newest key (default keys: the current app's ``LABEL_KEYS``)."""
    return _fernet(_keys(keys)).encrypt(data)


def decrypt(token: bytes, *, keys: Sequence[str | bytes] | None = None) -> bytes:
    """Decrypt with any configured key; LabelKeyError if none fits."""
    try:
        return _fernet(_keys(keys)).decrypt(token)
    except InvalidToken:
        raise LabelKeyError("no key in LABEL_KEYS decrypts these labels (was a key removed "
                            "before `rotate-label-keys` ran?)") from None


def rotate(session: Session, *, keys: Sequence[str | bytes] | None = None) -> int:
    """Re-encrypt every LabelSet (and every TOTP secret) with the newest key; returns how many
    label sets. The caller commits."""
    f = _fernet(_keys(keys))
    count = 0
    for ls in session.scalars(select(LabelSet)):
        try:
            ls.ciphertext = f.rotate(ls.ciphertext)
        except InvalidToken:
            raise LabelKeyError(f"label set {ls.id} (benchmark {ls.benchmark_id}, split "
                                f"{ls.split!r}) cannot be decrypted with LABEL_KEYS") from None
        count += 1
    for row in session.scalars(select(UserTotp)):
        try:
            row.secret_enc = f.rotate(row.secret_enc)
        except InvalidToken:
            raise LabelKeyError(f"the second factor of user {row.user_id} cannot be decrypted "
                                "with LABEL_KEYS") from None
    return count
