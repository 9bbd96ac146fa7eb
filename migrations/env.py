"""Alembic environment: runs revisions against DATABASE_URL (or ``sqlalchemy.url`` if set).

``render_as_batch`` lets revisions alter tables on SQLite (copy-and-move), so the same
revisions serve PostgreSQL in production and SQLite in the embedded setup.
"""
from __future__ import annotations

from alembic import context

from leaderboard.server.db import make_engine
from leaderboard.server.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from leaderboard.server.config import load_config
    return load_config()["DATABASE_URL"]


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:  # a caller (tests) handed us an open connection
        _run(connection)
        return
    engine = make_engine(_url())
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()


def _run(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
