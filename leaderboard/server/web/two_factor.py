"""Two-factor pages (issue 35): the code step of a login, and enrolment on the account.

The login page checks the password and, for an account with a second factor, hands over to
`challenge` (`leaderboard.server.web.auth.ask_second_factor`) without starting a session; only
a right code (or an unused recovery code) here starts one. Code attempts are rate-limited per
account (``TWO_FACTOR_RATE_LIMIT``), on top of the login's own limit.
Enrolment shows the secret and its ``otpauth://`` URI once (no QR image: the project carries
no QR library; apps accept the key typed or pasted), then the ten recovery codes once.
"""
from __future__ import annotations

import time

from flask import (
    Blueprint,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask import session as flask_session
from flask_login import current_user, login_required

from leaderboard.server.access import audit
from leaderboard.server.db import get_session
from leaderboard.server.models import User
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import two_factor
from leaderboard.server.web.auth import PENDING, _landing, log_in
from leaderboard.server.web.extensions import limiter
from leaderboard.server.web.inputs import safe_next

bp = Blueprint("two_factor", __name__)


def _pending() -> dict | None:
    data = flask_session.get(PENDING)
    if not isinstance(data, dict) or int(data.get("until", 0)) < time.time():
        return None
    return data


def _limit() -> str:
    return current_app.config["TWO_FACTOR_RATE_LIMIT"]


def _code_key() -> str:
    """One bucket per account whose code is being tried (the pending login's, else the signed-in
    user's), so that a guesser gains nothing by changing address."""
    data = _pending()
    if data is not None:
        return f"2fa:{data['user']}"
    if current_user.is_authenticated:
        return f"2fa:{current_user.id}"
    return f"2fa-ip:{request.remote_addr}"


@bp.route("/login/second-factor", methods=["GET", "POST"])
@limiter.limit(_limit, key_func=_code_key, methods=["POST"])
def challenge():
    data = _pending()
    if data is None:
        flask_session.pop(PENDING, None)
        flash("Your login waited too long for its code; log in again.", "error")
        return redirect(url_for("auth.login")), 303
    if request.method == "GET":
        return render_template("auth/second_factor.html", error=None)
    db = get_session()
    user = db.get(User, int(data["user"]))
    if user is None or not user.is_active:
        flask_session.pop(PENDING, None)
        return redirect(url_for("auth.login")), 303
    cfg = current_app.config
    try:
        used = two_factor.verify(db, user, request.form.get("code", ""),
                                 label_keys=cfg["LABEL_KEYS"], ip=audit.request_ip())
    except ServiceError as exc:
        db.commit()  # keep the audit record of the failure
        return render_template("auth/second_factor.html", error=exc.message), exc.status
    db.commit()
    flask_session.pop(PENDING, None)
    log_in(user, remember=bool(data.get("remember")))
    if used == "recovery":
        left = two_factor.codes_left(db, user)
        flash(f"You signed in with a recovery code; {left} left. Make new ones on your account "
              "page if you are running low.")
    return redirect(safe_next(data.get("next")) or _landing(user)), 303


def _setup_page(status: int = 200, **kw):
    db = get_session()
    user = current_user._get_current_object()
    row = two_factor.factor(db, user)
    kw.setdefault("error", None)
    return render_template(
        "account/two_factor.html", enabled=row is not None and row.enabled_at is not None,
        enabled_at=row.enabled_at if row is not None else None,
        codes_left=two_factor.codes_left(db, user),
        required=bool(user.is_admin and current_app.config["ADMIN_REQUIRE_2FA"]),
        next_url=safe_next(request.values.get("next")) or "", **kw), status


@bp.get("/account/two-factor")
@login_required
def setup():
    return _setup_page()


@bp.post("/account/two-factor/begin")
@login_required
def begin():
    db = get_session()
    cfg = current_app.config
    try:
        secret, uri = two_factor.begin(db, current_user._get_current_object(),
                                       label_keys=cfg["LABEL_KEYS"], issuer=cfg["TOTP_ISSUER"])
    except ServiceError as exc:
        db.rollback()
        return _setup_page(exc.status, error=exc.message)
    db.commit()
    # rendered, not redirected: the secret is shown on this answer only
    return _setup_page(secret=secret, uri=uri)


@bp.post("/account/two-factor/confirm")
@login_required
@limiter.limit(_limit, key_func=_code_key)
def confirm():
    db = get_session()
    cfg = current_app.config
    user = current_user._get_current_object()
    try:
        codes = two_factor.confirm(db, user, request.form.get("code", ""),
                                   label_keys=cfg["LABEL_KEYS"], ip=audit.request_ip())
    except ServiceError as exc:
        db.rollback()
        return _setup_page(exc.status, error=exc.message + " (start again to see a new key)")
    db.commit()
    return _setup_page(codes=codes)


@bp.post("/account/two-factor/codes")
@login_required
@limiter.limit(_limit, key_func=_code_key)
def regenerate():
    db = get_session()
    try:
        codes = two_factor.regenerate(db, current_user._get_current_object(),
                                      request.form.get("code", ""),
                                      label_keys=current_app.config["LABEL_KEYS"],
                                      ip=audit.request_ip())
    except ServiceError as exc:
        db.commit()  # the failure's audit record
        return _setup_page(exc.status, error=exc.message)
    db.commit()
    return _setup_page(codes=codes)


@bp.post("/account/two-factor/disable")
@login_required
@limiter.limit(_limit, key_func=_code_key)
def disable():
    db = get_session()
    try:
        two_factor.disable(db, current_user._get_current_object(),
                           password=request.form.get("password", ""),
                           code=request.form.get("code", ""),
                           label_keys=current_app.config["LABEL_KEYS"], ip=audit.request_ip())
    except ServiceError as exc:
        db.commit()  # the failure's audit record
        return _setup_page(exc.status, error=exc.message)
    db.commit()
    flash("Two-factor sign-in is off.")
    return redirect(url_for("two_factor.setup")), 303
