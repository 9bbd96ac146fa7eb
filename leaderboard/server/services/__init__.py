"""Service functions: the server's domain operations, above `access/` (docs/internals.md, "Layers").

Each takes a SQLAlchemy session as its first argument and never commits: the request, command or
job that owns the session does (SQLAlchemy's "session lifetime owned by the caller").
User mistakes raise `leaderboard.server.errors.ServiceError` (or a subclass) with a message meant
for the user and the HTTP status the web layer should answer with.
"""
from __future__ import annotations

# Kept importable from here for code written before the errors moved down to
# `leaderboard.server.errors`; new code imports them from there.
from leaderboard.server.errors import Forbidden, NotFound, ServiceError  # noqa: F401
