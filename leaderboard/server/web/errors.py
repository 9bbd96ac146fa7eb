"""The one place errors become responses: JSON ``{"error", "message"}`` under ``/api``, an HTML
page elsewhere. Service errors carry their own status and user-facing message; anything
unexpected is logged, the session rolled back, and a 500 without internals returned.

An outage of the database or Redis (`OUTAGE`: a lost or refused connection, a pool or socket
timeout) is not a bug: it answers 503 with ``Retry-After`` (issue 17), so clients retry; uploads
are safe to retry with their idempotency key. The 503 page is a standalone template rendered
without Flask's context processors, so it touches neither the database nor the session user, and
an error page that fails to render falls back to plain HTML: no exception escapes Flask, in the
handlers or at teardown (`leaderboard.server.db`).
"""
from __future__ import annotations

import logging
import re

import redis
from flask import Flask, current_app, g, jsonify, make_response, render_template, request
from flask_wtf.csrf import CSRFError
from markupsafe import escape
from sqlalchemy import exc as sa_exc
from werkzeug.exceptions import HTTPException

from leaderboard.core.errors import LeaderboardError
from leaderboard.server.db import discard_session
from leaderboard.server.errors import ServiceError

log = logging.getLogger(__name__)

#: a dependency is down or unreachable: 503 + Retry-After, never 500
OUTAGE = (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError,
          redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
#: seconds a client should wait before retrying after a 503
RETRY_AFTER_S = 5


def outage_of(exc: BaseException) -> str | None:
    """``"the database"`` or ``"the job queue"`` when ``exc`` (or what caused it) is an
    `OUTAGE`, else None."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, OUTAGE):
            return "the job queue" if isinstance(exc, redis.exceptions.RedisError) \
                else "the database"
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


_LIST = re.compile(r"\[((?:'[^'\[\]]*'|\"[^\"\[\]]*\"|[\w.-]+)"
                   r"(?:, (?:'[^'\[\]]*'|\"[^\"\[\]]*\"|[\w.-]+))*)?\]")
_QUOTED = re.compile(r"'([^']*)'")
_LABELLED_LIST = re.compile(r"; (known|\w+): (\[[^\]]*\])")


def _words_of_list(match: re.Match) -> str:
    items = [i.strip().strip("'\"") for i in (match.group(1) or "").split(", ") if i.strip()]
    if not items:
        return "none"
    quoted = [f"\u201c{i}\u201d" for i in items]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _labelled(match: re.Match) -> str:
    label = match.group(1)
    lead = "the ones there are" if label == "known" else f"its {label.replace('_', ' ')} are"
    return f". {lead[0].upper()}{lead[1:]}: {match.group(2)}"


def in_words(message: str) -> str:
    """A service message as a sentence for the HTML error page (issue 21): a Python list such as
    ``known: ['a', 'b']`` becomes "The ones there are: “a” and “b”", quotes become typographic,
    and it starts with a capital and ends with a full stop. The JSON answer keeps the message
    as it is (scripts read it)."""
    text = (message or "").strip()
    if not text:
        return text
    if text.startswith("no "):
        text = "there is " + text
    text = _LABELLED_LIST.sub(_labelled, text)
    text = _LIST.sub(_words_of_list, text)
    text = _QUOTED.sub("\u201c\\1\u201d", text)
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


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
    try:
        if status == 404 and message.startswith("The requested URL was not found"):
            message = f"there is no page at {request.path}"  # werkzeug's words for a bad URL
        return render_template("errors/error.html", status=status, code=code,
                               message=in_words(message),
                               problems=extra.get("problems", []),
                               total_problems=extra.get("total_problems", 0)), status
    except Exception:  # noqa: BLE001 - e.g. the page's header needs the database, now down
        log.warning("error page status=%s did not render; plain page sent", status,
                    exc_info=True)
        _rollback()
        return _plain_page(status, message), status


def _plain_page(status: int, message: str) -> str:
    return (f"<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>{status}</title>"
            f"<h1>{status}</h1><p>{escape(message)}</p></html>")


def unavailable_response(what: str):
    """503 with Retry-After: ``what`` ("the database", "the job queue") is not answering."""
    message = (f"{what} is not answering right now; try again in {RETRY_AFTER_S} seconds "
               "(an upload sent again with the same idempotency key is never counted twice)")
    if wants_json():
        resp = jsonify({"error": "unavailable", "message": message,
                        "retry_after": RETRY_AFTER_S})
        resp.status_code = 503
    else:
        try:
            # Straight from the Jinja environment: Flask's render_template would run the
            # context processors, and Flask-Login's loads the session user from the database.
            body = current_app.jinja_env.get_template("errors/unavailable.html").render(
                message=message, retry_after=RETRY_AFTER_S)
        except Exception:  # noqa: BLE001 - never let the outage page itself fail
            body = _plain_page(503, message)
        resp = make_response(body, 503)
    resp.headers["Retry-After"] = str(RETRY_AFTER_S)
    resp.headers["Cache-Control"] = "no-store"
    g.lb_retry_after = RETRY_AFTER_S
    return resp


def _keep_retry_after(response):
    """Flask-Limiter rewrites ``Retry-After`` on every response of a rate-limited endpoint to
    the end of its window (up to a minute); an outage answer keeps its own."""
    seconds = g.get("lb_retry_after")
    if seconds is not None and response.status_code == 503:
        response.headers["Retry-After"] = str(seconds)
    return response


def _rollback() -> None:
    """Roll the request's session back; a dead connection cannot fail the error handler."""
    session = g.get("lb_session")
    if session is not None:
        try:
            session.rollback()
        except Exception:  # noqa: BLE001 - the connection is gone: drop the session instead
            g.pop("lb_session", None)
            discard_session(session)


def register(app: Flask) -> None:
    # First in the list, so it runs last (Flask calls after-request hooks in reverse order).
    app.after_request_funcs.setdefault(None, []).insert(0, _keep_retry_after)

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
        # an outage raised outside a view (an after-request hook) arrives wrapped in a 500
        what = outage_of(getattr(exc, "original_exception", None))
        if exc.code == 500 and what is not None:
            return unavailable_response(what)
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
        what = outage_of(exc)
        if what is not None:
            log.warning("dependency outage path=%s: %s: %s", request.path, type(exc).__name__,
                        str(exc).splitlines()[0][:200] if str(exc) else "")
            return unavailable_response(what)
        log.exception("unhandled error path=%s", request.path)
        return error_response(500, "internal_error",
                              "something went wrong on our side; it has been logged")
