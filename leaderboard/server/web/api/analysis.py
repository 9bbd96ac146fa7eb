"""``GET /api/v1/submissions/<id>/error-analysis``: a team's own dev-split error analysis as
JSON (issue 38; docs/error-analysis.md). The same checks as the page
(`access.visibility.check_error_analysis`): another team's submission is refused (403, or 404
when it is private), a held-out split is refused (403)."""
from __future__ import annotations

from flask import abort, current_app, jsonify, url_for

from leaderboard.server.access import visibility
from leaderboard.server.db import get_session
from leaderboard.server.models import Submission
from leaderboard.server.services import downloads
from leaderboard.server.services import error_analysis as service
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.requests import api_user, off_loop


@bp.get("/submissions/<int:submission_id>/error-analysis")
def submission_error_analysis(submission_id: int):
    """Per task: confusion matrix, calibration (reliability bins, ECE with its CI), the
    headline per slice beside the board's best, and the most confident errors (with signed
    media links where the data-access gate allows)."""
    user = api_user()
    session = get_session()
    sub = session.get(Submission, submission_id)
    if sub is None:
        abort(404, description=f"no submission {submission_id}")
    visibility.check_error_analysis(user, sub)
    cfg = current_app.config
    result = service.error_analysis(session, sub, data_dir=cfg["DATA_DIR"],
                                    label_keys=cfg["LABEL_KEYS"], run=off_loop)
    grants = visibility.error_detail_grants(session, user, sub)
    key = sub.benchmark.key

    def media_url(path: str) -> str:
        token = downloads.make_token(user, downloads.Target("media", key, path=path),
                                     secret_key=cfg["SECRET_KEY"])
        return url_for("access.download", token=token, _external=True)

    return jsonify(service.apply_grants(result, grants, media_url=media_url))
