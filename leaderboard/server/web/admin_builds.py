"""Admin console: build a pack from the authors' release on the server, with progress (issue 8).

Routes join the admin blueprint (its admins-only guard applies). The form sits on the benchmarks
page (``templates/admin/_build_form.html``); starting a build is audited (``admin.pack.build``,
phase "start"; `leaderboard.server.jobs.builds.run_build` audits the end) and redirects to the progress
page, which `static/js/build.js` polls through ``?format=json``.
"""
from __future__ import annotations

from flask import abort, current_app, jsonify, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select

from leaderboard.builders import BENCHMARKS
from leaderboard.server.access import audit
from leaderboard.server.db import get_session
from leaderboard.server.jobs import builds as build_jobs
from leaderboard.server.models import Benchmark
from leaderboard.server.web.admin_base import bp, progress_wants_json


@bp.app_context_processor
def _build_choices():
    return {"build_keys": BENCHMARKS}


@bp.post("/builds")
def build_start():
    form = request.form
    try:
        req = build_jobs.check_request(
            key=form.get("benchmark"), source=form.get("source"), out=form.get("out"),
            dev_fraction=form.get("dev_fraction"), private_fraction=form.get("private_fraction"),
            seed=form.get("seed"), data_dir=current_app.config["DATA_DIR"],
            roots=current_app.config["PACK_ROOTS"])
    except build_jobs.BuildRequestError as exc:
        # the benchmarks page again, with the admin's values kept and every error listed
        rows = get_session().scalars(select(Benchmark).order_by(Benchmark.key)).all()
        return render_template("admin/benchmarks.html", rows=rows, build_errors=exc.errors,
                               build_form=form), 400
    s = get_session()
    audit.record(s, current_user, "admin.pack.build", f"benchmark:{req['benchmark']}",
                 {"phase": "start", "build": req["id"], "source": req["source"],
                  "out": req["out"], **req["options"]}, audit.request_ip())
    s.commit()
    build_id = build_jobs.start_build(req, actor_id=current_user.id)
    return redirect(url_for("admin.build_progress", build_id=build_id)), 303


@bp.get("/builds/<build_id>")
def build_progress(build_id: str):
    status = build_jobs.read_status(current_app.config["DATA_DIR"], build_id)
    if status is None:
        abort(404)
    if progress_wants_json():
        resp = jsonify(status)
        resp.headers["Cache-Control"] = "no-store"
        return resp
    return render_template("admin/build.html", b=status,
                           finished=status["state"] in build_jobs.FINISHED)
