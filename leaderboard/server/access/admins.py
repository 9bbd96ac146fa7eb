"""Who may administer: the one check every administrators' operation and page makes first."""
from __future__ import annotations

from leaderboard.server.errors import Forbidden
from leaderboard.server.models import User


def is_admin(actor: User | None) -> bool:
    """An authenticated, active administrator (a disabled admin administers nothing)."""
    return bool(actor is not None and getattr(actor, "is_authenticated", False)
                and actor.is_admin and actor.is_active)


def require_admin(actor: User | None, message: str = "administrators only") -> None:
    """Raise `Forbidden` (403) unless ``actor`` is an active administrator."""
    if not is_admin(actor):
        raise Forbidden(message)
