"""JSON API under ``/api/v1``. Authentication: ``Authorization: Bearer <token>`` (per-user
tokens, see the team page); read-only requests from a logged-in browser also work, which is how
the status page polls. Errors are ``{"error", "message"}`` (see `leaderboard.server.web.errors`)."""
from __future__ import annotations

from flask import Blueprint, g, request
from flask_login import current_user

from leaderboard.server.db import get_session
from leaderboard.server.services import ServiceError
from leaderboard.server.services.tokens import user_for_token

bp = Blueprint("api", __name__, url_prefix="/api/v1")


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"


def api_user(*, required: bool = True):
    """The caller: a Bearer token's user, else (GET/HEAD only) the session's user."""
    if "api_user" in g:
        return g.api_user
    user = None
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("the Authorization header must be 'Bearer <token>'")
        session = get_session()
        user = user_for_token(session, token.strip())
        if user is None:
            raise Unauthorized("this API token is unknown or revoked; create one on the team "
                               "page")
        session.commit()  # last_used_at
    elif request.method in ("GET", "HEAD") and current_user.is_authenticated:
        user = current_user._get_current_object()
    if user is None and required:
        raise Unauthorized("send 'Authorization: Bearer <token>' (create a token on the team "
                           "page)")
    g.api_user = user
    return user


from leaderboard.server.web.api import (
    boards,  # noqa: E402,F401
    compare,  # noqa: E402,F401
    submissions,  # noqa: E402,F401  (attach routes)
    transparency,  # noqa: E402,F401
)
