"""``/api/v1/submissions``: upload (multipart), status, and the caller's team's list."""
from __future__ import annotations

from flask import jsonify, request, url_for

from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.models.containers import container_status
from leaderboard.server.services import submissions
from leaderboard.server.services.headlines import headlines
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.inputs import int_param
from leaderboard.server.web.intake import accept_upload, preflight, was_replayed
from leaderboard.server.web.requests import api_user


@bp.post("/submissions")
def create_submission():
    """Multipart fields: file, benchmark, split, method_name, description, paper_url,
    code_url, is_public, kind, challenge (a key: the submission is made to that challenge, whose
    phases, split and caps then apply; the team must have entered it). benchmark, split,
    challenge and kind may also come in the query string: they are then checked before any byte
    of the body is read. Answers 202 with the status document (poll ``status_url``). With an
    ``Idempotency-Key`` header, a repeated upload answers the first one's submission (header
    ``Idempotent-Replayed: true``): safe to retry."""
    user = api_user()
    sub = accept_upload(user, request.form, request.files)
    body = submissions.status_dict(sub, owner=True)
    body["status_url"] = url_for("api.get_submission", submission_id=sub.id, _external=True)
    resp = jsonify(body)
    resp.status_code = 202
    resp.headers["Location"] = body["status_url"]
    if was_replayed():  # the same Idempotency-Key as an earlier upload: that submission
        resp.headers["Idempotent-Replayed"] = "true"
    return resp


@bp.get("/submissions/check")
def check_submission():
    """Pre-flight: would an upload to ``?benchmark=&split=`` (``&challenge=`` to submit to a
    challenge, ``&kind=container`` for an image) be accepted now? 200 with what it would count
    against (``quota``, ``phase``, ``phase_left``), or the refusal an upload would get (400 naming
    the field, 403, 404, 429), without sending a byte of the file. The client asks this first."""
    return jsonify(preflight(api_user(), request.args))


@bp.get("/submissions/<int:submission_id>")
def get_submission(submission_id: int):
    user = api_user(required=False)
    sub = submissions.get_submission(get_session(), submission_id, user)
    body = submissions.status_dict(sub, owner=submissions.is_owner(sub, user))
    body["failure_lines"] = (submissions.failure_lines(sub)
                             if submissions.is_owner(sub, user) else [])
    if sub.status == "scored":  # the headline numbers, as on "my submissions" (the CLI prints them)
        body["headline"] = headlines(get_session(), [sub]).get(sub.id, [])
        body["url"] = url_for("public.submission", submission_id=sub.id, _external=True)
    if sub.kind == "container" and submissions.is_owner(sub, user):
        body["container"] = container_status(sub, privileged=bool(user.is_admin))
    return jsonify(body)


@bp.get("/submissions")
def list_submissions():
    """The caller's team's submissions (``?mine``, the only listing for now), newest first."""
    user = api_user()
    if user.team_id is None:
        raise ServiceError("you are not in a team, so you have no submissions", status=404,
                           code="not_found")
    limit = int_param("limit", request.args.get("limit"), default=50, low=1, high=200)
    before = request.args.get("before")
    before = None if before is None else int_param("before", before, low=1, high=2**62)
    subs = submissions.team_submissions(get_session(), user.team_id, limit=limit,
                                        before=before)
    # keyset pagination: the next page is ?before=<last id> while a full page came back
    nxt = subs[-1].id if len(subs) == limit else None
    return jsonify({"submissions": [submissions.status_dict(s, owner=True) for s in subs],
                    "next_before": nxt})
