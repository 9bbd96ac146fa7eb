"""The interactive API reference: Swagger UI, served from the `swagger_ui_bundle` package (the
``swagger-ui-bundle-v2`` distribution; no CDN), reading ``/api/v1/openapi.json``.

Only the two files the page needs are served, from the package's folder. The page loads them
and ``static/js/api-docs.js`` (which starts Swagger UI) as files, so the site's CSP (no inline
scripts or styles) holds here too.
"""
from __future__ import annotations

from flask import Blueprint, abort, render_template, send_from_directory

from leaderboard.server.web.api.openapi import API_VERSION, server_version

bp = Blueprint("api_docs", __name__, url_prefix="/api/docs")

#: the files of the bundle the page uses
FILES = ("swagger-ui-bundle.js", "swagger-ui.css")


@bp.get("/")
def page():
    return render_template("api/docs.html", api_version=API_VERSION,
                           server_version=server_version())


@bp.get("/swagger/<name>")
def asset(name: str):
    if name not in FILES:
        abort(404)
    from swagger_ui_bundle import swagger_ui_path

    return send_from_directory(str(swagger_ui_path), name, max_age=86400)
