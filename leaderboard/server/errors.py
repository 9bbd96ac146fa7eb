"""The errors a request can fix, shared by every layer of the server.

`ServiceError` (and its subclasses) carries a message meant for the user and the HTTP status the
web layer answers with; `web/errors.py` renders it as JSON under ``/api`` and as a page
elsewhere. It lives below `access/` and `services/` so that both raise it without importing each
other (docs/internals.md, "Layers").
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
