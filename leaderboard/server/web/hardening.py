"""Production hardening, bound to an app by `init_app` (called last in `create_app`).

* Security headers on every response (OWASP Secure Headers): a Content-Security-Policy without
  inline scripts or styles (the templates load ``static/`` files only), frame denial, no MIME
  sniffing, a strict referrer policy, and HSTS on HTTPS requests.
* Session lifetime: ``SESSION_LIFETIME_S`` (default 12 h) signs the session cookie with a maximum
  age (Flask checks it on every load), ``REMEMBER_LIFETIME_S`` (default 14 days, Flask-Login's own
  default is a year) bounds the remember-me cookie. Cookie flags (Secure, HttpOnly, SameSite=Lax)
  are set by `leaderboard.server.config`; a production app without Secure cookies logs a warning.
* Body size: ``MAX_CONTENT_LENGTH`` (config: the larger of MAX_UPLOAD_MB and MAX_IMAGE_MB,
  + 1 MB) applies to the two upload endpoints (predictions files and image tarballs), which
  `leaderboard.server.web.uploads` checks (who, how big, the fields) before reading the file;
  every other request body is capped at ``MAX_BODY_BYTES`` (default 1 MiB) before any view or
  CSRF check reads it, so a multi-megabyte POST to /login is refused with 413 unread.
* Input: `leaderboard.server.web.inputs` refuses control characters anywhere in a request's
  text (400) before any view or query sees it.
* Rate limits (the shared Flask-Limiter, Redis-backed when ``REDIS_URL`` is set) on the endpoints
  that create accounts, tokens and submissions; POST /login already has ``LOGIN_RATE_LIMIT``.
  Registration is keyed by client address (there is no account yet); token creation and uploads
  by the caller (API token, else session user, else address) so that users behind one NAT or
  proxy do not share a bucket. The daily submission quota remains the real cap on submissions;
  this limit stops a client loop from filling the disk before the quota is reached.

* The paired comparison (page with both ids, and its API) is limited per caller
  (``COMPARE_RATE_LIMIT``, keyed like uploads) and for everyone together
  (``COMPARE_GLOBAL_RATE_LIMIT``): a comparison not yet cached costs up to a second of CPU
  (`leaderboard.server.services.compare`), and a flood of them must not starve the boards or
  ``/healthz``. Past either limit: 429 with ``Retry-After``.

* A refused request body is not read to its end (issue 24): any response of 400 or more to a
  request that carries a body says ``Connection: close``, and `close_refused` (a WSGI wrapper)
  makes gunicorn close the connection right after the answer instead of draining what the
  client still sends (gunicorn otherwise reads a refused 1 GiB upload to its end before the
  next request on the connection). ``leaderboard.server.gunicorn_conf.post_request`` lingers
  at most ``LINGER_S`` so the client reads the answer before the close.

* Client addresses behind a reverse proxy: with ``TRUSTED_PROXY_COUNT`` = n > 0, Werkzeug's
  ProxyFix takes the client address and scheme from the last n ``X-Forwarded-For`` /
  ``X-Forwarded-Proto`` hops; otherwise every client would share the proxy's rate-limit bucket.
  Leave it 0 when clients reach gunicorn directly (the headers could then be forged).

Settings (read from ``app.config`` with these defaults): ``REGISTER_RATE_LIMIT`` "5 per minute;
50 per day", ``TOKEN_RATE_LIMIT`` "10 per minute; 100 per day", ``SUBMIT_RATE_LIMIT``
"30 per minute", ``COMPARE_RATE_LIMIT`` "30 per minute", ``COMPARE_GLOBAL_RATE_LIMIT``
"120 per minute", ``MAX_BODY_BYTES`` 1048576, ``SESSION_LIFETIME_S`` 43200,
``REMEMBER_LIFETIME_S`` 1209600, ``TRUSTED_PROXY_COUNT`` 0, ``CLIENT_BODY_TIMEOUT_S`` 60 (an
upload whose body sends nothing for this long is answered 408 and dropped).
"""
from __future__ import annotations

import logging
from datetime import timedelta

from flask import Flask, current_app, request
from flask_limiter.util import get_remote_address
from flask_login import current_user
from werkzeug.middleware.proxy_fix import ProxyFix

