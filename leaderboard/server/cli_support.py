"""What every server command needs: the app context and a clean exit on a user mistake.

Imports inside functions here are lazy on purpose (start-up cost of ``leaderboard --help``), as in
`leaderboard.server.cli`.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

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
