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

from leaderboard import db as dbmod
from leaderboard.config import REPO_ROOT, load_config


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app. ``config`` overrides the environment (tests pass a mapping)."""
    app = Flask(__name__, template_folder=str(REPO_ROOT / "templates"),
                static_folder=str(REPO_ROOT / "static"), instance_path=str(REPO_ROOT / "instance"))
    app.config.update(load_config(config))
    app.config["RATELIMIT_STORAGE_URI"] = app.config.get("REDIS_URL") or "memory://"
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    Path(app.config["DATA_DIR"]).mkdir(parents=True, exist_ok=True)
    logging.getLogger("leaderboard").setLevel(logging.INFO)

    dbmod.init_app(app)
    _init_extensions(app)
    _register_blueprints(app)

    from leaderboard.web import errors
    errors.register(app)

    from leaderboard.server_cli import server
    app.cli.add_command(server)
    from leaderboard.web import hardening; hardening.init_app(app)  # headers, limits (issue 7)
    return app


def _init_extensions(app: Flask) -> None:
    from leaderboard.models import User
    from leaderboard.web.extensions import csrf, limiter, login_manager

    csrf.init_app(app)
    login_manager.init_app(app)
    limiter.init_app(app)

    @login_manager.user_loader
    def _load_user(user_id: str):
        try:
            uid = int(user_id)
        except ValueError:
            return None
        user = dbmod.get_session().get(User, uid)
        return user if user is not None and user.is_active else None


def _register_blueprints(app: Flask) -> None:
    from leaderboard.web import auth, submit, team
    from leaderboard.web.api import bp as api_bp
    from leaderboard.web.extensions import csrf

    app.register_blueprint(auth.bp)
    app.register_blueprint(team.bp)
    app.register_blueprint(submit.bp)
    csrf.exempt(api_bp)  # token-authenticated; browsers never send the token by themselves
    app.register_blueprint(api_bp)
    # Pages owned by the boards module (home, benchmark, boards, submission pages)
    from leaderboard.web import public
    app.register_blueprint(public.bp)
    from leaderboard.web import access, admin  # data access and the admin console (issue 4)
    app.register_blueprint(access.bp)
    app.register_blueprint(admin.bp)
    from leaderboard.web import ops; app.register_blueprint(ops.bp)  # health, metrics (issue 7)
