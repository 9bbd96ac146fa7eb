"""Administrators' decisions on access requests: approve (optionally until a date), deny with a
reason the user sees, revoke a grant. Every decision is audited in the same transaction."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.access import audit
from leaderboard.server.access.admins import require_admin
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import User, utcnow
from leaderboard.server.models.access import AccessRequest
from leaderboard.server.services import notices

MAX_REASON = 2000


def _admin(user: User) -> None:
    require_admin(user, "only administrators decide access requests")


def get_request(session: Session, request_id: int) -> AccessRequest:
    req = session.get(AccessRequest, request_id)
    if req is None:
        raise NotFound(f"no access request {request_id}")
    return req


def _reason(reason: str | None, *, verb: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ServiceError(f"give the user a reason when you {verb} a request", status=400)
    if len(reason) > MAX_REASON:
        raise ServiceError(f"the reason is at most {MAX_REASON} characters, got {len(reason)}")
    return reason


def _decide(session, admin, req, status, *, reason, expires_at, ip, now, action):
    req.status = status
    req.decided_by = admin.id
    req.decided_at = now or utcnow()
    req.reason = reason
    if status == "approved":
        req.expires_at = expires_at
    audit.record(session, admin, action, f"access_request:{req.id}",
                 {"user": req.user_id, "benchmark": req.benchmark_id, "reason": reason,
                  "expires_at": expires_at.isoformat() if expires_at else None,
                  "agreement_version": req.agreement_version}, ip)
    _notify(session, req, status, reason=reason, expires_at=expires_at)
    return req


def _notify(session, req, status, *, reason, expires_at) -> None:
    """The user who signed reads the decision on their team page (issue 21)."""
    name = req.benchmark.title or req.benchmark.key
    if status == "approved":
        until = f" until {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""
        message = f"Your access to {name}'s data was approved{until}."
    else:
        message = f"Your access to {name}'s data was {status}: {reason}"
    notices.post(session, f"agreement.{status}", message, user_id=req.user_id,
                 subject=f"benchmark:{req.benchmark.key}")


def approve(session: Session, admin: User, req: AccessRequest, *,
            expires_at: datetime | None = None, ip: str = "",
            now: datetime | None = None) -> AccessRequest:
    """Grant access (pending or denied requests). ``expires_at`` must be in the future."""
    _admin(admin)
    if req.status not in ("pending", "denied"):
        raise ServiceError(f"request {req.id} is {req.status}; only pending or denied requests "
                           "can be approved (a revoked user signs again)", status=409,
                           code="conflict")
    if expires_at is not None:
        if expires_at.tzinfo is None:
            raise ValueError(f"expires_at must be timezone-aware, got {expires_at!r}")
        if expires_at <= (now or utcnow()):
            raise ServiceError(f"the expiry {expires_at:%Y-%m-%d %H:%M} UTC is in the past")
    return _decide(session, admin, req, "approved", reason=None, expires_at=expires_at, ip=ip,
                   now=now, action="access.approve")


def deny(session: Session, admin: User, req: AccessRequest, *, reason: str, ip: str = "",
         now: datetime | None = None) -> AccessRequest:
    """Refuse a pending request; ``reason`` is shown to the user."""
    _admin(admin)
    if req.status != "pending":
        raise ServiceError(f"request {req.id} is {req.status}; only pending requests can be "
                           "denied (revoke an approved one)", status=409, code="conflict")
    return _decide(session, admin, req, "denied", reason=_reason(reason, verb="deny"),
                   expires_at=None, ip=ip, now=now, action="access.deny")


def revoke(session: Session, admin: User, req: AccessRequest, *, reason: str, ip: str = "",
           now: datetime | None = None) -> AccessRequest:
    """End an approved grant now; ``reason`` is shown to the user."""
    _admin(admin)
    if req.status != "approved":
        raise ServiceError(f"request {req.id} is {req.status}; only approved requests can be "
                           "revoked", status=409, code="conflict")
    return _decide(session, admin, req, "revoked", reason=_reason(reason, verb="revoke"),
                   expires_at=None, ip=ip, now=now, action="access.revoke")


def bulk_approve(session: Session, admin: User, request_ids: Iterable[int], *,
                 expires_at: datetime | None = None, ip: str = "",
                 now: datetime | None = None) -> list[AccessRequest]:
    """Approve every *pending* request among ``request_ids`` (others are skipped)."""
    _admin(admin)
    ids = sorted({int(i) for i in request_ids})
    reqs = session.scalars(select(AccessRequest).where(AccessRequest.id.in_(ids),
                                                       AccessRequest.status == "pending"))
    return [approve(session, admin, r, expires_at=expires_at, ip=ip, now=now) for r in reqs]
