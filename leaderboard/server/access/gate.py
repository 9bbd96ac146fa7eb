"""The one gate: `can_access` decides every gated action on a benchmark's data.

Gated (design "Data-use agreements"): downloading any split's items and media, downloading
dev-split labels, running a container against a held-out split, and (issue 21, while the
benchmark's ``agreement_gates_submissions`` is on, the default) submitting to a held-out split
at all, predictions or container (``test_submission``; `leaderboard.server.access.submitting`). Test-split labels are never
downloadable by anyone, admins included: they exist on the server only to produce scores.

A scoring-only benchmark (its pack built without media) offers none of these, to anyone: the gate
refuses them with `scoring_only_reason`.

Nothing is cached: every request asks again, so a revocation, an expiry or a new agreement version
takes effect on the very next request.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.server.models import Benchmark, User, utcnow
from leaderboard.server.models.access import AccessRequest

#: the gated actions
WHATS = ("items", "media", "dev_labels", "container_run", "test_labels", "test_submission")
#: what a scoring-only benchmark (a pack built without its media) never offers, to anyone
NOT_HOSTED = ("items", "media", "dev_labels", "container_run")


def is_scoring_only(benchmark: Benchmark) -> bool:
    """Whether the benchmark's pack was built without its media (``scoring_only`` in its meta)."""
    return bool((benchmark.meta_json or {}).get("scoring_only"))


def scoring_only_reason(benchmark: Benchmark) -> str:
    return (f"{benchmark.title or benchmark.key} is scoring-only here: its data are not hosted, so "
            "data downloads and container runs are not offered; get the data from the authors' "
            "release and upload predictions")


@dataclass(frozen=True)
class Decision:
    """The gate's answer; ``reason`` is meant for the user (why not, or on what grounds)."""

    allowed: bool
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


def latest_request(session: Session, user_id: int, benchmark_id: int) -> AccessRequest | None:
    """The user's most recent access request for the benchmark (the one that counts)."""
    return session.scalar(
        select(AccessRequest)
        .where(AccessRequest.user_id == user_id, AccessRequest.benchmark_id == benchmark_id)
        .order_by(AccessRequest.id.desc()).limit(1))


def family_request(session: Session, user_id: int, benchmark: Benchmark) -> AccessRequest | None:
    """The user's most recent access request for any release of ``benchmark``'s family (issue
    37): one signature covers every release while the agreement text (its version) is the same,
    and a revocation on any release ends it for all (`grant_state` still compares versions, so
    a release with a new agreement text needs a new signature)."""
    return session.scalar(
        select(AccessRequest)
        .join(Benchmark, AccessRequest.benchmark_id == Benchmark.id)
        .where(AccessRequest.user_id == user_id, Benchmark.family == benchmark.family)
        .order_by(AccessRequest.id.desc()).limit(1))


def grant_state(req: AccessRequest | None, benchmark: Benchmark, *,
                now: datetime | None = None) -> Decision:
    """Whether ``req`` is a live grant for the benchmark's current agreement version."""
    if req is None:
        return Decision(False, "sign the data-use agreement to request access")
    if req.agreement_version != benchmark.agreement_version:
        return Decision(False, "the data-use agreement has changed since you signed it; read "
                               "and sign the new version to continue")
    if req.status == "pending":
        return Decision(False, "your request is waiting for an administrator's decision")
    if req.status == "denied":
        return Decision(False, f"your request was denied: {req.reason or 'no reason given'}")
    if req.status == "revoked":
        when = f" on {req.decided_at:%Y-%m-%d %H:%M} UTC" if req.decided_at else ""
        return Decision(False, f"agreement revoked{when}: {req.reason or 'no reason given'}")
    if req.status != "approved":  # pragma: no cover - the status column only holds the four
        return Decision(False, f"unknown request status {req.status!r}")
    if req.expires_at is not None and req.expires_at <= (now or utcnow()):
        return Decision(False, f"your access expired on {req.expires_at:%Y-%m-%d %H:%M} UTC; "
                               "sign again to request a renewal")
    return Decision(True, "approved")


def can_access(session: Session, user: User | None, benchmark: Benchmark, what: str, *,
               now: datetime | None = None) -> Decision:
    """May ``user`` do ``what`` with ``benchmark``'s data right now?

    ``what`` is one of `WHATS`. ``user`` may be None or Flask-Login's anonymous user. Admins may
    do everything except download test labels; everyone else needs an approved, unexpired
    request for the benchmark's current agreement version (made on any release of its family:
    `family_request`), on an active account.
    """
    return _decide(user, benchmark, what,
                   lambda: family_request(session, user.id, benchmark), now=now)


def can_access_many(session: Session, users: list[User], benchmark: Benchmark, what: str, *,
                    now: datetime | None = None) -> dict[int, Decision]:
    """`can_access` for many users at once, by user id: the same decisions, with the family's
    requests read in one query (`family_requests`) instead of one per user (the re-run planner
    asks for every detector of a release at each pass)."""
    reqs = family_requests(session, [u.id for u in users], benchmark)
    return {u.id: _decide(u, benchmark, what, lambda u=u: reqs.get(u.id), now=now)
            for u in users}


def family_requests(session: Session, user_ids: list[int],
                    benchmark: Benchmark) -> dict[int, AccessRequest]:
    """`family_request` for each of ``user_ids`` (absent: none), in one query."""
    if not user_ids:
        return {}
    wanted = set(user_ids)
    latest = (select(func.max(AccessRequest.id))
              .join(Benchmark, AccessRequest.benchmark_id == Benchmark.id)
              .where(Benchmark.family == benchmark.family)
              .group_by(AccessRequest.user_id).scalar_subquery())
    # the family's signers, not an IN list of the users: no bound-parameter limit to meet
    return {r.user_id: r for r in session.scalars(
        select(AccessRequest).where(AccessRequest.id.in_(latest))) if r.user_id in wanted}


def _decide(user: User | None, benchmark: Benchmark, what: str,
            request: Callable[[], AccessRequest | None], *,
            now: datetime | None = None) -> Decision:
    """`can_access`'s rules; ``request`` gives the user's family request when one is needed."""
    if what not in WHATS:
        raise ValueError(f"what must be one of {WHATS}, got {what!r}")
    if what == "test_labels":
        return Decision(False, "test-split labels are never downloadable, by anyone; they are "
                               "used only to compute scores")
    if what in NOT_HOSTED and is_scoring_only(benchmark):
        return Decision(False, scoring_only_reason(benchmark))
    if user is None or not getattr(user, "is_authenticated", False):
        return Decision(False, "log in to request access to this benchmark's data")
    if not user.is_active:
        return Decision(False, "this account is disabled")
    if user.is_admin:
        return Decision(True, "administrator")
    if what == "test_submission" and not benchmark.agreement_gates_submissions:
        return Decision(True, "this benchmark takes held-out submissions without an agreement")
    if what == "test_submission" and is_scoring_only(benchmark):
        # nothing is hosted, so there is nothing here to sign: the authors' terms govern the data
        return Decision(True, "a scoring-only benchmark: its data come from the authors' release")
    return grant_state(request(), benchmark, now=now)
