"""Engine and session handling.

Two lifetimes, both owned by the caller (never by a model or a service function):
- a request-bound session (`get_session`), opened on first use inside an app context and
  closed when the context ends; the view commits;
- plain sessions (`Database.session`, `Database.scope`) for jobs and commands.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.server.boards import hook

log = logging.getLogger(__name__)


def make_engine(url: str) -> Engine:
    """An engine with the per-backend settings the app relies on."""
    if url.startswith("sqlite"):
        # timeout: writers wait for the lock instead of failing at once (inline jobs, threads)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


class Database:
    """An engine and its session factory."""

    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        # expire_on_commit=False: objects stay readable after the view/job commits
        self.Session = sessionmaker(self.engine, expire_on_commit=False)
        # standings follow every commit that changes scores or a submission (issue 16); the
        # hook lives with the boards, which own the ranking rules
        hook.install(self.Session)

    def session(self) -> Session:
        """A new plain session; the caller closes it."""
        return self.Session()

    @contextmanager
    def scope(self) -> Iterator[Session]:
        """Commit on success, roll back on error, always close. The error that ended the block
        is the one raised, even when the rollback fails too (a dead connection)."""
        session = self.Session()
        try:
            yield session
            session.commit()
        except BaseException:
            close_session(session, rollback=True)
            raise
        else:
            close_session(session)

    def dispose(self) -> None:
        self.engine.dispose()


def init_app(app) -> Database:
    """Attach a `Database` to ``app`` and close request sessions at teardown."""
    db = Database(app.config["DATABASE_URL"])
    app.extensions["lb_db"] = db

    @app.teardown_appcontext
    def _close_session(exc):
        from flask import g
        session = g.pop("lb_session", None)
        if session is not None:
            close_session(session, rollback=exc is not None)

    return db


def close_session(session: Session, *, rollback: bool = False) -> None:
    """Roll back (if asked) and close ``session``, never raising: at teardown an exception would
    escape Flask (the WSGI server's own 500 page). A connection that died under the session
    (database restarted, connection terminated) is invalidated instead, so the pool drops it."""
    try:
        if rollback:
            session.rollback()
        session.close()
    except Exception:  # noqa: BLE001 - see above; logged, then the connection is discarded
        log.warning("closing a database session failed; its connection is discarded",
                    exc_info=True)
        discard_session(session)


def discard_session(session: Session) -> None:
    """Give up on ``session`` whose connection is broken: invalidate its connections (the pool
    replaces them) and forget its state. Never raises."""
    try:
        session.invalidate()
    except Exception:  # noqa: BLE001 - nothing more can be done with a dead connection
        log.debug("invalidating a broken session failed", exc_info=True)


def get_db(app=None) -> Database:
    """The `Database` of ``app`` (default: the current app)."""
    if app is None:
        from flask import current_app
        app = current_app
    return app.extensions["lb_db"]


def get_session() -> Session:
    """The session of the current app context (request or command), created on first use."""
    from flask import g
    session = g.get("lb_session")
    if session is None:
        session = g.lb_session = get_db().session()
    return session
