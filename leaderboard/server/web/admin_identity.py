"""The review page of one access request (issue 35): what the signer answered, and who is
behind the account (`leaderboard.server.services.identity`): its address's domain
(institutional or free-mail), age, teams, the accounts marked as the same person and the
accounts that look like it; approve or deny there, and mark accounts as one person
(`leaderboard.server.services.persons`, audited). Routes attach to the admin blueprint."""
from __future__ import annotations

from flask import flash, render_template, request
from flask_login import current_user

from leaderboard.server.access.audit_display import agreement_versions, version_label
from leaderboard.server.access.agreements import request_fields
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import admin_ops, decisions, identity, persons
from leaderboard.server.web.admin_base import _back, _fail, _ip, bp
from leaderboard.server.web.inputs import int_param


@bp.get("/requests/<int:request_id>")
def review(request_id: int):
    s = get_session()
    req = decisions.get_request(s, request_id)
    labels = {f["key"]: f["label"] for f in request_fields(req.benchmark)}
    answers = [(labels.get(k, k), v) for k, v in (req.answers_json or {}).items()]
    versions = agreement_versions(s)
    return render_template("admin/review.html", r=req, answers=answers,
                           panel=identity.panel(s, req),
                           version=version_label(versions, req.benchmark_id,
                                                 req.agreement_version))


@bp.post("/persons/link")
def link_person():
    s = get_session()
    try:
        ids = sorted({int_param("user", v, low=1) for v in request.form.getlist("users")})
        users = [admin_ops.get_user(s, i) for i in ids]
        person = persons.link(s, current_user, users, note=request.form.get("note", ""),
                              ip=_ip())
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.requests_")
    flash(f"Marked {len(users)} accounts as one person (#{person.id}); quotas now count "
          "across them.")
    return _back("admin.requests_")


@bp.post("/persons/unlink/<int:user_id>")
def unlink_person(user_id: int):
    s = get_session()
    try:
        user = admin_ops.get_user(s, user_id)
        persons.unlink(s, current_user, user, ip=_ip())
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.requests_")
    flash(f"{user.email} is no longer marked as the same person as other accounts.")
    return _back("admin.requests_")
