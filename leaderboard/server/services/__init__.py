"""Service functions: the server's domain operations.

Each takes a SQLAlchemy session as its first argument and never commits: the request, command or
job that owns the session does (SQLAlchemy's "session lifetime owned by the caller").
User mistakes raise `ServiceError` (or a subclass) with a message meant for the user and the
HTTP status the web layer should answer with.
"""
from __future__ import annotations

from leaderboard.core.errors import LeaderboardError, ProblemList


class ServiceError(LeaderboardError):
    """A request the user can fix; ``status`` is the HTTP status to answer with."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, problems: ProblemList | None = None, *,
                 status: int | None = None, code: str | None = None, extra: dict | None = None):
        super().__init__(message, problems)
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code
        self.extra = extra or {}

    def as_dict(self) -> dict:
        return {**super().as_dict(), **self.extra}


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class Forbidden(ServiceError):
    status = 403
    code = "forbidden"
