"""Challenge pages (issue 12): the list, one challenge (phases with UTC dates and countdowns,
its boards, and the frozen results once it has finished), and the results export.

A challenge is finished by the reconciler (`leaderboard.server.jobs.reconcile`); these views only
read. The JSON API mirrors them under ``/api/v1/challenges``.
"""
from __future__ import annotations

from flask import Blueprint, Response, json, jsonify, render_template

from leaderboard.server.csvsafe import to_csv
from leaderboard.server.db import get_session
from leaderboard.server.services import NotFound
from leaderboard.server.services import challenges as svc
from leaderboard.server.web.api import bp as api_bp

bp = Blueprint("challenges", __name__, url_prefix="/challenges")


@bp.get("/")
def index():
    session = get_session()
    return render_template("challenges/index.html",
                           challenges=[svc.describe(c) for c in svc.list_challenges(session)])


@bp.get("/<key>")
def page(key: str):
    from leaderboard.server.web.public import render_markdown

    session = get_session()
    ch = svc.get_challenge(session, key)
    target = svc.countdown_target(ch)
    return render_template("challenges/page.html", ch=svc.describe(ch), challenge=ch,
                           description=render_markdown(ch.description_md),
                           countdown=target, results=ch.results_json)


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


@api_bp.get("/challenges")
def api_challenges():
    """Every challenge: phases with UTC dates, state, and the number of final selections."""
    return jsonify({"challenges": [svc.describe(c)
                                   for c in svc.list_challenges(get_session())]})


@api_bp.get("/challenges/<key>")
def api_challenge(key: str):
    """One challenge, with its frozen results once it has finished."""
    ch = svc.get_challenge(get_session(), key)
    return jsonify({**svc.describe(ch), "results": ch.results_json})
