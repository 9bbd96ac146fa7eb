"""Decay across releases (issue 37): a family's detectors across its releases, and one
submission's history across releases (`leaderboard.server.boards.decay`). Public reads; a
submission's history only where its page may be seen."""
from __future__ import annotations

from flask import Response, jsonify

from leaderboard.server.boards import decay
from leaderboard.server.csvsafe import to_csv
from leaderboard.server.db import get_session
from leaderboard.server.services import submissions
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.requests import api_user, lazy_session


@bp.get("/boards/<key>/<task>/<split>/decay")
def decay_json(key: str, task: str, split: str):
    """Each top detector's headline on every release of ``key``'s family (a release's key or
    the family's name): ``releases`` (number, key, date), ``lines`` (one per detector: an
    original submission and its re-runs, or the same team and method), each with ``points``
    {release, submission_id, rerun_of_id, value, ci_low, ci_high, n, rank, of}: the numbers of
    the page's decay plot."""
    return jsonify(decay.decay_view(lazy_session, benchmark_key=key, task=task, split=split))


@bp.get("/boards/<key>/<task>/<split>/decay.csv")
def decay_csv(key: str, task: str, split: str):
    """The same points as CSV, one line per (detector, release)."""
    view = decay.decay_view(lazy_session, benchmark_key=key, task=task, split=split)
    rows = list(decay.decay_csv_rows(view))
    return Response(to_csv(rows[1:], header=rows[0]), mimetype="text/csv", headers={
        "Content-Disposition":
            f'attachment; filename="{view["family"]}-{task}-{split}-decay.csv"'})


@bp.get("/submissions/<int:submission_id>/releases")
def submission_releases_json(submission_id: int):
    """A submission's history across its benchmark's releases: its original and the platform's
    re-runs of it, per task {task, metric, points: [{release, benchmark_key, split,
    submission_id, rerun_of_id, value, ci_low, ci_high, n, rank, of, released_at}]} (the
    numbers of its page's "Across releases" table). 404 where its page would be."""
    session = get_session()
    sub = submissions.get_submission(session, submission_id, api_user(required=False))
    return jsonify({"submission_id": sub.id, "family": sub.benchmark.family,
                    "releases": decay.release_list(session, sub.benchmark.key),
                    "tasks": decay.submission_releases(session, sub)})
