"""Verified addresses and recovery (issue 35, items 2 and 3): the mail an account needs.

* `send_verification` (registration, "send the link again", a changed address) writes a
  verification message to the outbox; `verify` follows the link.
* `request_reset` ("Forgot your password") writes a reset message when the address belongs to
  an active account and does nothing otherwise: the caller answers the same either way (no
  account enumeration); `reset` sets the new password, ends every login session and, with
  ``REVOKE_TOKENS_ON_RESET`` (default on), revokes every API token.
* `change_email` sets a new address, unverified until its link is followed, and tells the old
  address.

Links and what makes them single-use: `leaderboard.server.services.mail_links`. Every function
takes the app's settings (``cfg``), writes in the caller's transaction and never commits.
"""
from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server import security
from leaderboard.server.models import ApiToken, User, utcnow
from leaderboard.server.models.mail import Outbox
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import outbox, sessions
from leaderboard.server.services.accounts import address_problem, clean_email, normalize_email
from leaderboard.server.services.mail_links import BadLink, password_fingerprint, read, url


def _hours(seconds: int) -> str:
    return f"{seconds // 3600} hour(s)" if seconds >= 3600 else f"{seconds // 60} minute(s)"


def send_verification(session: Session, user: User, cfg: Mapping) -> Outbox:
    """A verification message for ``user``'s current address."""
    link = url(cfg["PUBLIC_URL"], cfg["SECRET_KEY"], "verify", {"u": user.id, "e": user.email})
    body = (f"Hello {user.display_name},\n\n"
            f"Please confirm that {user.email} is your address by opening this link:\n\n"
            f"{link}\n\n"
            f"The link works once and for {_hours(cfg['VERIFY_LINK_TTL_S'])}. Until the address "
            "is confirmed you can browse and score offline, but not request access to a data "
            "set or submit to a held-out split.\n\n"
            "If you did not create an account, ignore this message.\n")
    return outbox.add(session, kind="verify", to=user.email, subject="Confirm your address",
                      body=body, sender=cfg["MAIL_SENDER"], user_id=user.id)


def verify(session: Session, token: str, cfg: Mapping) -> User:
    """Mark the address in the link verified; `BadLink` when the link is forged, expired,
    already used, or for an address the account no longer has."""
    payload = read(cfg["SECRET_KEY"], "verify", token, max_age=cfg["VERIFY_LINK_TTL_S"])
    user = session.get(User, payload["u"])
    if user is None or not user.is_active:
        raise BadLink("this verification link is for an account that no longer exists")
    if payload.get("e") != user.email:
        raise BadLink("this verification link is for an address this account no longer uses: "
                      "ask for a new link from your account page")
    if user.email_verified_at is not None:
        raise BadLink("this verification link was already used: your address is verified")
    user.email_verified_at = utcnow()
    return user


def request_reset(session: Session, email: str, cfg: Mapping) -> None:
    """A reset message if ``email`` is an active account's address; nothing otherwise. Bad
    input (no address) is the caller's 400; an unknown address is not an error."""
    user = session.scalar(select(User).where(User.email == normalize_email(email)))
    if user is None or not user.is_active:
        return
    link = url(cfg["PUBLIC_URL"], cfg["SECRET_KEY"], "reset",
               {"u": user.id, "p": password_fingerprint(user.password_hash)})
    tokens = ("Every API token of the account will be revoked as well.\n"
              if cfg["REVOKE_TOKENS_ON_RESET"] else "")
    body = (f"Hello {user.display_name},\n\n"
            "Someone (we hope you) asked to reset the password of your account. Choose a new "
            f"password here:\n\n{link}\n\n"
            f"The link works once and for {_hours(cfg['RESET_LINK_TTL_S'])}. Resetting signs "
            f"out every browser. {tokens}\n"
            "If you did not ask, ignore this message: your password stays as it is.\n")
    outbox.add(session, kind="reset", to=user.email, subject="Reset your password", body=body,
               sender=cfg["MAIL_SENDER"], user_id=user.id)


def reset_user(session: Session, token: str, cfg: Mapping) -> User:
    """The account a reset link is for, if the link is still good (`BadLink` otherwise)."""
    payload = read(cfg["SECRET_KEY"], "reset", token, max_age=cfg["RESET_LINK_TTL_S"])
    user = session.get(User, payload["u"])
    if user is None or not user.is_active:
        raise BadLink("this password reset link is for an account that no longer exists")
    if payload.get("p") != password_fingerprint(user.password_hash):
        raise BadLink("this password reset link was already used, or the password changed "
                      "since it was sent: ask for a new one")
    return user


def end_credentials(session: Session, user: User, cfg: Mapping, *, reason: str) -> dict:
    """Every login session ends; with ``REVOKE_TOKENS_ON_RESET`` every API token is revoked.
    Returns the counts (for the audit log and the page)."""
    ended = sessions.revoke_all(session, user.id, reason=reason)
    revoked = 0
    if cfg["REVOKE_TOKENS_ON_RESET"]:
        revoked = session.execute(update(ApiToken).where(ApiToken.user_id == user.id,
                                                         ApiToken.revoked_at.is_(None))
                                  .values(revoked_at=utcnow())).rowcount or 0
    return {"sessions_ended": ended, "tokens_revoked": revoked}


def reset(session: Session, token: str, new_password: str, cfg: Mapping) -> tuple[User, dict]:
    """Set the password from a reset link (which then stops working) and end the account's
    credentials (`end_credentials`). Following a reset link also proves the address."""
    user = reset_user(session, token, cfg)
    if not (security.MIN_PASSWORD <= len(new_password or "") <= security.MAX_PASSWORD):
        problems = ProblemList()
        problems.add(f"must be {security.MIN_PASSWORD} to {security.MAX_PASSWORD} characters",
                     field="new_password")
        raise ServiceError("the password was not changed", problems)
    user.password_hash = security.hash_password(new_password)
    if user.email_verified_at is None:
        user.email_verified_at = utcnow()
    return user, end_credentials(session, user, cfg, reason="password_reset")


def change_email(session: Session, user: User, *, new_email: str, password: str,
                 cfg: Mapping) -> Outbox:
    """Set a new address (unverified until its link is followed) after checking the password;
    a verification message goes to the new address and a notice to the old one."""
    problems = ProblemList()
    if not security.verify_password(user.password_hash, password or ""):
        problems.add("is not your current password", field="password")
    why = address_problem(normalize_email(new_email))
    if why:
        problems.add(why, field="new_email")
    if problems:
        raise ServiceError("the address was not changed", problems)
    email = clean_email(new_email)
    if email == user.email:
        raise ServiceError("that is already your address")
    if session.scalar(select(User.id).where(func.lower(User.email) == email)) is not None:
        raise ServiceError(f"an account with email {email} already exists", status=409,
                           code="conflict")
    old = user.email
    user.email, user.email_verified_at = email, None
    session.flush()
    outbox.add(session, kind="email_changed", to=old, subject="Your address was changed",
               body=(f"Hello {user.display_name},\n\nThe address of your account was changed "
                     f"from {old} to {email}. If you did not do this, reset your password at "
                     f"{cfg['PUBLIC_URL']}/forgot-password and tell an administrator.\n"),
               sender=cfg["MAIL_SENDER"], user_id=user.id)
    return send_verification(session, user, cfg)
