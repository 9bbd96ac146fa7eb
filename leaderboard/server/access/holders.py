"""Who holds a benchmark's data-use agreement, team by team (issue 21): the marker admins see
on a board's rows, and the team page's "who holds which agreement".

A member *holds* an agreement when the gate would let them download the benchmark's data: their
latest request for it is approved, for the current agreement version, unexpired, on an active
account (`leaderboard.server.access.gate.grant_state`, the one rule, applied per row here).
Agreements bind people, not teams: a team "holds" one when at least one member does.
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.server.access.gate import grant_state
from leaderboard.server.models import Benchmark, User, utcnow
from leaderboard.server.models.access import AccessRequest


def _latest(session: Session, user_ids: Iterable[int], benchmark_ids: Iterable[int] | None):
    """Each user's latest request per benchmark (the one the gate reads)."""
    user_ids = list(user_ids)
    if not user_ids:
        return []
    q = (select(func.max(AccessRequest.id)).where(AccessRequest.user_id.in_(user_ids))
         .group_by(AccessRequest.user_id, AccessRequest.benchmark_id))
    if benchmark_ids is not None:
        q = q.where(AccessRequest.benchmark_id.in_(list(benchmark_ids)))
    return list(session.scalars(select(AccessRequest).where(AccessRequest.id.in_(q))))


def team_holders(session: Session, bench: Benchmark, team_ids: Iterable[int], *,
                 now: datetime | None = None) -> dict[int, list[str]]:
    """team id -> the display names of its members who hold ``bench``'s agreement (teams
    without a holder are absent)."""
    team_ids = [t for t in set(team_ids) if t is not None]
    if not team_ids:
        return {}
    members = {uid: (tid, name) for uid, tid, name in session.execute(
        select(User.id, User.team_id, User.display_name)
        .where(User.team_id.in_(team_ids), User.is_active.is_(True)))}
    out: dict[int, list[str]] = {}
    for req in _latest(session, members, [bench.id]):
        if grant_state(req, bench, now=now or utcnow()).allowed:
            tid, name = members[req.user_id]
            out.setdefault(tid, []).append(name)
    return {tid: sorted(names) for tid, names in out.items()}


def member_agreements(session: Session, members: list[User], *,
                      now: datetime | None = None) -> dict[int, list[dict]]:
    """user id -> ``[{"benchmark", "title", "state", "reason"}]`` for every benchmark the member
    has signed for: ``state`` "holds", "pending", or "lapsed" (denied, revoked, expired, or an
    older agreement version), with the gate's reason in words."""
    benches = {b.id: b for b in session.scalars(select(Benchmark))}
    out: dict[int, list[dict]] = {m.id: [] for m in members}
    for req in _latest(session, [m.id for m in members], None):
        bench = benches.get(req.benchmark_id)
        if bench is None:
            continue
        decision = grant_state(req, bench, now=now or utcnow())
        state = ("holds" if decision.allowed else
                 "pending" if req.status == "pending"
                 and req.agreement_version == bench.agreement_version else "lapsed")
        out[req.user_id].append({"benchmark": bench.key, "title": bench.title or bench.key,
                                 "state": state, "reason": decision.reason})
    for rows in out.values():
        rows.sort(key=lambda r: r["benchmark"])
    return out
