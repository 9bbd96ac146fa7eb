"""``GET /api/v1/compare/<benchmark>/<split>?a=<id>&b=<id>``: the paired comparison as JSON.

Anonymous callers see public submissions; a token (or a logged-in browser) adds the caller's
team's own and, for admins, every scored one (`leaderboard.server.access.visibility`). Rate
limited with the page (`leaderboard.server.web.hardening`); computed off the event loop.
"""
from __future__ import annotations

from flask import jsonify, request

from leaderboard.server.boards import service as boards
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import compare as svc
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.requests import api_user, off_loop


@bp.get("/compare/<key>/<split>")
def compare_json(key: str, split: str):
    """Paired comparison of submissions ``a`` and ``b`` on one split (aggregates only)."""
    a, b = request.args.get("a"), request.args.get("b")
    if not a or not b:
        raise ServiceError("give both submissions: ?a=<id>&b=<id>")
    key = boards.resolve_key(get_session(), key)  # a family: its latest release
    return jsonify({**svc.compare(get_session(), benchmark_key=key, split=split, a=a, b=b,
                                  viewer=api_user(required=False), run=off_loop),
                    **boards.release_of(get_session(), key)})