from leaderboard.server.security import hash_token
from leaderboard.server.web import inputs, uploads
from leaderboard.server.web.extensions import limiter

log = logging.getLogger(__name__)

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
HSTS = "max-age=31536000; includeSubDomains"
#: endpoints whose bodies may reach MAX_CONTENT_LENGTH (predictions files, image tarballs)
UPLOAD_ENDPOINTS = uploads.UPLOAD_ENDPOINTS

DEFAULTS = {
    "REGISTER_RATE_LIMIT": "5 per minute;50 per day",
    "TOKEN_RATE_LIMIT": "10 per minute;100 per day",
    "SUBMIT_RATE_LIMIT": "30 per minute",
    "COMPARE_RATE_LIMIT": "30 per minute",
    "COMPARE_GLOBAL_RATE_LIMIT": "120 per minute",
    "MAX_BODY_BYTES": 1024 * 1024,
    "SESSION_LIFETIME_S": 12 * 3600,
    "REMEMBER_LIFETIME_S": 14 * 86400,
    "TRUSTED_PROXY_COUNT": 0,
    "CLIENT_BODY_TIMEOUT_S": 60,
}
_INT_SETTINGS = ("MAX_BODY_BYTES", "SESSION_LIFETIME_S", "REMEMBER_LIFETIME_S",
                 "TRUSTED_PROXY_COUNT", "CLIENT_BODY_TIMEOUT_S")


# Module-level providers (not lambdas): Flask-Limiter de-duplicates equal limits per view, and a
# process that builds several apps (the tests) must not stack one copy per app.
def _register_limit() -> str:
    return current_app.config["REGISTER_RATE_LIMIT"]


def _token_limit() -> str:
    return current_app.config["TOKEN_RATE_LIMIT"]


def _submit_limit() -> str:
    return current_app.config["SUBMIT_RATE_LIMIT"]


def _compare_limit() -> str:
    return current_app.config["COMPARE_RATE_LIMIT"]


def _compare_global_limit() -> str:
    return current_app.config["COMPARE_GLOBAL_RATE_LIMIT"]


def _everyone() -> str:
    return "everyone"


def _no_pair() -> bool:
    """The compare page without both ids is only the form: not counted."""
    return not (request.args.get("a") and request.args.get("b"))


#: the comparison's endpoints (page and API share both buckets)
COMPARE_ENDPOINTS = ("compare.compare_page", "api.compare_json")


def _password_limit() -> str:
    return current_app.config["LOGIN_RATE_LIMIT"]


def caller_key() -> str:
    """Rate-limit bucket of the caller: its API token (hashed), else its user, else its address.

    The token is hashed here, not looked up: a wrong token costs no query and gets its own
    (useless) bucket, and the API answers it 401 anyway.
    """
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return "token:" + hash_token(token.strip())[:32]
    if current_user and current_user.is_authenticated:
        return f"user:{current_user.id}"
    return "addr:" + (get_remote_address() or "unknown")


#: endpoint -> (limit provider, key function); POST only. The upload endpoints' limit is
#: counted by `leaderboard.server.web.uploads.gate` (`upload_rate_limit`), before the body.
RATE_LIMITS = {
    "auth.register": (_register_limit, get_remote_address),
    "team.create_token": (_token_limit, caller_key),
    "account.change_password": (_password_limit, caller_key),  # guessing the current one
}


def upload_rate_limit() -> None:
    """Count one upload against ``SUBMIT_RATE_LIMIT`` (429 past it); the upload gate calls
    the limited wrapper in ``app.extensions["lb_upload_rate_limit"]`` once the caller is known
    and before any body byte is read."""


def check_settings(config) -> None:
    """Validate the hardening settings; ValueError names the bad one."""
    for name in _INT_SETTINGS:
        value = config[name]
        low = 0 if name == "TRUSTED_PROXY_COUNT" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    for name in ("REGISTER_RATE_LIMIT", "TOKEN_RATE_LIMIT", "SUBMIT_RATE_LIMIT",
                 "COMPARE_RATE_LIMIT", "COMPARE_GLOBAL_RATE_LIMIT"):
        from limits import parse_many
        try:
            parse_many(config[name])
        except ValueError:
            raise ValueError(f"{name} is not a rate limit like '10 per minute', got "
                             f"{config[name]!r}") from None


