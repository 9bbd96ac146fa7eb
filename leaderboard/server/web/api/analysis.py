"""``GET /api/v1/submissions/<id>/error-analysis``: a team's own dev-split error analysis as
JSON (issue 38; docs/error-analysis.md). The same checks as the page
(`access.visibility.check_error_analysis`): another team's submission is refused (403, or 404
when it is private), a held-out split is refused (403)."""
from __future__ import annotations

from flask import jsonify

from leaderboard.server.web.api.base import bp
from leaderboard.server.web.requests import api_user, error_analysis_for


@bp.get("/submissions/<int:submission_id>/error-analysis")
def submission_error_analysis(submission_id: int):
    """Per task: confusion matrix, calibration (reliability bins, ECE with its CI), the
    headline per slice beside the board's best, and the most confident errors (with signed
    media links where the data-access gate allows)."""
    _, result = error_analysis_for(api_user(), submission_id, external=True)
    return jsonify(result)
