"""Pages of the account's mail (issue 35): verify an address, recover a password, choose which
mail to get, one-click unsubscribe. Thin views over `leaderboard.server.services.account_mail`
and `leaderboard.server.services.mail_prefs`; the outbox rows they write are sent after the
commit (`leaderboard.server.jobs.mail`).

Rate limits: "send the link again" per account (``RESEND_RATE_LIMIT``); "Forgot your password"
per caller (``FORGOT_RATE_LIMIT``) and per address asked about (``FORGOT_ADDRESS_RATE_LIMIT``),
answered the same whether or not the address has an account. The unsubscribe POST needs no
login and no CSRF token (RFC 8058: a mail client posts ``List-Unsubscribe=One-Click``); its
signed link is the authority, and a GET only shows a button (link scanners follow GETs).
"""
from __future__ import annotations

import hashlib

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_limiter.util import get_remote_address
from flask_login import current_user, login_required, logout_user

from leaderboard.server.access import audit, verified
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import account_mail, mail_prefs
from leaderboard.server.services.accounts import address_problem, normalize_email
from leaderboard.server.services.mail_links import BadLink, read
from leaderboard.server.web.extensions import csrf, limiter

bp = Blueprint("mail", __name__)

FORGOT_ANSWER = ("If an account uses that address, a message with a link to choose a new "
                 "password is on its way. The link works once and for a limited time.")


def _cfg():
    return current_app.config


def _problems(exc: ServiceError) -> list[dict]:
    return [p.as_dict() for p in exc.problems.items] or [{"field": None, "message": exc.message}]


@bp.get("/verify-email/<path:token>")
def verify(token: str):
    session = get_session()
    try:
        user = account_mail.verify(session, token, _cfg())
        audit.record(session, user, "auth.email_verified", f"user:{user.id}",
                     {"email": user.email}, audit.request_ip())
        session.commit()
    except BadLink as exc:
        session.rollback()
        return render_template("mail/message.html", title="Link not accepted",
                               message=exc.message, error=True), 400
    return render_template("mail/message.html", title="Address verified",
                           message=f"Thank you: {user.email} is verified. You can now request "
                           "access to data sets and submit to held-out splits.", error=False)


def _resend_limit() -> str:
    return _cfg()["RESEND_RATE_LIMIT"]


def _user_key() -> str:
    return f"user:{current_user.get_id()}" if current_user.is_authenticated else \
        get_remote_address()


@bp.post("/verify-email/resend")
@login_required
@limiter.limit(_resend_limit, key_func=_user_key)
def resend():
    session = get_session()
    user = current_user._get_current_object()
    if user.email_verified_at is not None:
        flash(f"{user.email} is already verified.")
        return redirect(url_for("account.index"))
    account_mail.send_verification(session, user, _cfg())
    audit.record(session, user, "auth.verification_sent", f"user:{user.id}",
                 {"email": user.email}, audit.request_ip())
    session.commit()
    flash(f"A new verification link is on its way to {user.email}.")
    return redirect(url_for("account.index"))


def _forgot_limit() -> str:
    return _cfg()["FORGOT_RATE_LIMIT"]


def _forgot_address_limit() -> str:
    return _cfg()["FORGOT_ADDRESS_RATE_LIMIT"]


def _address_key() -> str:
    email = normalize_email(request.form.get("email", ""))
    return "forgot:" + hashlib.sha256(email.encode()).hexdigest()[:32]


@bp.route("/forgot-password", methods=["GET", "POST"])
@limiter.limit(_forgot_limit, methods=["POST"])
@limiter.limit(_forgot_address_limit, methods=["POST"], key_func=_address_key)
def forgot():
    if request.method == "GET":
        return render_template("mail/forgot.html", email="", problems=[], sent=False)
    email = normalize_email(request.form.get("email", ""))
    why = address_problem(email) if email else "required: the address of your account"
    if why:
        return render_template("mail/forgot.html", email=request.form.get("email", ""),
                               problems=[{"field": "email", "message": why}], sent=False), 400
    session = get_session()
    account_mail.request_reset(session, email, _cfg())
    audit.record(session, None, "auth.reset_requested", "",
                 {"email_sha256": hashlib.sha256(email.encode()).hexdigest()[:16]},
                 audit.request_ip())
    session.commit()
    return render_template("mail/forgot.html", email="", problems=[], sent=True)


