"""Team pages: create, join by invite code, leave; API tokens (created, listed, revoked); the
team's notices (issue 21: agreement decisions, submissions scored, failed or hidden), each
dismissable; which member holds which data-use agreement."""
from __future__ import annotations

from flask import Blueprint, flash, jsonify, redirect, render_template, request, url_for
from flask_login import current_user, login_required

from leaderboard.server.access import audit
from leaderboard.server.access.holders import member_agreements
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import notices, teams, tokens

bp = Blueprint("team", __name__, url_prefix="/team")


def _fail(exc: ServiceError):
    get_session().rollback()
    lines = [str(p) for p in exc.problems.items]
    flash(exc.message + (": " + "; ".join(lines) if lines else ""), "error")
    return redirect(url_for("team.index"))


def _page(new_token: str | None = None):
    session = get_session()
    team = current_user.team
    members = list(team.members) if team else [current_user._get_current_object()]
    return render_template("team/index.html", team=team, members=members,
                           agreements=member_agreements(session, members),
                           notices=notices.active(session, current_user),
                           tokens=tokens.list_tokens(session, current_user), new_token=new_token)


@bp.get("/")
@login_required
def index():
    return _page()


@bp.post("/notices/<int:notice_id>/dismiss")
@login_required
def dismiss_notice(notice_id: int):
    session = get_session()
    try:
        notices.dismiss(session, current_user, notice_id)
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    return redirect(url_for("team.index") + "#notices"), 303


@bp.post("/notices/dismiss-all")
@login_required
def dismiss_all_notices():
    session = get_session()
    n = notices.dismiss_all(session, current_user)
    session.commit()
    flash(f"{n} notice(s) dismissed.")
    return redirect(url_for("team.index")), 303


@bp.post("/create")
@login_required
def create():
    session = get_session()
    try:
        team = teams.create_team(session, current_user, name=request.form.get("name", ""))
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    flash(f"Team {team.name} created. Share the invite code with your teammates.")
    return redirect(url_for("team.index"))


@bp.post("/join")
@login_required
def join():
    session = get_session()
    try:
        team = teams.join_team(session, current_user,
                               invite_code=request.form.get("invite_code", ""))
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    flash(f"You joined {team.name}.")
    return redirect(url_for("team.index"))


@bp.post("/leave")
@login_required
def leave():
    session = get_session()
    try:
        teams.leave_team(session, current_user)
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    flash("You left the team.")
    return redirect(url_for("team.index"))


@bp.post("/invite-code")
@login_required
def new_invite():
    session = get_session()
    if current_user.team is None:
        return _fail(ServiceError("you are not in a team"))
    teams.new_invite_code(session, current_user.team)
    session.commit()
    flash("New invite code created; the old one no longer works.")
    return redirect(url_for("team.index"))


@bp.post("/tokens")
@login_required
def create_token():
    session = get_session()
    try:
        token, plain = tokens.create_token(session, current_user,
                                           name=request.form.get("name", ""))
        session.flush()
        audit.record(session, current_user, "token.create", f"api_token:{token.id}",
                     {"name": token.name, "prefix": token.prefix}, audit.request_ip())
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    # Rendered (not redirected) so the plaintext is shown exactly once and never stored.
    return _page(new_token=plain)


@bp.post("/tokens/<int:token_id>/revoke")
@login_required
def revoke_token(token_id: int):
    session = get_session()
    try:
        token = tokens.revoke_token(session, current_user, token_id)
        audit.record(session, current_user, "token.revoke", f"api_token:{token.id}",
                     {"name": token.name, "prefix": token.prefix}, audit.request_ip())
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    flash(f"Token {token.name} ({token.prefix}…) revoked.")
    return redirect(url_for("team.index"))


