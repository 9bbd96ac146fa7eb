"""The error analysis page of a team's own dev-split submission (issue 38).

Thin: the access check (`access.visibility.check_error_analysis`), the service
(`services.error_analysis`), the charts (`boards.plots.reliability_svg` beside the stored ROC /
PR curves), render. Thumbnails are signed media download links, minted only when the data-access
gate allows media and followed through the same download view (asked again there).
"""
from __future__ import annotations

from flask import Blueprint, render_template
from flask_login import current_user
from markupsafe import Markup

from leaderboard.server.boards import plots, reports
from leaderboard.server.db import get_session
from leaderboard.server.web.requests import error_analysis_for

bp = Blueprint("analysis", __name__)


@bp.get("/submissions/<int:submission_id>/errors")
def submission_errors(submission_id: int):
    sub, result = error_analysis_for(current_user, submission_id)
    curves = reports.curve_plots(get_session(), sub, "all")
    for a in result["tasks"]:
        cal = a["calibration"]
        a["reliability_svg"] = (Markup(plots.reliability_svg(
            cal["bins"], title=f"{a['task']}: reliability")) if cal else None)
        a["curve_svgs"] = [Markup(c["svg"]) for c in curves if c["task"] == a["task"]]
    return render_template("analysis/errors.html", sub=sub, result=result)
