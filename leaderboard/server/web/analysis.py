"""The error analysis page of a team's own dev-split submission (issue 38).

Thin: the access check (`access.visibility.check_error_analysis`), the service
(`services.error_analysis`), the charts (`boards.plots.reliability_svg` beside the stored ROC /
PR curves), render. Thumbnails are signed media download links, minted only when the data-access
gate allows media and followed through the same download view (asked again there).
"""
from __future__ import annotations

from flask import Blueprint, abort, current_app, render_template, url_for
from flask_login import current_user
from markupsafe import Markup

from leaderboard.server.access import visibility
from leaderboard.server.boards import plots, reports
from leaderboard.server.db import get_session
from leaderboard.server.models import Submission
from leaderboard.server.services import downloads
from leaderboard.server.services import error_analysis as service
from leaderboard.server.web.requests import off_loop

bp = Blueprint("analysis", __name__)


def allowed_analysis(submission_id: int) -> tuple[Submission, dict]:
    """The submission and its analysis as ``current_user`` may see them (raises the refusals)."""
    session = get_session()
    sub = session.get(Submission, submission_id)
    if sub is None:
        abort(404, description=f"no submission {submission_id}")
    visibility.check_error_analysis(current_user, sub)
    cfg = current_app.config
    result = service.error_analysis(session, sub, data_dir=cfg["DATA_DIR"],
                                    label_keys=cfg["LABEL_KEYS"], run=off_loop)
    grants = visibility.error_detail_grants(session, current_user, sub)
    key = sub.benchmark.key

    def media_url(path: str) -> str:
        token = downloads.make_token(current_user, downloads.Target("media", key, path=path),
                                     secret_key=cfg["SECRET_KEY"])
        return url_for("access.download", token=token)

    return sub, service.apply_grants(result, grants, media_url=media_url)


@bp.get("/submissions/<int:submission_id>/errors")
def submission_errors(submission_id: int):
    sub, result = allowed_analysis(submission_id)
    curves = reports.curve_plots(get_session(), sub, "all")
    for a in result["tasks"]:
        cal = a["calibration"]
        a["reliability_svg"] = (Markup(plots.reliability_svg(
            cal["bins"], title=f"{a['task']}: reliability")) if cal else None)
        a["curve_svgs"] = [Markup(c["svg"]) for c in curves if c["task"] == a["task"]]
    return render_template("analysis/errors.html", sub=sub, result=result)
