"""Robustness pages (issue 26): the board, a submission's run, admin budgets and builds.

Thin views over `boards.robustness` and `services.robustness` (the JSON API of the same board
and runs is `web/api/robustness.py`):

* ``/benchmarks/<key>/robustness`` (``?task=&split=&modality=``): the board, the method (suites,
  levels, items), and the dev copies' download link for agreement holders;
* ``/admin/robustness/<key>``: the budget form, build requests and the builds' progress
  (``?format=json`` for polling).
"""
from __future__ import annotations

from flask import Blueprint, current_app, jsonify, render_template, request, url_for
from flask_login import current_user
from markupsafe import Markup

from leaderboard.server.access.gate import can_access
from leaderboard.server.boards import robustness as rboards
from leaderboard.server.boards.robustness_plot import severity_svg
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.jobs.robustness import enqueue_build
from leaderboard.server.models import Submission
from leaderboard.server.services import robustness as svc
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.services.downloads import Target, make_token
from leaderboard.server.web.admin_base import _back, _fail, _ip, progress_wants_json
from leaderboard.server.web.admin_base import bp as admin_bp

bp = Blueprint("robustness", __name__)


def _dev_links(session, bench) -> list[dict]:
    """Download links of the dev copies the viewer may take now (none without a grant)."""
    if not current_user.is_authenticated:
        return []
    if not all(can_access(session, current_user, bench, w).allowed
               for w in ("items", "media", "dev_labels")):
        return []
    out = []
    for split in (bench.meta_json or {}).get("splits", []):
        if split == "test":
            continue
        if svc.current_build(session, bench, split,
                             data_dir=current_app.config["DATA_DIR"]) is None:
            continue
        token = make_token(current_user, Target("robustness", bench.key, split),
                           secret_key=current_app.config["SECRET_KEY"])
        out.append({"split": split, "url": url_for("access.download", token=token)})
    return out


@bp.get("/benchmarks/<key>/robustness")
def board_page(key: str):
    session = get_session()
    bench = get_benchmark(session, key)
    task, split = rboards.task_and_split(bench, request.args.get("task"), request.args.get("split"))
    board = rboards.board(session, bench, task, split, request.args.get("modality") or None)
    return render_template("robustness/board.html", bench=bench, board=board,
                           method=rboards.method(bench), downloads=_dev_links(session, bench),
                           tasks=(bench.meta_json or {}).get("tasks", []),
                           splits=(bench.meta_json or {}).get("splits", []))


def submission_section(session, sub: Submission) -> dict | None:
    """What the submission page shows of the track: run, plots (one per task x modality), the
    method statement and the records; None when the submission had no degraded run."""
    data = svc.submission_robustness(session, sub)
    if data is None:
        return None
    plots = []
    if data["run"]["status"] == "scored":
        for c in rboards.curves(session, sub):
            info = c["metric_info"]
            plots.append(Markup(severity_svg(
                c["series"], c["faint"], title=f"{c['task']} / {c['modality']}: "
                f"{info.get('title', c['metric'])} vs severity",
                y_label=info.get("title", c["metric"]), fmt=info.get("fmt", "num"),
                lower=info.get("lower"), upper=info.get("upper"))))
    return {**data, "plots": plots,
            "board_url": url_for("robustness.board_page", key=sub.benchmark.key,
                                 split=sub.split)}


# -- admin --------------------------------------------------------------------------------------
@admin_bp.get("/robustness/<key>")
def robustness_admin(key: str):
    session = get_session()
    bench = get_benchmark(session, key)
    builds = [b.as_dict() for b in svc.builds(session, bench)]
    if progress_wants_json():
        return jsonify({"benchmark": key, "builds": builds})
    return render_template("admin/robustness.html", bench=bench,
                           budget=svc.budget(session, bench), builds=builds,
                           method=rboards.method(bench), bounds=svc.BUDGET_BOUNDS)


@admin_bp.post("/robustness/<key>/budget")
def robustness_budget(key: str):
    session = get_session()
    bench = get_benchmark(session, key)
    f = request.form
    try:
        svc.set_budget(session, bench, current_user, enabled=f.get("enabled") == "on",
                       max_conditions=f.get("max_conditions"), max_items=f.get("max_items"),
                       wall_s=f.get("wall_s"), ip=_ip())
    except ServiceError as exc:
        return _fail(exc, "admin.robustness_admin", key=key)
    session.commit()
    return _back("admin.robustness_admin", key=key)


@admin_bp.post("/robustness/<key>/build")
def robustness_build(key: str):
    session = get_session()
    bench = get_benchmark(session, key)
    try:
        row = svc.request_build(session, bench, request.form.get("split", ""), current_user,
                                ip=_ip())
    except ServiceError as exc:
        return _fail(exc, "admin.robustness_admin", key=key)
    session.commit()
    enqueue_build(row.id)
    return _back("admin.robustness_admin", key=key)
