"""The append-only audit log.

`record` is the only writer. There is deliberately no update or delete function: the database
refuses both anyway (see `leaderboard.server.models.access`). The caller owns the session, so an event
commits (or rolls back) together with the change it describes.
"""
from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.orm import Session

from leaderboard.server.models import User
from leaderboard.server.models.access import AuditEvent

log = logging.getLogger(__name__)

_MAX_TARGET = 300


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def record(session: Session, actor: User | None, action: str, target: str = "",
           detail: dict[str, Any] | None = None, ip: str | None = None) -> AuditEvent:
    """Append one event. ``actor`` None = anonymous (e.g. a failed login of an unknown email:
    put the attempted email into ``detail``). ``action`` is a short dotted verb such as
    ``"access.sign"``; ``target`` names the object (``"benchmark:loki"``, ``"user:12"``)."""
    if not action or not isinstance(action, str) or len(action) > 64:
        raise ValueError(f"action must be a non-empty string of at most 64 characters, "
                         f"got {action!r}")
    if detail is not None and not isinstance(detail, dict):
        raise TypeError(f"detail must be a dict, got {type(detail).__name__}")
    event = AuditEvent(actor_id=getattr(actor, "id", None),
                       actor_email=getattr(actor, "email", "") or "", action=action,
                       target=(target or "")[:_MAX_TARGET], detail=_jsonable(detail or {}),
                       ip=(ip or "")[:64])
    session.add(event)
    log.info("audit action=%s actor=%s target=%s", action, event.actor_id, event.target)
    return event


def request_ip() -> str:
    """The client address of the current Flask request ("" outside a request).

    ``remote_addr`` only: a front proxy must be configured with ProxyFix by the deployment so that
    a client cannot forge its address with an X-Forwarded-For header.
    """
    from flask import has_request_context, request
    if not has_request_context():
        return ""
    return request.remote_addr or ""


def query(session: Session, *, action: str | None = None, actor: str | None = None,
          target: str | None = None, since=None, until=None, limit: int = 100,
          offset: int = 0) -> tuple[list[AuditEvent], int]:
    """Events newest first, filtered: ``action`` prefix (``"access."``), ``actor`` email
    substring, ``target`` substring, ``since``/``until`` aware datetimes. Returns (page, total)."""
    from sqlalchemy import func, select

    stmt = select(AuditEvent)
    if action:
        stmt = stmt.where(AuditEvent.action.startswith(action, autoescape=True))
    if actor:
        stmt = stmt.where(func.lower(AuditEvent.actor_email).contains(actor.lower(),
                                                                      autoescape=True))
    if target:
        stmt = stmt.where(AuditEvent.target.contains(target, autoescape=True))
    if since is not None:
        stmt = stmt.where(AuditEvent.at >= since)
    if until is not None:
        stmt = stmt.where(AuditEvent.at < until)
    total = session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
    rows = session.scalars(stmt.order_by(AuditEvent.id.desc()).limit(limit).offset(offset))
    return list(rows), total


CSV_HEADER = ("id", "at", "actor_id", "actor_email", "action", "target", "ip", "detail")


def csv_rows(events) -> list[tuple]:
    """Rows for `leaderboard.server.csvsafe.to_csv` (which neutralises formula-like cells)."""
    import json
    return [(e.id, e.at.isoformat(), e.actor_id, e.actor_email, e.action, e.target, e.ip,
             json.dumps(e.detail, sort_keys=True, ensure_ascii=False)) for e in events]
