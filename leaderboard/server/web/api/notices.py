"""``/api/v1/notices``: the caller's notices (and their team's) and dismissing one, as on the
team page (issue 21)."""
from __future__ import annotations

from flask import jsonify

from leaderboard.server.db import get_session
from leaderboard.server.services import notices
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.requests import api_user


@bp.get("/notices")
def api_notices():
    """Your notices (and your team's) not yet dismissed, newest first: agreement decisions and
    submissions scored, failed, hidden or disqualified."""
    user = api_user()
    return jsonify({"notices": [notices.as_dict(n) for n in notices.active(get_session(),
                                                                            user)]})


@bp.post("/notices/<int:notice_id>/dismiss")
def api_dismiss_notice(notice_id: int):
    """Dismiss one notice (for every member of the team when it is the team's)."""
    user = api_user()
    session = get_session()
    n = notices.dismiss(session, user, notice_id)
    session.commit()
    return jsonify(notices.as_dict(n) | {"dismissed_at": n.dismissed_at.isoformat()})
