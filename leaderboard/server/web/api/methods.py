"""Methods (issue 38): ``GET /api/v1/teams/<id>/methods`` (a team's methods),
``GET /api/v1/teams/<id>/methods/<slug>`` (a method's card, its results on the boards, its
submissions: the numbers of its HTML page, from the same `web.requests.method_view_for`) and
``PATCH`` of the same (the card; the team's members only, `access.methods`)."""
from __future__ import annotations

from flask import jsonify, request, url_for

from leaderboard.server.access import audit
from leaderboard.server.access.visibility import sees_team_private
from leaderboard.server.db import get_session
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import Team
from leaderboard.server.services import methods as method_service
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.requests import api_user, method_view_for


@bp.get("/teams/<int:team_id>/methods")
def team_methods(team_id: int):
    """The team's methods (those with a submission on a board; every one for its members)."""
    session = get_session()
    team = session.get(Team, team_id)
    if team is None:
        raise NotFound(f"no team {team_id}")
    user = api_user(required=False)
    listed = method_service.team_methods(session, team_id,
                                         everything=sees_team_private(user, team_id))
    return jsonify({"team": {"id": team.id, "name": team.name,
                             "affiliation": team.affiliation or ""},
                    "methods": [{**method_service.card(m, team),
                                 "url": url_for("api.method_json", team_id=team_id,
                                                slug=m.slug, _external=True)}
                                for m in listed]})


@bp.get("/teams/<int:team_id>/methods/<slug>")
def method_json(team_id: int, slug: str):
    """A method: its card, its results on the boards (rank, rank interval, value, CI and n as
    the boards show them) and its submissions."""
    view = method_view_for(api_user(required=False), team_id, slug, external=True)
    return jsonify(view)


@bp.patch("/teams/<int:team_id>/methods/<slug>")
def method_update(team_id: int, slug: str):
    """Change the method's card: a JSON object with any of description, paper_url, code_url,
    params, training_data, input_resolution, licence, affiliation (the team's)."""
    user = api_user()
    session = get_session()
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise ServiceError("the body must be a JSON object of the fields to change")
    method = method_service.get_method(session, team_id, slug)
    method_service.update_method(session, user, method, body, ip=audit.request_ip())
    session.commit()
    return jsonify(method_service.card(method, session.get(Team, team_id)))
