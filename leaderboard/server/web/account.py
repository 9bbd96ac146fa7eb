"""The account page: change the password, see and end login sessions and API tokens.

Every login (browser) and every API token of the user is listed with a button that ends it.
Changing the password ends every session, this browser's included, then starts a new one here:
a stolen cookie stops working the moment the password changes; with ``REVOKE_TOKENS_ON_RESET``
(default on) every API token is revoked too (issue 35; the page says so).
"""
from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, logout_user

from leaderboard.server.access import audit
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.models.sessions import LoginSession
from leaderboard.server.services import account_mail, accounts, sessions, tokens
from leaderboard.server.web.auth import log_in

bp = Blueprint("account", __name__, url_prefix="/account")


def _page(status: int = 200, problems: list | None = None):
    db = get_session()
    return render_template("account/index.html", sessions=sessions.active(db, current_user),
                           current_id=current_user.login_session_id,
                           tokens=tokens.list_tokens(db, current_user),
                           revokes_tokens=current_app.config["REVOKE_TOKENS_ON_RESET"],
                           problems=problems or []), status


@bp.get("/")
@login_required
def index():
    return _page()


@bp.post("/password")
@login_required
def change_password():
    db = get_session()
    user = current_user._get_current_object()
    remember = bool(getattr(db.get(LoginSession, user.login_session_id), "remember", False))
    try:
        accounts.change_password(db, user, current=request.form.get("current_password", ""),
                                 new=request.form.get("new_password", ""))
    except ServiceError as exc:
        db.rollback()
        flash(exc.message, "error")
        return _page(exc.status, [p.as_dict() for p in exc.problems.items])
    ended = account_mail.end_credentials(db, user, current_app.config,
                                         reason="password_change")
    audit.record(db, user, "auth.password_change", f"user:{user.id}", ended,
                 audit.request_ip())
    db.commit()
    log_in(user, remember=remember)  # this browser continues under a new session
    flash(f"Password changed; {ended['sessions_ended']} session(s) signed out, this one "
          f"included and renewed; {ended['tokens_revoked']} API token(s) revoked.")
    return redirect(url_for("account.index"))


@bp.post("/sessions/<int:session_id>/revoke")
@login_required
def revoke_session(session_id: int):
    db = get_session()
    row = sessions.revoke(db, current_user, session_id)
    audit.record(db, current_user, "auth.session_revoke", f"login_session:{row.id}",
                 {"ip": row.ip}, audit.request_ip())
    db.commit()
    if row.id == current_user.login_session_id:
        logout_user()
        flash("This browser's session has ended.")
        return redirect(url_for("auth.login"))
    flash("Session ended.")
    return redirect(url_for("account.index"))


@bp.post("/sessions/revoke-others")
@login_required
def revoke_other_sessions():
    db = get_session()
    ended = sessions.revoke_all(db, current_user.id, reason="others",
                                keep_id=current_user.login_session_id)
    audit.record(db, current_user, "auth.session_revoke_others", f"user:{current_user.id}",
                 {"sessions_ended": ended}, audit.request_ip())
    db.commit()
    flash(f"{ended} other session(s) ended.")
    return redirect(url_for("account.index"))


@bp.post("/tokens/<int:token_id>/revoke")
@login_required
def revoke_token(token_id: int):
    db = get_session()
    token = tokens.revoke_token(db, current_user, token_id)
    audit.record(db, current_user, "token.revoke", f"api_token:{token.id}",
                 {"name": token.name, "prefix": token.prefix}, audit.request_ip())
    db.commit()
    flash(f"Token {token.name} ({token.prefix}…) revoked.")
    return redirect(url_for("account.index"))
