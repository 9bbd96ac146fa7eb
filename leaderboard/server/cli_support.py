"""What every server command needs: the app context, a clean exit on a user mistake, and the
schema upgrade (``db-upgrade``, ``run-demo``).

Imports inside functions here are lazy on purpose (start-up cost of ``leaderboard --help``), as in
`leaderboard.server.cli`.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import click


@contextmanager
def _app_context():
    """The current app if run by ``flask`` (or its test runner), else one from the environment."""
    from flask import current_app, has_app_context
    from flask.cli import ScriptInfo

    if has_app_context():
        yield current_app._get_current_object()
        return
    ctx = click.get_current_context(silent=True)
    info = ctx.find_object(ScriptInfo) if ctx is not None else None
    if info is not None:
        app = info.load_app()
    else:
        from leaderboard.server.web import create_app
        app = create_app()
    with app.app_context():
        yield app


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def upgrade_database(url: str, revision: str = "head") -> None:
    """``alembic upgrade <revision>`` against ``url`` (creates the SQLite folder if needed)."""
    # lazy: every server command imports this module, few upgrade
    from alembic import command
    from alembic.config import Config

    from leaderboard.server.config import REPO_ROOT

    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    cfg = Config(str(REPO_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    command.upgrade(cfg, revision)


def upgrade(app, revision: str = "head") -> None:
    """``db-upgrade``: the schema to ``revision``; at head, the boards' standings filled when
    empty (printing how many rows)."""
    upgrade_database(app.config["DATABASE_URL"], revision)
    if revision == "head":  # lazy, as above
        from leaderboard.server.boards import rebuild
        from leaderboard.server.db import get_db
        with get_db(app).scope() as session:
            filled = rebuild.fill_if_empty(session)
        if filled:
            click.echo(f"standings built: {filled} rows")