def init_app(app: Flask) -> None:
    """Install headers, body caps, session lifetimes and rate limits on ``app``."""
    for name, value in DEFAULTS.items():
        app.config.setdefault(name, value)
    for name in _INT_SETTINGS:
        try:
            app.config[name] = int(app.config[name])
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be an integer, got {app.config[name]!r}") from None
    check_settings(app.config)
    app.config["PERMANENT_SESSION_LIFETIME"] = timedelta(seconds=app.config["SESSION_LIFETIME_S"])
    app.config["REMEMBER_COOKIE_DURATION"] = timedelta(seconds=app.config["REMEMBER_LIFETIME_S"])
    if not app.config.get("SESSION_COOKIE_SECURE") and not app.config.get("TESTING"):
        log.warning("session cookies are sent over plain http (COOKIE_SECURE=0): "
                    "use this only for local development")

    app.wsgi_app = close_refused(app.wsgi_app)
    proxies = app.config["TRUSTED_PROXY_COUNT"]
    if proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies)
    # First in line, in this order: the cap must be set before anything parses a body, control
    # characters refused before any view or query sees them, and uploads checked before
    # CSRFProtect's hook (which reads request.form) and the rate limiter.
    hooks = app.before_request_funcs.setdefault(None, [])
    hooks[0:0] = [_cap_body, inputs.refuse_control_characters, uploads.gate]
    app.after_request(_security_headers)
    app.after_request(_close_after_refused_body)

    app.extensions["lb_upload_rate_limit"] = limiter.limit(
        _submit_limit, key_func=caller_key, methods=["POST"])(upload_rate_limit)
    for endpoint, (provider, key_func) in RATE_LIMITS.items():
        view = app.view_functions.get(endpoint)
        if view is None:
            raise RuntimeError(f"hardening: endpoint {endpoint!r} is not registered; "
                               "update RATE_LIMITS")
        app.view_functions[endpoint] = limiter.limit(provider, key_func=key_func,
                                                     methods=["POST"])(view)
    per_caller = limiter.shared_limit(_compare_limit, scope="compare", key_func=caller_key,
                                      exempt_when=_no_pair)
    everyone = limiter.shared_limit(_compare_global_limit, scope="compare-all",
                                    key_func=_everyone, exempt_when=_no_pair)
    for endpoint in COMPARE_ENDPOINTS:
        view = app.view_functions.get(endpoint)
        if view is None:
            raise RuntimeError(f"hardening: endpoint {endpoint!r} is not registered; "
                               "update COMPARE_ENDPOINTS")
        app.view_functions[endpoint] = everyone(per_caller(view))


def _cap_body() -> None:
    if request.endpoint not in UPLOAD_ENDPOINTS:
        limit = current_app.config["MAX_BODY_BYTES"]
        cap = current_app.config.get("MAX_CONTENT_LENGTH")
        request.max_content_length = limit if cap is None else min(limit, cap)


def _security_headers(response):
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    if request.is_secure:
        response.headers.setdefault("Strict-Transport-Security", HSTS)
    return response


#: the WSGI environ key `close_refused` sets when the answer closes its connection
CLOSE_KEY = "lb.close_connection"


def _has_body() -> bool:
    return bool(request.content_length) or "chunked" in request.headers.get(
        "Transfer-Encoding", "").lower()


def _close_after_refused_body(response):
    if response.status_code >= 400 and _has_body():
        response.headers["Connection"] = "close"
    return response


def close_refused(wsgi_app):
    """WSGI wrapper: an answer that says ``Connection: close`` closes its connection.

    gunicorn drops hop-by-hop headers from the application and decides keep-alive itself, then
    drains an unread body before the next request; its ``start_response`` is a method of its
    response object, whose ``force_close()`` makes it send ``Connection: close`` and close the
    socket after the answer. Other servers are left to honour the header themselves.
    """
    def app(environ, start_response):
        def start(status, headers, exc_info=None):
            if any(k.lower() == "connection" and v.lower() == "close" for k, v in headers):
                environ[CLOSE_KEY] = True
                force_close = getattr(getattr(start_response, "__self__", None), "force_close",
                                      None)
                if callable(force_close):
                    force_close()
            return start_response(status, headers, exc_info)
        return wsgi_app(environ, start)
    return app
