"""Challenge pages (issues 12 and 21): the list, one challenge (phases with UTC dates and
countdowns, "submit to this challenge", the board of its current phase, and the frozen results
once it has finished), each phase's board, and the results export.

A phase's board is ranked by the benchmark's board rules and frozen when the phase closes; the
challenge is finished by the reconciler (`leaderboard.server.jobs.reconcile`) or an admin. These
views only read. The JSON API mirrors them under ``/api/v1/challenges`` (`web/api/challenges.py`).
"""
from __future__ import annotations

from flask import Blueprint, Response, flash, json, redirect, render_template, url_for
from flask_login import current_user, login_required

from leaderboard.server.access import audit
from leaderboard.server.csvsafe import to_csv
from leaderboard.server.db import get_session
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import utcnow
from leaderboard.server.services import challenges as svc
from leaderboard.server.services.challenges.entrants import entrant_count
from leaderboard.server.services.challenges.timeline import board_phase
from leaderboard.server.web.public import render_markdown

bp = Blueprint("challenges", __name__, url_prefix="/challenges")


@bp.get("/")
def index():
    session = get_session()
    return render_template("challenges/index.html",
                           challenges=[svc.describe(c) for c in svc.list_challenges(session)])


def submit_link(ch) -> str | None:
    """The submit form on the challenge's own benchmark and open phase's split, submitting to
    the challenge; None when no phase takes submissions now."""
    phase = svc.phase_at(ch, utcnow())
    if phase is None or ch.finalized_at is not None:
        return None
    return url_for("submit.form", benchmark=ch.benchmark.key, split=phase.split,
                   challenge=ch.key)


@bp.get("/<key>")
def page(key: str):
    session = get_session()
    ch = svc.get_challenge(session, key)
    shown = board_phase(ch)
    team_id = current_user.team_id if current_user.is_authenticated else None
    return render_template("challenges/page.html", ch=svc.describe(ch), challenge=ch,
                           description=render_markdown(ch.description_md),
                           countdown=svc.countdown_target(ch), results=ch.results_json,
                           submit_url=submit_link(ch), entered=svc.is_entrant(session, ch, team_id),
                           entrants=entrant_count(session, ch),
                           pb=svc.phase_board(session, ch, shown) if shown else None)


@bp.post("/<key>/enter")
@login_required
def enter(key: str):
    """Enter the user's team in the challenge (any member may; once is enough)."""
    session = get_session()
    ch = svc.get_challenge(session, key)
    try:
        entered = svc.enter(session, current_user, ch, ip=audit.request_ip())
        session.commit()
    except ServiceError as exc:
        session.rollback()
        flash(exc.message, "error")
        return redirect(url_for("challenges.page", key=key)), 303
    flash(f"Your team has entered {ch.title}: submissions made to it follow its phases."
          if entered else f"Your team had already entered {ch.title}.")
    return redirect(url_for("challenges.page", key=key)), 303


@bp.get("/<key>/phases/<int:position>")
def phase_page(key: str, position: int):
    session = get_session()
    ch = svc.get_challenge(session, key)
    phase = svc.get_phase(ch, position)
    return render_template("challenges/phase.html", ch=svc.describe(ch),
                           pb=svc.phase_board(session, ch, phase), submit_url=submit_link(ch))


def _results(key: str) -> tuple[str, dict]:
    ch = svc.get_challenge(get_session(), key)
    if ch.results_json is None:
        raise NotFound(f"challenge {key!r} has not finished; its results are frozen when its "
                       "last phase closes")
    return ch.key, ch.results_json


@bp.get("/<key>/results.json")
def results_json(key: str):
    name, results = _results(key)
    return Response(json.dumps(results, indent=1), mimetype="application/json", headers={
        "Content-Disposition": f'attachment; filename="{name}-results.json"'})


@bp.get("/<key>/results.csv")
def results_csv(key: str):
    name, results = _results(key)
    header, rows = svc.results_rows(results)
    return Response(to_csv(rows, header=header), mimetype="text/csv", headers={
        "Content-Disposition": f'attachment; filename="{name}-results.csv"'})


