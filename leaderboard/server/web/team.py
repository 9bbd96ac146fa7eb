"""Team pages: create, join by invite code or invitation, leave, hand the captain's role on;
API tokens (created, listed, revoked); the team's notices (issue 21: agreement decisions,
submissions scored, failed or hidden), each dismissable; which member holds which data-use
agreement. Invitations (issue 35, `leaderboard.server.services.invitations`): the captain makes
a link (optionally for one address) and copies it to the invitee; the link's page answers
accept or decline; a bad link gets a page that says why (never a server error)."""
from __future__ import annotations

from flask import (
    Blueprint,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user, login_required

from leaderboard.server.access import audit
from leaderboard.server.access.holders import member_agreements
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import invitations, notices, teams, tokens
from leaderboard.server.web.inputs import int_param

bp = Blueprint("team", __name__, url_prefix="/team")


def _fail(exc: ServiceError):
    get_session().rollback()
    lines = [str(p) for p in exc.problems.items]
    flash(exc.message + (": " + "; ".join(lines) if lines else ""), "error")
    return redirect(url_for("team.index"))


def _page(new_token: str | None = None, invite_link: str | None = None):
    session = get_session()
    team = current_user.team
    members = list(team.members) if team else [current_user._get_current_object()]
    return render_template("team/index.html", team=team, members=members,
                           agreements=member_agreements(session, members),
                           notices=notices.active(session, current_user),
                           tokens=tokens.list_tokens(session, current_user), new_token=new_token,
                           invite_link=invite_link,
                           team_invitations=invitations.open_for_team(session, team)
                           if team and current_user.is_captain else [],
                           my_invitations=invitations.open_for_user(session, current_user)
                           if team is None else [])


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
        team = teams.create_team(session, current_user, name=request.form.get("name", ""),
                                 ip=audit.request_ip())
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
                               invite_code=request.form.get("invite_code", ""),
                               ip=audit.request_ip())
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
        teams.leave_team(session, current_user, ip=audit.request_ip())
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    flash("You left the team.")
    return redirect(url_for("team.index"))


@bp.post("/captain")
@login_required
def hand_over():
    session = get_session()
    try:
        member_id = int_param("member_id", request.form.get("member_id"), low=1)
        if member_id is None:
            raise ServiceError("choose a member to hand the role to")
        member = teams.hand_over(session, current_user, member_id, ip=audit.request_ip())
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    flash(f"{member.display_name} is the team's captain now.")
    return redirect(url_for("team.index")), 303


@bp.post("/invitations")
@login_required
def invite():
    session = get_session()
    cfg = current_app.config
    try:
        inv, token = invitations.create(session, current_user,
                                        email=request.form.get("email", ""),
                                        ttl_days=cfg["INVITE_TTL_DAYS"],
                                        secret_key=cfg["SECRET_KEY"], ip=audit.request_ip())
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    # rendered, not redirected: the link is shown once (only its hash is kept)
    return _page(invite_link=url_for("team.invitation", token=token, _external=True))


@bp.post("/invitations/<int:invitation_id>/revoke")
@login_required
def revoke_invitation(invitation_id: int):
    session = get_session()
    try:
        invitations.revoke(session, current_user, invitation_id, ip=audit.request_ip())
        session.commit()
    except ServiceError as exc:
        return _fail(exc)
    flash("Invitation withdrawn; its link no longer works.")
    return redirect(url_for("team.index")), 303


@bp.post("/invitations/<int:invitation_id>/<answer>")
@login_required
def answer_addressed(invitation_id: int, answer: str):
    """Accept or decline an invitation addressed to this account (listed on its team page)."""
    session = get_session()
    try:
        inv = invitations.addressed(session, invitation_id, current_user)
        return _answer(inv, answer)
    except ServiceError as exc:
        return _fail(exc)


def _answer(inv, answer: str):
    session = get_session()
    if answer == "accept":
        team = invitations.accept(session, current_user, inv, ip=audit.request_ip())
        message = f"You joined {team.name}."
    elif answer == "decline":
        invitations.decline(session, current_user, inv, ip=audit.request_ip())
        message = f"You declined the invitation to {inv.team.name}."
    else:
        raise ServiceError(f"unknown answer {answer!r}; use accept or decline", status=404,
                           code="not_found")
    session.commit()
    flash(message)
    return redirect(url_for("team.index")), 303


@bp.route("/invite/<token>", methods=["GET", "POST"])
@login_required
def invitation(token: str):
    """The page an invitation link opens: who invites to which team, accept or decline
    (POST with ``answer``). A link that cannot be used says why, with its status code."""
    session = get_session()
    try:
        inv = invitations.from_token(session, token, secret_key=current_app.config["SECRET_KEY"])
        if request.method == "POST":
            return _answer(inv, request.form.get("answer", ""))
        invitations.check_open(inv, current_user)
    except ServiceError as exc:
        session.rollback()
        return render_template("team/invitation.html", inv=None, error=exc.message), exc.status
    return render_template("team/invitation.html", inv=inv, error=None)


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


