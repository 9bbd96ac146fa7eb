"""Who may edit a method's page (issue 38): the members of the team whose method it is, and
nobody else (admins included: a method's description and model card are the team's words;
an admin hides or disqualifies submissions instead). Anonymous users are sent to log in by the
web layer before this is asked."""
from __future__ import annotations

from leaderboard.server.errors import Forbidden


def may_edit_method(user, team_id: int) -> bool:
    return bool(getattr(user, "is_authenticated", False)
                and getattr(user, "team_id", None) is not None
                and user.team_id == team_id)


def check_edit_method(user, team_id: int) -> None:
    """Raise Forbidden (403) unless ``user`` is a member of team ``team_id``."""
    if not may_edit_method(user, team_id):
        raise Forbidden("only the members of the team that made this method can edit its page")
