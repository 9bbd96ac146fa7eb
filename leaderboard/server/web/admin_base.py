"""The admin blueprint and what its view modules share (`admin`, `admin_builds`, `admin_judges`):
the admins-only guard, redirects back, failure flashing and progress-format negotiation.

The blueprint is defined here, below its view modules, so that they import it without importing
each other; `leaderboard.server.web` imports every view module, then registers the blueprint."""
from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, request, url_for
from flask_login import current_user

from leaderboard.core.errors import LeaderboardError
from leaderboard.server.access import audit
from leaderboard.server.access.admins import require_admin
from leaderboard.server.access.audit_display import label_for
from leaderboard.server.access.holders import team_holders
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import two_factor
from leaderboard.server.services.benchmarks import get_release
from leaderboard.server.web.inputs import safe_next

bp = Blueprint("admin", __name__, url_prefix="/admin")


@bp.before_request
def _admins_only():
    if not current_user.is_authenticated:
        return current_app.login_manager.unauthorized()
    require_admin(current_user)  # 403 for everyone else
    if current_app.config["ADMIN_REQUIRE_2FA"] and not two_factor.is_enabled(get_session(),
                                                                               current_user):
        flash("Administrators must set up two-factor sign-in before using the admin pages.",
              "error")
        return redirect(url_for("two_factor.setup", next=request.full_path.rstrip("?")))
    return None


def _ip() -> str:
    return audit.request_ip()


def _back(endpoint: str, **kw):
    return redirect(safe_next(request.form.get("next")) or url_for(endpoint, **kw)), 303


def _fail(exc: ServiceError | LeaderboardError, endpoint: str, **kw):
    get_session().rollback()
    lines = [str(p) for p in exc.problems.items]
    flash(exc.message + (": " + "; ".join(lines) if lines else ""), "error")
    return _back(endpoint, **kw)


def progress_wants_json() -> bool:
    """True when a progress page (rescore, judging, build) should answer JSON: its polling
    script asks with ``?format=json``; a client may also prefer JSON in ``Accept``."""
    return request.accept_mimetypes.best == "application/json" \
        or request.args.get("format") == "json"




@bp.app_template_global("agreement_label")
def agreement_label(benchmark, version: str | None) -> str:
    """An agreement version as its number and date for any page (not its 64-character hash;
    `leaderboard.server.access.audit_display.label_for`)."""
    return label_for(get_session(), benchmark, version)


def agreement_holders_for(board: dict) -> dict[int, list[str]] | None:
    """For an admin, which teams on ``board`` (a board page's rows) hold its benchmark's
    agreement (team id -> the members who hold it); None for everyone else, who see no
    marker. Boards are cached for everyone: an admin's page is rendered for them alone."""
    if not (current_user.is_authenticated and current_user.is_admin):
        return None
    session = get_session()
    return team_holders(session, get_release(session, board["benchmark"]),
                        [r["team"]["id"] for r in board.get("rows", []) if r["team"]["id"]])
