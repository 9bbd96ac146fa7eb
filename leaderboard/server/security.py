"""Passwords and API tokens.

Passwords: argon2id with OWASP's recommended minimum (Password Storage Cheat Sheet: m=19 MiB,
t=2, p=1). Hashes carry their parameters, so raising them later only needs `needs_rehash`.
API tokens: 32 random bytes shown once; only their sha256 is stored (a token is already
high-entropy, so a fast hash is enough and lookups stay indexable).
"""
from __future__ import annotations

import hashlib
import hmac
import secrets

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1, hash_len=32,
                         salt_len=16, type=Type.ID)
TOKEN_PREFIX = "lb_"
MIN_PASSWORD = 10
MAX_PASSWORD = 1024  # argon2 would hash anything, but a 10 MB "password" is a DoS vector


def hash_password(password: str) -> str:
    """argon2id hash (PHC string) of ``password``."""
    return _HASHER.hash(password)


def verify_password(stored_hash: str, password: str) -> bool:
    """True if ``password`` matches; False on mismatch or a malformed stored hash."""
    try:
        return _HASHER.verify(stored_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored_hash: str) -> bool:
    return _HASHER.check_needs_rehash(stored_hash)


# A constant hash to verify against when the account does not exist, so that login takes the
# same time whether or not the email is registered.
_DUMMY_HASH = None


def dummy_verify(password: str) -> None:
    global _DUMMY_HASH
    if _DUMMY_HASH is None:
        _DUMMY_HASH = hash_password(secrets.token_urlsafe(16))
    verify_password(_DUMMY_HASH, password)


def new_token() -> str:
    """A fresh API token: ``lb_`` + 43 url-safe characters (256 bits)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """sha256 hex of a token (what the database stores)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_prefix(token: str) -> str:
    """The first characters of a token, shown in lists so users can tell tokens apart."""
    return token[:10]


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def new_invite_code() -> str:
    return secrets.token_urlsafe(12)
