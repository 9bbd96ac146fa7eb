"""Method pages (issue 38, item 1): a team's named detector across the benchmarks, and its edit
form. Thin: `web.requests.method_view_for` (the same dict the API returns), the history plot
(`boards.history_plot.history_svg`, the board history's drawing), render; the edit form posts to
`services.methods.update_method`, which asks `access.methods.check_edit_method`."""
from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from markupsafe import Markup

from leaderboard.server.access import audit
from leaderboard.server.access.methods import check_edit_method
from leaderboard.server.boards.history_plot import history_svg
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.models.methods import CARD_LIMITS
from leaderboard.server.services import methods as method_service
from leaderboard.server.web.public import render_markdown
from leaderboard.server.web.requests import method_view_for

bp = Blueprint("methods", __name__)

#: the form's fields, in order, with their labels (``affiliation`` is the team's)
FIELDS = (("description", "Short description (Markdown)"), ("paper_url", "Paper link"),
          ("code_url", "Code link"), ("params", "Parameters"),
          ("training_data", "Training data"), ("input_resolution", "Input resolution"),
          ("licence", "Licence"), ("affiliation", "Team affiliation (all the team's methods)"))


@bp.get("/teams/<int:team_id>/methods/<slug>")
def method_page(team_id: int, slug: str):
    view = method_view_for(current_user, team_id, slug)
    m = view["method"]
    plots = []
    for r in view["results"]:
        col = next((c for c in r["columns"] if c["metric"] == r["primary"]), None) or {}
        steps = [{"at": h["at"], "submission_id": h["submission_id"],
                  "team": m["team"], "method_name": m["name"], "value": h["value"]}
                 for h in r["history"] if h["step"]]
        if len(r["history"]) > 1:
            plots.append(Markup(history_svg(
                {"best": [], "teams": [{"team": {"name": m["name"]}, "steps": steps}],
                 "column": col, "primary": r["primary"]},
                title=f"{r['benchmark']} {r['task'].get('title') or r['task']['key']} "
                      f"({r['split']}): best {col.get('title', r['primary'])}")))
    return render_template("methods/page.html", view=view, m=m,
                           description=render_markdown(m["description"]), plots=plots)


@bp.route("/teams/<int:team_id>/methods/<slug>/edit", methods=["GET", "POST"])
@login_required
def edit(team_id: int, slug: str):
    session = get_session()
    method = method_service.get_method(session, team_id, slug)
    check_edit_method(current_user, team_id,
                      on_boards=method_service.on_boards(session, method))
    problems = None
    if request.method == "POST":
        fields = {k: request.form.get(k, "") for k, _label in FIELDS}
        try:
            method_service.update_method(session, current_user, method, fields,
                                         ip=audit.request_ip())
            session.commit()
        except ServiceError as exc:
            session.rollback()
            problems = exc
            values = fields
        else:
            flash("Method page saved.")
            return redirect(url_for("methods.method_page", team_id=team_id,
                                    slug=method.slug)), 303
    if problems is None:
        values = {k: getattr(method, k) for k in CARD_LIMITS}
        values["affiliation"] = method_service.team_affiliation(session, team_id)
    return render_template("methods/edit.html", method=method, fields=FIELDS, values=values,
                           limits={**CARD_LIMITS, "affiliation": method_service.AFFILIATION_MAX},
                           error=problems), (400 if problems else 200)
