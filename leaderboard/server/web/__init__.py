"""The Flask application factory.

`create_app` only wires things together: configuration, the database, extensions, blueprints,
error handlers and commands. It runs no migrations, opens no network connection and never sleeps
(``python -m leaderboard db-upgrade`` builds the schema).
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from leaderboard.server import ops_counters
from leaderboard.server import db as dbmod
from leaderboard.server.config import REPO_ROOT, load_config
from leaderboard.server.services import sessions
from leaderboard.server.transparency import hook, keys
from leaderboard.server.web import errors, hardening
# every page module (importing admin, admin_builds and admin_judges attaches their routes to the
# admin blueprint, which lives in admin_base, before it is registered)
from leaderboard.server.web import (  # noqa: F401
    access,
    analysis,
    account,
    admin,
    admin_base,
    admin_builds,
    admin_challenges,
    admin_identity,
    admin_judges,
    admin_outbox,
    admin_reruns,
    auth,
    challenges,
    compare,
    decay,
    mail,
    ops,
    participate,
    public,
    robustness,
    submit,
    team,
    two_factor,
)
from leaderboard.server.web.api import bp as api_bp
from leaderboard.server.web.api import docs as api_docs
from leaderboard.server.web.api.transparency import wellknown
from leaderboard.server.web.extensions import csrf, limiter, login_manager
from leaderboard.server.web.inputs import install_converters


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app. ``config`` overrides the environment (tests pass a mapping)."""
    app = Flask(__name__, template_folder=str(REPO_ROOT / "templates"),
                static_folder=str(REPO_ROOT / "static"), instance_path=str(REPO_ROOT / "instance"))
    app.config.update(load_config(config))
    app.config["RATELIMIT_STORAGE_URI"] = app.config.get("REDIS_URL") or "memory://"
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    Path(app.config["DATA_DIR"]).mkdir(parents=True, exist_ok=True)
    logging.getLogger("leaderboard").setLevel(logging.INFO)

    db = dbmod.init_app(app)
    _init_counters(app, db)
    _init_transparency(app, db)
    _init_mail(db)
    _init_extensions(app)
    install_converters(app)  # <int:...> bounded to the database's ids, before any route binds
    _register_blueprints(app)

    errors.register(app)
    hardening.init_app(app)  # security headers and rate limits
    return app


def _init_counters(app: Flask, db) -> None:
    """Keep the submission counters of ``/metrics`` as commits happen (with Redis)."""
    conn = None
    if app.config.get("REDIS_URL"):
        import redis

        # short timeouts: an update runs after a commit and must not hold a request long
        conn = redis.Redis.from_url(app.config["REDIS_URL"], socket_connect_timeout=2,
                                    socket_timeout=2)
    app.extensions["lb_ops_counters_redis"] = conn
    ops_counters.install(db, conn)


def _init_transparency(app: Flask, db) -> None:
    """Sign a receipt into the transparency log on every commit that changes a submission."""
    try:
        keyring = keys.from_config(app.config)
    except ValueError as exc:
        raise ValueError(f"RECEIPT_SIGNING_KEY: {exc}") from None
    app.extensions["lb_keyring"] = keyring
    hook.install(db.Session, keyring)


def _init_mail(db) -> None:
    """Notices become digest lines, and committed outbox rows go to the mail job (issue 35)."""
    from leaderboard.server.jobs import mail

    mail.install(db.Session)


def _init_extensions(app: Flask) -> None:
    csrf.init_app(app)
    login_manager.init_app(app)
    limiter.init_app(app)

    @login_manager.user_loader
    def _load_user(key: str):
        # the cookies carry a server-side session key, checked on every request (logout,
        # a password change or a disabled account end it): leaderboard.server.services.sessions
        session = dbmod.get_session()
        user = sessions.user_for_key(session, key)
        if user is not None and user.login_touched:
            session.commit()  # last_seen_at, at most once a minute; loaded before any work
        return user


def _register_blueprints(app: Flask) -> None:
    csrf.exempt(api_bp)  # token-authenticated; browsers never send the token by themselves
    for bp in (auth.bp, account.bp, team.bp, submit.bp, api_bp, public.bp, access.bp,
               admin_base.bp, ops.bp, challenges.bp, api_docs.bp, participate.bp, compare.bp,
               robustness.bp, two_factor.bp, mail.bp, analysis.bp, decay.bp, wellknown):
        app.register_blueprint(bp)
