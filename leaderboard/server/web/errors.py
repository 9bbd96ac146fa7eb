"""The one place errors become responses: JSON ``{"error", "message"}`` under ``/api``, an HTML
page elsewhere. Service errors carry their own status and user-facing message; anything
unexpected is logged, the session rolled back, and a 500 without internals returned."""
from __future__ import annotations

import logging

from flask import Flask, g, jsonify, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from leaderboard.core.errors import LeaderboardError
from leaderboard.server.services import ServiceError

log = logging.getLogger(__name__)


def wants_json() -> bool:
    if request.path.startswith("/api/"):
        return True
    best = request.accept_mimetypes.best_match(["text/html", "application/json"])
    return best == "application/json" and request.accept_mimetypes[best] > \
        request.accept_mimetypes["text/html"]


def error_response(status: int, code: str, message: str, **extra):
    if wants_json():
        resp = jsonify({"error": code, "message": message, **extra})
        resp.status_code = status
        return resp
    return render_template("errors/error.html", status=status, code=code, message=message,
                           problems=extra.get("problems", []),
                           total_problems=extra.get("total_problems", 0)), status


def _rollback() -> None:
    session = g.get("lb_session")
    if session is not None:
        session.rollback()


def register(app: Flask) -> None:
    @app.errorhandler(ServiceError)
    def _service_error(exc: ServiceError):
        _rollback()
        body = exc.as_dict()
        body.pop("message", None)
        return error_response(exc.status, exc.code, exc.message, **body)

    @app.errorhandler(LeaderboardError)
    def _leaderboard_error(exc: LeaderboardError):
        _rollback()
        body = exc.as_dict()
        body.pop("message", None)
        return error_response(400, "invalid", exc.message, **body)

    @app.errorhandler(CSRFError)
    def _csrf(exc: CSRFError):
        return error_response(400, "csrf", f"{exc.description} Reload the page and try again.")

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        _rollback()
        code = (exc.name or "error").lower().replace(" ", "_")
        message = exc.description or exc.name
        if exc.code == 413:
            limit = app.config["MAX_UPLOAD_MB"]
            message = (f"the request is larger than the {limit} MB upload limit; gzip the "
                       "predictions file (the server reads .jsonl.gz)")
        if exc.code == 429:
            message = f"too many requests ({exc.description}); wait a minute and try again"
        resp = error_response(exc.code or 500, code, message)
        return resp

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        _rollback()
        log.exception("unhandled error path=%s", request.path)
        return error_response(500, "internal_error",
                              "something went wrong on our side; it has been logged")
