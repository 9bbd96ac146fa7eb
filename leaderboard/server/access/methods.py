"""Who may edit a method's page (issue 38): the members of the team whose method it is, and
nobody else (admins included: a method's description and model card are the team's words;
an admin hides or disqualifies submissions instead). Anonymous users are sent to log in by the
web layer before this is asked. A method the user may not see at all
(`visibility.can_see_method`: all its submissions private or hidden) is not acknowledged to
exist: 404, not 403."""
from __future__ import annotations

from leaderboard.server.access.visibility import can_see_method
from leaderboard.server.errors import Forbidden, NotFound


def may_edit_method(user, team_id: int) -> bool:
    return bool(getattr(user, "is_authenticated", False)
                and getattr(user, "team_id", None) is not None
                and user.team_id == team_id)


def check_edit_method(user, team_id: int, *, on_boards: bool) -> None:
    """Raise NotFound (404) when ``user`` may not see the method (``on_boards``: one of its
    submissions is on a board), Forbidden (403) unless ``user`` is a member of ``team_id``."""
    if not can_see_method(user, team_id, on_boards=on_boards):
        raise NotFound(f"team {team_id} has no such method")
    if not may_edit_method(user, team_id):
        raise Forbidden("only the members of the team that made this method can edit its page")
