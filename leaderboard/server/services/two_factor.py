"""Two-factor sign-in (issue 35): TOTP (RFC 6238 with `pyotp`: 30-second steps, 6 digits, one
step of clock drift either way) and ten single-use recovery codes.

* Enrolment: `begin` makes a secret (kept encrypted under ``LABEL_KEYS``) and returns it with
  its ``otpauth://`` URI, shown once for an authenticator app; `confirm` turns the factor on
  once the app's first code checks out and returns the recovery codes (shown once; only their
  sha256 is kept: 80 random bits each, so a fast hash suffices).
* Login: `verify` accepts a current code or an unused recovery code. A code is accepted once:
  the accepted time step is stored and only a later step passes (a code seen over a shoulder,
  or replayed within its window, is refused); the conditional ``UPDATE`` makes two requests
  racing with one code accept it once. A recovery code is spent the same way.
* `disable` needs the password and a code; `regenerate` needs a code.

Attempts are rate-limited by the web layer (``TWO_FACTOR_RATE_LIMIT``). Everything is audited
here in the caller's transaction; the caller commits.
"""
from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

import pyotp
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from leaderboard.server import labels_crypto, security
from leaderboard.server.access import audit
from leaderboard.server.models import User, utcnow
from leaderboard.server.models.identity import RecoveryCode, UserTotp
from leaderboard.server.errors import ServiceError

RECOVERY_CODES = 10
STEP_S = 30
DRIFT_STEPS = 1
_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: codes are copied by hand


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode("ascii")).hexdigest()


def _normalise(code: str) -> str:
    return "".join(ch for ch in (code or "").lower() if ch.isalnum())


def _new_code() -> str:
    raw = "".join(secrets.choice(_ALPHABET) for _ in range(16))  # 16 x log2(31) > 79 bits
    return "-".join(raw[i:i + 4] for i in range(0, 16, 4))


def factor(session: Session, user: User) -> UserTotp | None:
    """The user's TOTP row (pending or enabled), or None."""
    return session.get(UserTotp, user.id)


def is_enabled(session: Session, user: User) -> bool:
    row = factor(session, user)
    return row is not None and row.enabled_at is not None


def codes_left(session: Session, user: User) -> int:
    return session.scalar(select(func.count(RecoveryCode.id)).where(
        RecoveryCode.user_id == user.id, RecoveryCode.used_at.is_(None))) or 0


def _secret(row: UserTotp, label_keys) -> str:
    return labels_crypto.decrypt(row.secret_enc, keys=label_keys).decode("ascii")


def begin(session: Session, user: User, *, label_keys, issuer: str) -> tuple[str, str]:
    """Start (or restart) enrolment: a new secret, returned with its otpauth URI. 409 when a
    factor is already on (disable it first)."""
    row = factor(session, user)
    if row is not None and row.enabled_at is not None:
        raise ServiceError("two-factor sign-in is already on; turn it off first to enrol a new "
                           "device", status=409, code="conflict")
    secret = pyotp.random_base32()
    enc = labels_crypto.encrypt(secret.encode("ascii"), keys=label_keys)
    if row is None:
        session.add(UserTotp(user_id=user.id, secret_enc=enc, last_step=0))
    else:
        row.secret_enc, row.created_at, row.last_step = enc, utcnow(), 0
    session.flush()
    uri = pyotp.TOTP(secret).provisioning_uri(name=user.email, issuer_name=issuer)
    return secret, uri


def _matching_step(secret: str, code: str, now: datetime) -> int | None:
    """The time step within the drift window whose code is ``code`` (None if none)."""
    totp = pyotp.TOTP(secret)
    current = int(now.timestamp()) // STEP_S
    for step in range(current - DRIFT_STEPS, current + DRIFT_STEPS + 1):
        if secrets.compare_digest(totp.at(step * STEP_S), code):
            return step
    return None


def _spend_step(session: Session, user_id: int, step: int) -> bool:
    """Record ``step`` as used; False when it (or a later one) was used already."""
    done = session.execute(update(UserTotp).where(UserTotp.user_id == user_id,
                                                  UserTotp.last_step < step)
                           .values(last_step=step))
    return done.rowcount == 1


