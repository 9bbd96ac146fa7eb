"""Who may see a submission's scores (and so compare it): the rule the submission page applies.

A submission is visible to everyone when it is public (``is_public``) and not hidden; to the
members of its team and to admins always. A paired comparison (issue 14) needs both submissions
visible *and scored*; what it shows is limited to the part the boards show (public until the
benchmark's private part is revealed), for admins too, so a comparison never says more than the
board's values do.

Error analysis (issue 38) reads a submission's predictions against the split's labels item by
item, so it is for the submitting team's members only (admins included only as members), on a
split whose labels agreement holders may download (dev): never a held-out split, where nothing is
shown beyond what the boards publish. Its per-item rows (ids with their labels) need the
``dev_labels`` grant, and its thumbnails the ``media`` grant, asked of the data-access gate.
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.access.gate import can_access
from leaderboard.server.errors import Forbidden, NotFound, ServiceError
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


def _member(user, sub: Submission) -> bool:
    return bool(getattr(user, "is_authenticated", False) and sub.team_id is not None
                and getattr(user, "team_id", None) == sub.team_id)


def may_analyse(user, sub: Submission) -> bool:
    """Whether `check_error_analysis` lets ``user`` through (for a link on the submission page)."""
    return _member(user, sub) and sub.split not in HELD_OUT_SPLITS and sub.status == "scored"


def check_error_analysis(user, sub: Submission) -> None:
    """Raise unless ``user`` may see ``sub``'s error analysis.

    NotFound when the user may not see the submission at all (a private one is not acknowledged
    to exist); Forbidden for another team's submission and for a held-out split; a 409 while it
    is not scored."""
    if not can_see_submission(user, sub):
        raise NotFound(f"no submission {sub.id}")
    if not _member(user, sub):
        raise Forbidden("error analysis is shown only to the members of the team that made the "
                        "submission")
    if sub.split in HELD_OUT_SPLITS:
        raise Forbidden(f"error analysis is for dev-split submissions only: on the held-out "
                        f"{sub.split!r} split nothing is shown beyond what the boards publish")
    if sub.status != "scored":
        raise ServiceError(f"submission {sub.id} is not scored (status: {sub.status}); its "
                           "error analysis follows its scores", status=409, code="not_scored")


def error_detail_grants(session: Session, user, sub: Submission) -> dict[str, str | None]:
    """For an allowed error analysis: ``{"labels": reason or None, "media": reason or None}``,
    None where the gate allows per-item rows (``dev_labels``) or thumbnails (``media``), else
    the gate's reason."""
    out = {}
    for key, what in (("labels", "dev_labels"), ("media", "media")):
        decision = can_access(session, user, sub.benchmark, what)
        out[key] = None if decision.allowed else decision.reason
    return out


def can_see_method(user, team_id: int, *, on_boards: bool) -> bool:
    """A method's page (issue 38) is for everyone once one of its submissions is on a board
    (``on_boards``: scored, public, not hidden, as `can_see_submission` and the boards have it);
    before that, for its team's members and admins only, so a method that is all private or
    hidden submissions is not acknowledged to exist."""
    admin = bool(getattr(user, "is_authenticated", False) and getattr(user, "is_admin", False))
    member = bool(getattr(user, "is_authenticated", False)
                  and getattr(user, "team_id", None) == team_id)
    return on_boards or admin or member


def sees_team_private(user, team_id: int) -> bool:
    """Whether ``user`` sees a team's private and hidden submissions listed (its members and
    admins: the rule of `can_see_submission`)."""
    admin = bool(getattr(user, "is_authenticated", False) and getattr(user, "is_admin", False))
    return admin or bool(getattr(user, "is_authenticated", False)
                         and getattr(user, "team_id", None) == team_id)
