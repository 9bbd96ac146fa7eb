"""The demo administrator that ``seed-demo`` (so ``make run``) makes, and the lines it prints so a
newcomer knows how to log in as admin (issue 21, item 6).

The password is random, made once, and kept in ``DATA_DIR/demo-admin.txt`` (mode 0600, beside
the demo data it administers), so every ``make run`` can print the same login. A deployment
never needs this: it runs ``python -m leaderboard create-admin`` (docs/server.md). When the file
is gone or no longer matches (the password was changed on the account page), the lines say how
to set a new one instead of printing a stale password.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server import security
from leaderboard.server.models import User
from leaderboard.server.services import accounts

DEMO_ADMIN_EMAIL = "admin@example.org"
FILE_NAME = "demo-admin.txt"


def _reset_hint(email: str) -> str:
    return f"set a new password with: python -m leaderboard create-admin --email {email}"


def ensure_demo_admin(session: Session, data_dir: str | Path, *,
                      email: str = DEMO_ADMIN_EMAIL) -> list[str]:
    """Make the demo admin if there is none yet; returns the lines to print (the caller
    commits). An existing account of that email is left as it is."""
    path = Path(data_dir) / FILE_NAME
    user = session.scalar(select(User).where(User.email == accounts.normalize_email(email)))
    if user is None:
        password = secrets.token_urlsafe(12)
        accounts.create_admin(session, email=email, display_name="Demo admin",
                              password=password)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(password + "\n")
        return [f"demo admin created: log in as {email} with password {password}",
                f"(kept in {path}; {_reset_hint(email)})"]
    if not user.is_admin:
        return [(f"{email} exists but is not an admin; make it one with: python -m "
                 f"leaderboard create-admin --email {email}")]
    try:
        password = path.read_text(encoding="utf-8").strip()
    except OSError:
        password = ""
    if password and security.verify_password(user.password_hash, password):
        return [f"demo admin: log in as {email} with password {password}"]
    return [f"demo admin: {email} (its password was changed since it was made); "
            + _reset_hint(email)]