def _new_codes(session: Session, user: User) -> list[str]:
    session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    codes = [_new_code() for _ in range(RECOVERY_CODES)]
    session.add_all(RecoveryCode(user_id=user.id, code_hash=_hash(_normalise(c)))
                    for c in codes)
    session.flush()
    return codes


def confirm(session: Session, user: User, code: str, *, label_keys, ip: str = "",
            now: datetime | None = None) -> list[str]:
    """Turn the pending factor on with the app's first code; returns the recovery codes."""
    row = factor(session, user)
    if row is None or row.enabled_at is not None:
        raise ServiceError("start enrolment first: no pending second factor", status=409,
                           code="conflict")
    now = now or utcnow()
    step = _matching_step(_secret(row, label_keys), _normalise(code), now)
    if step is None:
        raise ServiceError("that code does not match: check the device's clock and enter the "
                           "code the app shows now")
    _spend_step(session, user.id, step)
    row.enabled_at = now
    codes = _new_codes(session, user)
    audit.record(session, user, "auth.2fa_enable", f"user:{user.id}", {}, ip)
    return codes


def verify(session: Session, user: User, code: str, *, label_keys, ip: str = "",
           now: datetime | None = None) -> str:
    """Check a login's second factor: "totp" or "recovery" for what was accepted; ServiceError
    (401) with the reason otherwise (wrong, already used). Failures are audited."""
    row = factor(session, user)
    if row is None or row.enabled_at is None:
        raise ServiceError("two-factor sign-in is not on for this account", status=409,
                           code="conflict")
    now = now or utcnow()
    code = _normalise(code)
    if code.isdigit() and len(code) == 6:
        step = _matching_step(_secret(row, label_keys), code, now)
        if step is not None and _spend_step(session, user.id, step):
            return "totp"
        why = ("this code was already used: wait for the next one" if step is not None
               else "wrong code: enter the 6 digits your app shows now, or a recovery code")
    elif len(code) == 16:
        spent = session.execute(
            update(RecoveryCode).where(RecoveryCode.user_id == user.id,
                                       RecoveryCode.code_hash == _hash(code),
                                       RecoveryCode.used_at.is_(None))
            .values(used_at=now))
        if spent.rowcount == 1:
            audit.record(session, user, "auth.2fa_recovery_used", f"user:{user.id}",
                         {"left": codes_left(session, user)}, ip)
            return "recovery"
        why = "this recovery code is wrong or was already used"
    else:
        why = "enter the 6-digit code from your app, or a recovery code (xxxx-xxxx-xxxx-xxxx)"
    audit.record(session, user, "auth.2fa_failed", f"user:{user.id}", {"reason": why}, ip)
    raise ServiceError(why, status=401, code="second_factor_failed")


def regenerate(session: Session, user: User, code: str, *, label_keys, ip: str = "",
               now: datetime | None = None) -> list[str]:
    """New recovery codes (the old ones stop working), after a valid code."""
    verify(session, user, code, label_keys=label_keys, ip=ip, now=now)
    codes = _new_codes(session, user)
    audit.record(session, user, "auth.2fa_codes_renewed", f"user:{user.id}", {}, ip)
    return codes


def disable(session: Session, user: User, *, password: str, code: str, label_keys,
            ip: str = "", now: datetime | None = None) -> None:
    """Turn the factor off: the account's password and a valid code (or recovery code)."""
    if not security.verify_password(user.password_hash, password or ""):
        audit.record(session, user, "auth.2fa_failed", f"user:{user.id}",
                     {"reason": "wrong password when turning the second factor off"}, ip)
        raise ServiceError("wrong password", status=401, code="second_factor_failed")
    verify(session, user, code, label_keys=label_keys, ip=ip, now=now)
    session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    session.execute(delete(UserTotp).where(UserTotp.user_id == user.id))
    session.flush()
    audit.record(session, user, "auth.2fa_disable", f"user:{user.id}", {}, ip)
