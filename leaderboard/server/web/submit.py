"""The upload form (with a progress bar) and "my submissions" (live status, failure reasons).

An upload is accepted by `leaderboard.server.web.intake.accept_upload`, shared with
``POST /api/v1/submissions``."""
from __future__ import annotations

import secrets

from flask import (
    Blueprint,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user, login_required

from leaderboard.server.access import audit
from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.db import get_session
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.services import benchmarks, releases, submissions
from leaderboard.server.services.challenges.rules import selection_rules, set_selected
from leaderboard.server.services.challenges.timeline import get_challenge
from leaderboard.server.services.eligibility import submit_menu
from leaderboard.server.services.headlines import headlines
from leaderboard.server.web.errors import wants_json
from leaderboard.server.web.intake import accept_upload, was_replayed

bp = Blueprint("submit", __name__)


def _menu(session):
    """The submit menu for the current user: every benchmark and split, open or why not."""
    return submit_menu(session, current_user, benchmarks.list_benchmarks(session),
                       rules=submissions.QuotaRules.from_config(current_app.config))


def _challenge_or_none(session, key: str):
    try:
        return get_challenge(session, key[:64])
    except NotFound:
        return None


def _selected(session, key: str) -> str:
    """The menu entry ``?benchmark=`` picks: the row key of the release it names (a family's
    name: its latest release, the one the menu offers)."""
    bench = releases.resolve(session, key[:64]) if key else None
    return bench.key if bench is not None else key


@bp.get("/submit")
@login_required
def form():
    session = get_session()
    menu = _menu(session) if current_user.team_id is not None else []
    wanted = (request.args.get("challenge") or "").strip()
    # ?challenge=<key> (the challenge page's link): the form submits to it, on its own
    # benchmark and open phase's split; the menu says why when it cannot
    entry = next((c for b in menu for c in b.challenges if c.key == wanted), None)
    entry_bench = next((b for b in menu for c in b.challenges if c is entry), None)
    wanted_ch = _challenge_or_none(session, wanted) if wanted and entry is None else None
    return render_template("submit/form.html", menu=menu,
                           offered=[b for b in menu if b.open],
                           wanted=wanted, entry=entry if entry and entry.open else None,
                           entry_reason=(entry.reason if entry else
                                         f"your team has not entered challenge {wanted!r}: "
                                         "enter it on its page first" if wanted_ch else
                                         f"there is no challenge {wanted[:64]!r}")
                           if wanted else "",
                           wanted_url=url_for("challenges.page", key=wanted)
                           if entry is not None or wanted_ch is not None
                           else url_for("challenges.index"),
                           entry_bench=entry_bench,
                           selected=_selected(session, request.args.get("benchmark", "")),
                           max_mb=current_app.config["MAX_UPLOAD_MB"],
                           idempotency_key=secrets.token_urlsafe(24))


@bp.post("/submit")
@login_required
def upload():
    sub = accept_upload(current_user, request.form, request.files)
    status_url = url_for("api.get_submission", submission_id=sub.id)
    if wants_json():
        resp = jsonify({**submissions.status_dict(sub, owner=True),
                        "status_url": status_url, "mine_url": url_for("submit.mine")})
        resp.status_code = 202
        if was_replayed():
            resp.headers["Idempotent-Replayed"] = "true"
        return resp
    flash(f"Submission {sub.id} was already received; its status is below." if was_replayed()
          else f"Submission {sub.id} received; its status updates below.")
    return redirect(url_for("submit.mine"))


@bp.get("/submissions/mine")
@login_required
def mine():
    session = get_session()
    subs = []
    menu = []
    if current_user.team_id is not None:
        subs = submissions.team_submissions(session, current_user.team_id)
        menu = _menu(session)
    return render_template("submit/mine.html", submissions=subs, menu=menu,
                           failure_lines=submissions.failure_lines,
                           headlines=headlines(session, subs),
                           rules={s.id: selection_rules(session, s) for s in subs
                                  if s.status == "scored" and not s.is_baseline
                                  and not s.hidden and not s.disqualified_reason})


@bp.post("/submissions/<int:submission_id>/select")
@login_required
def select(submission_id: int):
    """Mark or unmark a submission as one that represents the team on its board (Kaggle's
    final selection; the board then ranks the team by its selected ones)."""
    session = get_session()
    sub = submissions.get_submission(session, submission_id, current_user)
    chosen = request.form.get("value", "1") == "1"
    try:
        set_selected(session, current_user, sub, chosen, ip=audit.request_ip())
        session.commit()
    except ServiceError as exc:
        session.rollback()
        flash(exc.message, "error")
        return redirect(url_for("submit.mine")), 303
    invalidate_boards(sub.benchmark.key)
    flash(f"Submission {sub.id} {'now represents' if chosen else 'no longer represents'} your "
          f"team on the {sub.benchmark.title} {sub.split} board.")
    return redirect(url_for("submit.mine") + f"#submission-{sub.id}"), 303