@bp.route("/reset-password/<path:token>", methods=["GET", "POST"])
def reset(token: str):
    session = get_session()
    cfg = _cfg()
    try:
        user = account_mail.reset_user(session, token, cfg)
    except BadLink as exc:
        return render_template("mail/message.html", title="Link not accepted",
                               message=exc.message, error=True), 400
    revokes = bool(cfg["REVOKE_TOKENS_ON_RESET"])
    if request.method == "GET":
        return render_template("mail/reset.html", email=user.email, problems=[],
                               revokes_tokens=revokes)
    if request.form.get("new_password", "") != request.form.get("confirm_password", ""):
        return render_template("mail/reset.html", email=user.email, revokes_tokens=revokes,
                               problems=[{"field": "confirm_password",
                                          "message": "the two passwords differ"}]), 400
    try:
        user, ended = account_mail.reset(session, token, request.form.get("new_password", ""),
                                         cfg)
    except ServiceError as exc:
        session.rollback()
        return render_template("mail/reset.html", email=user.email, revokes_tokens=revokes,
                               problems=_problems(exc)), exc.status
    audit.record(session, user, "auth.password_reset", f"user:{user.id}", ended,
                 audit.request_ip())
    session.commit()
    if current_user.is_authenticated:
        logout_user()
    flash(f"Your password was changed: {ended['sessions_ended']} session(s) signed out and "
          f"{ended['tokens_revoked']} API token(s) revoked. Log in with the new password.")
    return redirect(url_for("auth.login"))


@bp.route("/account/mail", methods=["GET", "POST"])
@login_required
def settings():
    session = get_session()
    user = current_user._get_current_object()
    if request.method == "POST":
        on = {k for k in request.form.getlist("kind") if k in mail_prefs.KINDS}
        mail_prefs.set_kinds(session, user.id, on)
        audit.record(session, user, "mail.settings", f"user:{user.id}", {"on": sorted(on)},
                     audit.request_ip())
        session.commit()
        flash("Your mail settings are saved.")
        return redirect(url_for("mail.settings"))
    return render_template("mail/settings.html", kinds=mail_prefs.KINDS,
                           on=mail_prefs.enabled(session, user.id), problems=[], form={})


@bp.post("/account/email")
@login_required
def change_email():
    session = get_session()
    user = current_user._get_current_object()
    old = user.email
    try:
        account_mail.change_email(session, user, new_email=request.form.get("new_email", ""),
                                  password=request.form.get("password", ""), cfg=_cfg())
    except ServiceError as exc:
        session.rollback()
        return render_template("mail/settings.html", kinds=mail_prefs.KINDS,
                               on=mail_prefs.enabled(session, user.id), problems=_problems(exc),
                               form={"new_email": request.form.get("new_email", "")}), \
            exc.status
    audit.record(session, user, "auth.email_change", f"user:{user.id}",
                 {"from": old, "to": user.email}, audit.request_ip())
    session.commit()
    flash(f"Your address is now {user.email}; follow the link we sent there to verify it.")
    return redirect(url_for("mail.settings"))


@bp.route("/mail/unsubscribe/<path:token>", methods=["GET", "POST"])
@csrf.exempt
def unsubscribe(token: str):
    session = get_session()
    try:
        payload = read(_cfg()["SECRET_KEY"], "unsubscribe", token, max_age=None)
    except BadLink as exc:
        return render_template("mail/message.html", title="Link not accepted",
                               message=exc.message, error=True), 400
    kinds = [k for k in payload.get("k", []) if k in mail_prefs.KINDS]
    if request.method == "GET":
        return render_template("mail/unsubscribe.html", kinds=[mail_prefs.KINDS[k] for k in kinds],
                               token=token)
    mail_prefs.unsubscribe(session, payload["u"], kinds)
    audit.record(session, None, "mail.unsubscribe", f"user:{payload['u']}", {"kinds": kinds},
                 audit.request_ip())
    session.commit()
    return render_template("mail/message.html", title="Unsubscribed",
                           message="You will get no more mail of these kinds: "
                           + "; ".join(mail_prefs.KINDS[k] for k in kinds)
                           + ". Your account page has every mail setting.", error=False)


@bp.app_context_processor
def _verification_state():
    """``email_unverified``: the signed-in account is held back by the verified-address gate."""
    user = current_user
    return {"email_unverified": bool(
        getattr(user, "is_authenticated", False)
        and verified.needs_verification(user, required=_cfg()["REQUIRE_VERIFIED_EMAIL"]))}
