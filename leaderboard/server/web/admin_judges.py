"""Admin console: each benchmark's official judge, re-judging progress (issue 6), and how far
the offline judges are from the LLM judge on the benchmark's stored responses (issue 18).

Routes join the admin blueprint (its admins-only guard applies). Changing the official judge is
audited (`services.judging.set_official_judge`) and re-judges every scored submission of the
benchmark on the judge queue; the progress page counts their judging states. The agreement page
sends nothing to the LLM judge: it compares on the responses that judge has already mapped
(``python -m leaderboard judge-agreement --fill`` sends more).
"""
from __future__ import annotations

from flask import current_app, flash, jsonify, redirect, render_template, request, url_for
from flask_login import current_user

from leaderboard.judges.base import JudgeError
from leaderboard.server.access import audit
from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.jobs import judging as judge_jobs
from leaderboard.server.services import judge_agreement, judging
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.web.admin_base import _fail, bp, progress_wants_json
from leaderboard.server.web.inputs import int_param


@bp.app_context_processor
def _judge_choices():
    # the benchmarks page lists the judges this server can build (openai only when configured)
    return {"judge_choices": lambda: judging.judge_choices(current_app.config),
            "default_judge": lambda: judging.effective_judge(None, current_app.config)}


@bp.post("/benchmarks/<key>/judge")
def set_judge(key: str):
    s = get_session()
    try:
        bench = get_benchmark(s, key)
        ids = judging.set_official_judge(s, current_user, bench,
                                          request.form.get("judge", "").strip(),
                                          cfg=current_app.config, ip=audit.request_ip())
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.benchmarks")
    invalidate_boards(bench.key)
    for sid in ids:
        judge_jobs.enqueue_judging(sid, mark=False)
    flash(f"{bench.key}: official judge is now {bench.official_judge}; {len(ids)} submission(s) "
          "queued for re-judging.")
    return redirect(url_for("admin.judging_progress", key=key)), 303


@bp.get("/benchmarks/<key>/judging")
def judging_progress(key: str):
    s = get_session()
    progress = judging.judging_progress(s, get_benchmark(s, key))
    if progress_wants_json():
        return jsonify(progress)
    return render_template("admin/judging.html", p=progress)


@bp.get("/benchmarks/<key>/judge-agreement")
def judge_agreement_page(key: str):
    s = get_session()
    bench = get_benchmark(s, key)
    cfg = current_app.config
    reference = request.args.get("reference", "openai").strip()
    try:
        limit = int_param("limit", request.args.get("limit"),
                          default=judge_agreement.DEFAULT_LIMIT, low=1, high=5000)
    except ServiceError as exc:
        return _fail(exc, "admin.benchmarks")
    try:
        judging.identity_for(reference, cfg)
    except JudgeError as exc:
        report = {"benchmark": bench.key, "reference": reference, "unavailable": str(exc)}
    else:
        report = judge_agreement.report(s, bench, cfg, reference=reference, limit=limit)
    if progress_wants_json():
        return jsonify(report)
    return render_template("admin/judge_agreement.html", r=report)
