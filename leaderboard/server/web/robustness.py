"""Robustness pages and API (issue 26): the board, a submission's run, admin budgets and builds.

Thin views over `boards.robustness` and `services.robustness`:

* ``/benchmarks/<key>/robustness`` (``?task=&split=&modality=``): the board, the method (suites,
  levels, items), and the dev copies' download link for agreement holders;
* ``/api/v1/robustness/<key>/<task>/<split>``: the same board as JSON;
* ``/api/v1/submissions/<id>/robustness``: a visible submission's degraded run and records
  (GET); a predictions team's opt-in upload for the dev copies (POST, `robustness_upload`);
* ``/admin/robustness/<key>``: the budget form, build requests and the builds' progress
  (``?format=json`` for polling).
"""
from __future__ import annotations

from flask import Blueprint, current_app, jsonify, render_template, request, url_for
from flask_login import current_user
from markupsafe import Markup

from leaderboard.server.access.downloads import Target, make_token
from leaderboard.server.access.gate import can_access
from leaderboard.server.access.visibility import can_see_submission
from leaderboard.server.boards import robustness as rboards
from leaderboard.server.boards.robustness_plot import severity_svg
from leaderboard.server.db import get_session
from leaderboard.server.models import Submission
from leaderboard.server.services import NotFound, ServiceError
from leaderboard.server.services import robustness as svc
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.web.admin_base import _back, _fail, _ip, progress_wants_json
from leaderboard.server.web.admin_base import bp as admin_bp
from leaderboard.server.web.api import api_user
from leaderboard.server.web.api import bp as api_bp

bp = Blueprint("robustness", __name__)


def _defaults(bench, task: str | None, split: str | None) -> tuple[str, str]:
    meta = bench.meta_json or {}
    tasks = [t["key"] for t in meta.get("tasks", [])]
    splits = meta.get("splits", [])
    task = task or (tasks[0] if tasks else "")
    split = split or ("test" if "test" in splits else (splits[0] if splits else ""))
    if task not in tasks:
        raise NotFound(f"{bench.key} has no task {task!r}; tasks: {tasks}")
    if split not in splits:
        raise NotFound(f"{bench.key} has no split {split!r}; splits: {splits}")
    return task, split


def _method(bench) -> dict | None:
    config = svc.config_of(bench)
    return None if config is None else config.describe()


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
    task, split = _defaults(bench, request.args.get("task"), request.args.get("split"))
    board = rboards.board(session, bench, task, split, request.args.get("modality") or None)
    return render_template("robustness/board.html", bench=bench, board=board,
                           method=_method(bench), downloads=_dev_links(session, bench),
                           tasks=(bench.meta_json or {}).get("tasks", []),
                           splits=(bench.meta_json or {}).get("splits", []))


@api_bp.get("/robustness/<key>/<task>/<split>")
def api_board(key: str, task: str, split: str):
    """The robustness board of a benchmark x task x split (``?modality=``) as JSON.

    Rows: clean headline on the subset, the mean per degradation, the worst case and the mean
    drop, each {value, ci_low, ci_high, n}, with the rank interval; plus the method statement."""
    session = get_session()
    bench = get_benchmark(session, key)
    task, split = _defaults(bench, task, split)
    board = rboards.board(session, bench, task, split, request.args.get("modality") or None)
    return jsonify({**board, "method": _method(bench)})


@api_bp.get("/submissions/<int:submission_id>/robustness")
def api_submission(submission_id: int):
    """A visible submission's degraded run (status, reason, method) and its robustness records."""
    session = get_session()
    sub = session.get(Submission, submission_id)
    user = api_user(required=False)
    if sub is None or not can_see_submission(user, sub):
        raise NotFound(f"no submission {submission_id}")
    return jsonify({"submission": sub.id, "robustness": svc.submission_robustness(session, sub)})


@api_bp.post("/submissions/<int:submission_id>/robustness")
def api_upload(submission_id: int):
    """A predictions team's opt-in: ``file`` = JSONL rows with ``condition`` (dev copies)."""
    from leaderboard.server.jobs.robustness_run import enqueue_scoring
    from leaderboard.server.services.robustness_upload import accept_predictions

    session = get_session()
    user = api_user()
    sub = session.get(Submission, submission_id)
    if sub is None or not can_see_submission(user, sub):
        raise NotFound(f"no submission {submission_id}")
    upload = request.files.get("file")
    if upload is None:
        raise ServiceError("send the predictions as the multipart field 'file'")
    cfg = current_app.config
    run = accept_predictions(session, sub, user, upload.read(), data_dir=cfg["DATA_DIR"],
                             max_bytes=int(cfg["MAX_UPLOAD_MB"]) * 1024 * 1024)
    session.commit()
    enqueue_scoring(sub.id)
    session.expire_all()
    return jsonify({"submission": sub.id, "robustness": svc.submission_robustness(
        session, session.get(Submission, submission_id))}), 202


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
                           method=_method(bench), bounds=svc.BUDGET_BOUNDS)


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
    from leaderboard.server.jobs.robustness import enqueue_build

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
