"""Admin pages of a release's re-run campaign (issue 37): progress, budget, pause and resume.

Thin views over `leaderboard.server.services.reruns`: the page (or ``?format=json``) shows the
campaign's runs by state, the detectors waiting and the ones skipped with their reasons; the
form sets the budget (a count of runs and/or GPU hours; empty = no limit) or pauses and resumes.
Every change is audited, committed, then the campaign's next pass runs
(`leaderboard.server.jobs.reruns.advance`), which queues what the new budget allows.
"""
from __future__ import annotations

from flask import flash, jsonify, render_template, request
from flask_login import current_user

from leaderboard.core.errors import ProblemList
from leaderboard.server.access import audit
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.jobs.reruns import advance
from leaderboard.server.services import reruns
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.web.admin_base import _back, _fail, _ip, bp, progress_wants_json
from leaderboard.server.web.inputs import int_param

#: the largest GPU budget the form takes, in hours (a year)
MAX_GPU_HOURS = 24 * 366


@bp.get("/benchmarks/<key>/reruns")
def reruns_page(key: str):
    s = get_session()
    bench = get_benchmark(s, key)
    data = reruns.progress(s, bench)
    if progress_wants_json():
        return jsonify(data)
    return render_template("admin/reruns.html", p=data, bench=bench)


def _gpu_seconds(raw: str | None) -> int | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        hours = float(raw)
    except ValueError:
        hours = -1.0
    if not 0 <= hours <= MAX_GPU_HOURS:  # also refuses nan and inf
        problems = ProblemList()
        problems.add(f"must be a number of hours from 0 to {MAX_GPU_HOURS}, got {raw[:40]!r}",
                     field="max_gpu_hours")
        raise ServiceError("the budget was not changed", problems)
    return int(round(hours * 3600))


@bp.post("/benchmarks/<key>/reruns")
def reruns_update(key: str):
    s = get_session()
    form = request.form
    action = form.get("action", "")
    try:
        bench = get_benchmark(s, key)
        if bench.release < 2:
            raise ServiceError(f"{bench.key} is release {bench.release}: only a later release "
                               "has a re-run campaign")
        if action in ("pause", "resume"):
            reruns.set_paused(s, bench, action == "pause")
            detail = {"paused": action == "pause"}
        elif action == "budget":
            max_runs = int_param("max_runs", form.get("max_runs"), default=None)
            max_gpu = _gpu_seconds(form.get("max_gpu_hours"))
            reruns.set_budget(s, bench, max_runs=max_runs, max_gpu_seconds=max_gpu)
            detail = {"max_runs": max_runs, "max_gpu_seconds": max_gpu}
        else:
            raise ServiceError("action must be pause, resume or budget")
        audit.record(s, current_user, "admin.reruns.update", f"benchmark:{bench.key}", detail,
                     _ip())
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.reruns_page", key=key)
    queued = advance(bench.id)
    flash(f"{bench.key}: re-runs {action}" + (f"; {len(queued)} queued" if queued else "") + ".")
    return _back("admin.reruns_page", key=key)
