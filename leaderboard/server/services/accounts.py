"""User accounts: registration, authentication, admins.

Addresses are checked and normalised with ``email-validator`` (syntax only,
``check_deliverability=False``: no network on a request), then lower-cased whole, as every
stored address has been since the first revision (so lookups stay a plain equality).
"""
from __future__ import annotations

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server import security
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import User, utcnow

def normalize_email(email: str) -> str:
    return (email or "").strip().lower()


def address_problem(email: str) -> str | None:
    """Why ``email`` (already normalised) is not an address we accept, or None."""
    if len(email) > 254:
        return "not a valid email address: longer than 254 characters"
    try:
        validate_email(email, check_deliverability=False)
    except EmailNotValidError as exc:
        return f"not a valid email address ({exc})"
    return None


def clean_email(email: str) -> str:
    """``email`` validated and normalised (email-validator's form, lower-cased); ServiceError
    naming the field otherwise."""
    email = normalize_email(email)
    why = address_problem(email)
    if why:
        problems = ProblemList()
        problems.add(why, field="email")
        raise ServiceError("please correct the address", problems)
    return validate_email(email, check_deliverability=False).normalized.lower()


def _check(email: str, display_name: str, password: str) -> ProblemList:
    problems = ProblemList()
    why = address_problem(email)
    if why:
        problems.add(why, field="email")
    if not display_name or len(display_name) > 80:
        problems.add("required, at most 80 characters", field="display_name")
    if not (security.MIN_PASSWORD <= len(password or "") <= security.MAX_PASSWORD):
        problems.add(f"must be {security.MIN_PASSWORD} to {security.MAX_PASSWORD} characters",
                     field="password")
    return problems


def register(session: Session, *, email: str, display_name: str, password: str,
             is_admin: bool = False) -> User:
    """Create a user; ServiceError naming each bad field, or 409 if the email is taken."""
    email = normalize_email(email)
    display_name = (display_name or "").strip()
    problems = _check(email, display_name, password)
    if problems:
        raise ServiceError("please correct the fields marked below", problems)
    email = validate_email(email, check_deliverability=False).normalized.lower()
    if session.scalar(select(User.id).where(func.lower(User.email) == email)) is not None:
        raise ServiceError(f"an account with email {email} already exists", status=409,
                           code="conflict")
    user = User(email=email, display_name=display_name,
                password_hash=security.hash_password(password), is_admin=is_admin)
    session.add(user)
    session.flush()
    return user


def authenticate(session: Session, *, email: str, password: str) -> User | None:
    """The active user with these credentials, or None (same timing either way)."""
    user = session.scalar(select(User).where(User.email == normalize_email(email)))
    if user is None:
        security.dummy_verify(password or "")
        return None
    if not security.verify_password(user.password_hash, password or ""):
        return None
    if not user.is_active:
        return None
    if security.needs_rehash(user.password_hash):
        user.password_hash = security.hash_password(password)
    return user


def create_admin(session: Session, *, email: str, display_name: str, password: str) -> User:
    """Create an admin, or promote the existing account with this email (password reset)."""
    email = normalize_email(email)
    user = session.scalar(select(User).where(User.email == email))
    if user is None:
        user = register(session, email=email, display_name=display_name, password=password,
                        is_admin=True)
        mark_verified(user)
        return user
    problems = _check(email, display_name or user.display_name, password)
    if problems:
        raise ServiceError("invalid admin account", problems)
    user.is_admin = True
    user.password_hash = security.hash_password(password)
    mark_verified(user)
    return user


def mark_verified(user: User) -> None:
    """The operator vouches for this address (``create-admin``, the demo admin)."""
    if user.email_verified_at is None:
        user.email_verified_at = utcnow()


def change_password(session: Session, user: User, *, current: str, new: str) -> None:
    """Set a new password after checking the current one (400 naming the field). The caller
    then ends every session of the user (`leaderboard.server.services.sessions.revoke_all`)."""
    problems = ProblemList()
    if not security.verify_password(user.password_hash, current or ""):
        problems.add("is not your current password", field="current_password")
    if not (security.MIN_PASSWORD <= len(new or "") <= security.MAX_PASSWORD):
        problems.add(f"must be {security.MIN_PASSWORD} to {security.MAX_PASSWORD} characters",
                     field="new_password")
    elif new == current:
        problems.add("must differ from the current password", field="new_password")
    if problems:
        raise ServiceError("the password was not changed", problems)
    user.password_hash = security.hash_password(new)
