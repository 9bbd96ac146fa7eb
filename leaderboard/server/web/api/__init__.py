"""JSON API under ``/api/v1``. Authentication: ``Authorization: Bearer <token>`` (per-user
tokens, see the team page; `leaderboard.server.web.requests.api_user`); read-only requests from a
logged-in browser also work, which is how the status page polls. Errors are
``{"error", "message"}`` (see `leaderboard.server.web.errors`).

One module per noun attaches its routes to the blueprint (`base.bp`); importing this package
imports them all. `docs` is the interactive reference page (its own blueprint, ``/api/docs``).
"""
from __future__ import annotations

from leaderboard.server.web.api import (  # noqa: F401  (attach their routes to bp)
    analysis,
    boards,
    challenges,
    compare,
    decay,
    notices,
    robustness,
    submissions,
    transparency,
)
from leaderboard.server.web.api.base import bp  # noqa: F401
