"""``/api/v1/challenges``: the challenges, one challenge (with its frozen results once it has
finished) and one phase's board, mirroring the challenge pages (`leaderboard.server.web.challenges`)."""
from __future__ import annotations

from flask import jsonify

from leaderboard.server.db import get_session
from leaderboard.server.services import challenges as svc
from leaderboard.server.web.api.base import bp


@bp.get("/challenges")
def api_challenges():
    """Every challenge: phases with UTC dates, state, and the number of final selections."""
    return jsonify({"challenges": [svc.describe(c)
                                   for c in svc.list_challenges(get_session())]})


@bp.get("/challenges/<key>")
def api_challenge(key: str):
    """One challenge, with its frozen results once it has finished."""
    ch = svc.get_challenge(get_session(), key)
    return jsonify({**svc.describe(ch), "results": ch.results_json})


@bp.get("/challenges/<key>/phases/<int:position>")
def api_phase_board(key: str, position: int):
    """One phase's board: the submissions made during the phase, ranked by the benchmark's
    board rules, per task (values with CI and n, rank intervals); ``source`` says whether it
    is live, frozen when the phase closed, or the challenge's final results."""
    session = get_session()
    ch = svc.get_challenge(session, key)
    return jsonify(svc.phase_board(session, ch, svc.get_phase(ch, position)))
