"""User accounts: registration, authentication, admins."""
from __future__ import annotations

import re

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server import security
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import User

_EMAIL_RE = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")


def normalize_email(email: str) -> str:
    return (email or "").strip().lower()


def _check(email: str, display_name: str, password: str) -> ProblemList:
    problems = ProblemList()
    if not _EMAIL_RE.match(email) or len(email) > 254:
        problems.add(f"not a valid email address: {email!r}", field="email")
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
        return register(session, email=email, display_name=display_name, password=password,
                        is_admin=True)
    problems = _check(email, display_name or user.display_name, password)
    if problems:
        raise ServiceError("invalid admin account", problems)
    user.is_admin = True
    user.password_hash = security.hash_password(password)
    return user


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
