"""``/api/v1`` for the robustness track (issue 26): a board as JSON, a visible submission's
degraded run and records, and a predictions team's opt-in upload for the dev copies
(`leaderboard.server.services.robustness_upload`). The pages are `leaderboard.server.web.robustness`."""
from __future__ import annotations

from flask import current_app, jsonify, request

from leaderboard.server.access.visibility import can_see_submission
from leaderboard.server.boards import robustness as rboards
from leaderboard.server.db import get_session
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.jobs.robustness_run import enqueue_scoring
from leaderboard.server.models import Submission
from leaderboard.server.services import robustness as svc
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.services.robustness_upload import accept_predictions
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.requests import api_user


@bp.get("/robustness/<key>/<task>/<split>")
def api_board(key: str, task: str, split: str):
    """The robustness board of a benchmark x task x split (``?modality=``) as JSON.

    Rows: clean headline on the subset, the mean per degradation, the worst case and the mean
    drop, each {value, ci_low, ci_high, n}, with the rank interval; plus the method statement."""
    session = get_session()
    bench = get_benchmark(session, key)
    task, split = rboards.task_and_split(bench, task, split)
    board = rboards.board(session, bench, task, split, request.args.get("modality") or None)
    return jsonify({**board, "method": rboards.method(bench)})


@bp.get("/submissions/<int:submission_id>/robustness")
def api_submission(submission_id: int):
    """A visible submission's degraded run (status, reason, method) and its robustness records."""
    session = get_session()
    sub = session.get(Submission, submission_id)
    user = api_user(required=False)
    if sub is None or not can_see_submission(user, sub):
        raise NotFound(f"no submission {submission_id}")
    return jsonify({"submission": sub.id, "robustness": svc.submission_robustness(session, sub)})


@bp.post("/submissions/<int:submission_id>/robustness")
def api_upload(submission_id: int):
    """A predictions team's opt-in: ``file`` = JSONL rows with ``condition`` (dev copies)."""
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
