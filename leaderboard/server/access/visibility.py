"""Who may see a submission's scores (and so compare it): the rule the submission page applies.

A submission is visible to everyone when it is public (``is_public``) and not hidden; to the
members of its team and to admins always. A paired comparison (issue 14) needs both submissions
visible *and scored*; what it shows is limited to the part the boards show (public until the
benchmark's private part is revealed), for admins too, so a comparison never says more than the
board's values do.
"""
from __future__ import annotations

from leaderboard.server.models import Submission


def can_see_submission(user, sub: Submission) -> bool:
    admin = bool(getattr(user, "is_authenticated", False) and getattr(user, "is_admin", False))
    member = bool(getattr(user, "is_authenticated", False) and sub.team_id is not None
                  and getattr(user, "team_id", None) == sub.team_id)
    return bool((sub.is_public and not sub.hidden) or admin or member)


def can_compare(user, sub: Submission) -> bool:
    return sub.status == "scored" and can_see_submission(user, sub)


def notice_visible(user, notice) -> bool:
    """A notice is for the user it names and for every member of the team it names."""
    if not getattr(user, "is_authenticated", False):
        return False
    return bool((notice.user_id is not None and notice.user_id == user.id)
                or (notice.team_id is not None and notice.team_id == getattr(user, "team_id",
                                                                              None)))
