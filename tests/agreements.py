"""Test helper: a member in good standing holds an approved data-use agreement for every
imported benchmark (what submitting to a held-out split needs since issue 21), obtained through
the real services: signed by the member, approved by a dedicated admin."""
from __future__ import annotations

from sqlalchemy import select

GRANTER = "grants@example.org"


def grant_all(session, user) -> None:
    """Sign and approve ``user``'s agreement for every benchmark they cannot access yet."""
    from leaderboard.server.access import agreements
    from leaderboard.server.services import decisions
    from leaderboard.server.access.gate import can_access
    from leaderboard.server.models import Benchmark, User
    from leaderboard.server.services import accounts

    admin = session.scalar(select(User).where(User.email == GRANTER)) or accounts.register(
        session, email=GRANTER, display_name="grants", password="correct horse battery",
        is_admin=True)
    if user.email_verified_at is None:  # issue 35: a request comes from a verified address
        accounts.mark_verified(user)
    for bench in session.scalars(select(Benchmark)):
        if can_access(session, user, bench, "items"):
            continue
        req = agreements.sign(session, user, bench, full_name=user.display_name,
                              affiliation="Example University", role="Researcher",
                              intended_use="Evaluating our detector for a paper.", accepted=True)
        decisions.approve(session, admin, req)
