"""``/api/v1/challenges``: the challenges, one challenge (with its frozen results once it has
finished), one phase's board, and entering one (issue 33), mirroring the challenge pages
(`leaderboard.server.web.challenges`)."""
from __future__ import annotations

from flask import jsonify

from leaderboard.server.access import audit
from leaderboard.server.db import get_session
from leaderboard.server.services import challenges as svc
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.requests import api_user


@bp.get("/challenges")
def api_challenges():
    """Every challenge: phases with UTC dates, state, and the number of final selections."""
    return jsonify({"challenges": [svc.describe(c)
                                   for c in svc.list_challenges(get_session())]})


@bp.get("/challenges/<key>")
def api_challenge(key: str):
    """One challenge, with its frozen results once it has finished; ``entered`` says whether
    the caller's team has entered it (false without a caller)."""
    session = get_session()
    ch = svc.get_challenge(session, key)
    user = api_user(required=False)
    return jsonify({**svc.describe(ch), "results": ch.results_json,
                    "entered": svc.is_entrant(session, ch, user.team_id if user else None)})


@bp.post("/challenges/<key>/enter")
def api_enter_challenge(key: str):
    """Enter the caller's team in the challenge (idempotent): ``entered_now`` is false when it
    already had. Only an entrant's submissions may name the challenge."""
    user = api_user()
    session = get_session()
    ch = svc.get_challenge(session, key)
    now = svc.enter(session, user, ch, ip=audit.request_ip())
    session.commit()
    return jsonify({"challenge": ch.key, "benchmark": ch.benchmark.key, "entered": True,
                    "entered_now": now}), 201 if now else 200


@bp.get("/challenges/<key>/phases/<int:position>")
def api_phase_board(key: str, position: int):
    """One phase's board: the submissions made during the phase, ranked by the benchmark's
    board rules, per task (values with CI and n, rank intervals); ``source`` says whether it
    is live, frozen when the phase closed, or the challenge's final results."""
    session = get_session()
    ch = svc.get_challenge(session, key)
    return jsonify(svc.phase_board(session, ch, svc.get_phase(ch, position)))
