"""Register, log in, log out (Flask-Login cookies over server-side sessions; login attempts
rate-limited). `log_in` is the one way a browser gets a session
(`leaderboard.server.services.sessions`); logging out revokes it."""
from __future__ import annotations

import time

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask import session as flask_session
from flask_login import current_user, login_required, login_user, logout_user

from leaderboard.server.access import audit
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import account_mail, accounts, sessions, two_factor
from leaderboard.server.web.extensions import limiter
from leaderboard.server.web.inputs import safe_next

bp = Blueprint("auth", __name__)
#: the signed-cookie key of a login waiting for its second factor, and how long it waits
PENDING = "lb_2fa_pending"
PENDING_S = 300


def log_in(user, *, remember: bool) -> None:
    """Start a server-side session for ``user`` and set the browser's cookies (commits)."""
    cfg = current_app.config
    db = get_session()
    sessions.start(db, user, remember=remember, lifetime_s=cfg["SESSION_LIFETIME_S"],
                   remember_s=cfg["REMEMBER_LIFETIME_S"], ip=audit.request_ip(),
                   user_agent=request.headers.get("User-Agent", ""))
    db.commit()
    login_user(user, remember=remember)


@bp.route("/register", methods=["GET", "POST"])
def register():
    if current_user.is_authenticated:
        return redirect(url_for("team.index"))
    form = {"email": "", "display_name": ""}
    problems: list = []
    if request.method == "POST":
        form = {"email": request.form.get("email", ""),
                "display_name": request.form.get("display_name", "")}
        session = get_session()
        try:
            user = accounts.register(session, password=request.form.get("password", ""), **form)
            session.flush()
            audit.record(session, user, "auth.register", f"user:{user.id}",
                         {"email": user.email}, audit.request_ip())
            account_mail.send_verification(session, user, current_app.config)  # issue 35
            session.commit()
        except ServiceError as exc:
            session.rollback()
            problems = [p.as_dict() for p in exc.problems.items] or [
                {"field": None, "message": exc.message}]
            return render_template("auth/register.html", form=form, problems=problems,
                                   message=exc.message), exc.status
        log_in(user, remember=False)
        flash(f"Welcome! We sent a link to {user.email}: follow it to verify your address. "
              "Create a team or join one with an invite code to start submitting.")
        return redirect(url_for("team.index"))
    return render_template("auth/register.html", form=form, problems=problems, message=None)


def _login_limit() -> str:
    return current_app.config["LOGIN_RATE_LIMIT"]


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(_login_limit, methods=["POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("team.index"))
    email = ""
    if request.method == "POST":
        email = request.form.get("email", "")
        session = get_session()
        user = accounts.authenticate(session, email=email,
                                     password=request.form.get("password", ""))
        if user is None:
            audit.record(session, None, "auth.login_failed", "",
                         {"email": accounts.normalize_email(email)}, audit.request_ip())
            session.commit()
            return render_template("auth/login.html", email=email,
                                   error="wrong email or password"), 401
        session.commit()  # a rehashed password, if the parameters were raised
        if two_factor.is_enabled(session, user):
            return ask_second_factor(user, remember=bool(request.form.get("remember")),
                                     next_url=safe_next(request.args.get("next")))
        log_in(user, remember=bool(request.form.get("remember")))
        return redirect(safe_next(request.args.get("next")) or _landing(user))
    return render_template("auth/login.html", email=email, error=None)


def ask_second_factor(user, *, remember: bool, next_url: str | None):
    """The password was right and the account has a second factor: no session yet; the
    browser's signed cookie remembers who is half-way (`PENDING`, for `PENDING_S`) and the
    code page (`leaderboard.server.web.two_factor`) finishes the login."""
    flask_session[PENDING] = {"user": user.id, "remember": remember, "next": next_url or "",
                              "until": int(time.time()) + PENDING_S}
    return redirect(url_for("two_factor.challenge")), 303


def _landing(user) -> str:
    """Where a login without ``next`` goes: admins to the admin home, others to their team."""
    return url_for("admin.home") if user.is_admin else url_for("team.index")


@bp.route("/logout", methods=["POST"])
@login_required
def logout():
    db = get_session()
    sessions.end(db, getattr(current_user, "login_key", None))  # both cookies stop working
    db.commit()
    logout_user()
    flash("You are logged out.")
    return redirect(url_for("auth.login"))
