"""Signed links in mail (issue 35): verify an address, reset a password, unsubscribe.

A link is ``PUBLIC_URL`` + a path + a token signed with ``SECRET_KEY`` (itsdangerous, one salt
per purpose, so a token of one kind is never accepted as another). What makes each single-use
is in its payload, checked against the account when it is followed, not a table of used tokens:

* verify ``{"u": user id, "e": address}``: refused once that address is verified, or when the
  account's address is no longer the one in the link (a changed address needs a new link);
* reset ``{"u": user id, "p": fingerprint of the password hash}``: a reset changes the hash
  (a new salt even for the same password), so the link dies with its first use, and with any
  password change;
* unsubscribe ``{"u": user id, "k": [kinds]}``: no expiry (links in old mail keep working) and
  idempotent (a second POST changes nothing).

Verification and reset links expire (``VERIFY_LINK_TTL_S``, ``RESET_LINK_TTL_S``). A link of
one account never acts on another: the user id is inside the signature.
"""
from __future__ import annotations

import hashlib

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from leaderboard.server.errors import ServiceError

SALTS = {"verify": "lb-mail-verify-v1", "reset": "lb-mail-reset-v1",
         "unsubscribe": "lb-mail-unsubscribe-v1"}
PATHS = {"verify": "/verify-email/", "reset": "/reset-password/",
         "unsubscribe": "/mail/unsubscribe/"}


class BadLink(ServiceError):
    """A link that is forged, damaged, expired, used or for another address (400)."""

    code = "bad_link"


def _serializer(secret: str, purpose: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret, salt=SALTS[purpose])


def token(secret: str, purpose: str, payload: dict) -> str:
    return _serializer(secret, purpose).dumps(payload)


def url(public_url: str, secret: str, purpose: str, payload: dict) -> str:
    """The absolute link for ``purpose`` carrying ``payload``."""
    return public_url.rstrip("/") + PATHS[purpose] + token(secret, purpose, payload)


def read(secret: str, purpose: str, value: str, *, max_age: int | None) -> dict:
    """The payload of a valid token; `BadLink` saying plainly what is wrong otherwise."""
    what = {"verify": "verification", "reset": "password reset",
            "unsubscribe": "unsubscribe"}[purpose]
    if not isinstance(value, str) or not value or len(value) > 1000:
        raise BadLink(f"this {what} link is incomplete: copy the whole link from the message")
    try:
        payload = _serializer(secret, purpose).loads(value, max_age=max_age)
    except SignatureExpired:
        raise BadLink(f"this {what} link has expired: ask for a new one") from None
    except BadSignature:
        raise BadLink(f"this {what} link is not valid (damaged, or not one this site made): "
                      "copy the whole link from the message, or ask for a new one") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("u"), int):
        raise BadLink(f"this {what} link is not valid")
    return payload


def password_fingerprint(password_hash: str) -> str:
    """What a reset link binds to: changes whenever the password does."""
    return hashlib.sha256(b"lb-reset:" + password_hash.encode()).hexdigest()[:20]
