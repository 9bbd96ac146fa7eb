"""The issuer's hot statements run on the session's own psycopg connection (PostgreSQL only).

A statement through SQLAlchemy's execution path costs the client about 60-110 µs of CPU (the
context, the cursor wrapper, the result object); the same statement on the driver's connection
about 20 µs. A receipt runs five, so the issuer runs them here: each SQLAlchemy statement is
compiled once (by the engine's dialect: the same SQL text, bind casts included, that SQLAlchemy
would send), its bind parameters processed by the same type processors, and executed on
``session.connection()``'s DBAPI connection, **inside the session's transaction** (psycopg
connections are not autocommit here; SQLAlchemy's transaction is the driver's). What is lost:
the engine's ``before_cursor_execute``/``after_cursor_execute`` events do not see these
statements (nothing in the app listens to them; the statement count test counts at the
driver's cursor instead).
"""
from __future__ import annotations

from psycopg.rows import namedtuple_row
from sqlalchemy.engine import Connection

#: (statement, dialect class) -> (SQL text, default binds, bind processors)
_COMPILED: dict[tuple, tuple[str, dict, tuple]] = {}


def _compiled(stmt, dialect) -> tuple[str, dict, tuple]:
    key = (stmt, type(dialect))
    found = _COMPILED.get(key)
    if found is None:
        c = stmt.compile(dialect=dialect)
        defaults, procs = {}, []
        for bind, name in c.bind_names.items():
            if not bind.required and bind.value is not None and not bind.callable:
                defaults[name] = bind.value
            proc = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if proc is not None:
                procs.append((name, proc))
        found = _COMPILED[key] = (str(c), defaults, tuple(procs))
    return found


def usable(conn: Connection) -> bool:
    """Whether ``conn`` (the session's connection) runs statements here: PostgreSQL through
    psycopg (3)."""
    return conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg"


def cursor(conn: Connection):
    """A cursor of ``conn``'s driver connection whose rows are named tuples (``row.salt``, as
    SQLAlchemy's rows); the caller closes it (or lets it go: it holds no server resource)."""
    return conn.connection.driver_connection.cursor(row_factory=namedtuple_row)


def execute(cur, conn: Connection, stmt, params: dict):
    """Run ``stmt`` (a SQLAlchemy statement; its binds in ``params``) on ``cur``; returns
    ``cur`` (``fetchone``/``fetchall`` for its rows)."""
    sql, defaults, procs = _compiled(stmt, conn.dialect)
    if defaults:
        params = {**defaults, **params}
    if procs:
        params = dict(params)
        for name, proc in procs:
            if name in params:
                params[name] = proc(params[name])
    return cur.execute(sql, params)
