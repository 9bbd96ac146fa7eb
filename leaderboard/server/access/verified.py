"""The verified-address gate (issue 35, item 2): until its address is verified an account may
browse and score offline, but not request a data-use agreement nor submit to a held-out split.

One setting, ``REQUIRE_VERIFIED_EMAIL`` (default on; off under ``TESTING`` unless a test sets
it), passed in by the caller. The refusal is a 403 with code ``email_unverified`` whose JSON
carries ``verify_url`` (the account page, where the link is sent again).
"""
from __future__ import annotations

from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.models import User
from leaderboard.server.errors import Forbidden

VERIFY_PATH = "/account/"


class EmailUnverified(Forbidden):
    code = "email_unverified"


def needs_verification(user: User, *, required: bool) -> bool:
    """Whether ``user`` is held back by the setting (admins are verified when made)."""
    return bool(required) and getattr(user, "email_verified_at", None) is None


def check_verified(user: User, *, required: bool, what: str) -> None:
    """Raise `EmailUnverified` naming ``what`` was refused, when the address is unverified."""
    if needs_verification(user, required=required):
        raise EmailUnverified(
            f"verify your address {user.email} before you {what}: follow the link we sent "
            f"(or send it again from {VERIFY_PATH})", extra={"verify_url": VERIFY_PATH})


def check_submission(user: User, split: str, *, required: bool) -> None:
    """The gate on a submission to ``split``: held-out splits need a verified address."""
    if split in HELD_OUT_SPLITS:
        check_verified(user, required=required, what=f"submit to the held-out {split} split")
