"""PostgreSQL roles: the application connects as a role that owns nothing.

The deploy guide (docs/deploy.md, "Database roles") creates two login roles: an **owner** that
runs the migrations and owns every table, and the **application** role that web and workers use
(``DATABASE_URL``). `grant_app_role`, run as the owner after every ``db-upgrade``
(``python -m leaderboard db-grant-app --role NAME``; `docker/boot.sh` does it when
``LB_DB_APP_ROLE`` is set), gives the application role exactly what the code needs:

* reading and writing every table, through SELECT, INSERT, UPDATE and DELETE only (no TRUNCATE,
  REFERENCES or TRIGGER), and the sequences behind their ids;
* on ``audit_event``: SELECT and INSERT only, so the append-only log cannot be changed, emptied or
  truncated by the application even if it were compromised; not owning it, the role cannot
  ALTER or DROP it or disable its triggers either (PostgreSQL reserves those to the owner), and
  the triggers of revisions 0003 and 0008 refuse UPDATE, DELETE and TRUNCATE to the owner too;
* on ``log_entry`` and ``log_node`` (the transparency log, issue 27): the same, SELECT and
  INSERT only (revision 0016's triggers refuse UPDATE, DELETE and TRUNCATE to the owner too);
* on ``receipt_state`` (each logged submission's salt and last receipt): SELECT, INSERT, and
  UPDATE of the three columns the receipt chain moves on (``last_index``, ``state_digest``,
  ``flags_json``; `leaderboard.server.transparency.issue`) only: no DELETE (a deleted row would
  start the submission's chain afresh, with a new salt) and no change of a salt or of the
  submission a row belongs to (issue 36);
* ``alembic_version``: SELECT only.

SQLite has no roles: `grant_app_role` refuses it.
"""
from __future__ import annotations

import re

from sqlalchemy import create_engine, text

_ROLE_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
#: tables the application may only read and append to
APPEND_ONLY = ("audit_event", "log_entry", "log_node")
READ_ONLY = ("alembic_version",)
#: tables the application reads, appends to, and updates in these columns only
APPEND_AND_UPDATE = {"receipt_state": ("last_index", "state_digest", "flags_json")}


def grant_statements(role: str, database: str) -> list[str]:
    """The GRANT/REVOKE statements that set up ``role`` on ``database`` (schema public)."""
    if not _ROLE_RE.match(role):
        raise ValueError(f"role must be a lowercase PostgreSQL identifier, got {role!r}")
    r = f'"{role}"'
    stmts = [
        f'GRANT CONNECT ON DATABASE "{database}" TO {r}',
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA public TO {r}",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {r}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {r}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {r}",
    ]
    for table in APPEND_ONLY:
        stmts.append(f'REVOKE UPDATE, DELETE ON "{table}" FROM {r}')
    for table in READ_ONLY:
        stmts.append(f'REVOKE INSERT, UPDATE, DELETE ON "{table}" FROM {r}')
    for table, columns in APPEND_AND_UPDATE.items():
        stmts.append(f'REVOKE UPDATE, DELETE ON "{table}" FROM {r}')
        cols = ", ".join(f'"{c}"' for c in columns)
        stmts.append(f'GRANT UPDATE ({cols}) ON "{table}" TO {r}')
    return stmts


def grant_app_role(owner_url: str, role: str) -> list[str]:
    """Run `grant_statements` on the database at ``owner_url`` (connected as its owner)."""
    engine = create_engine(owner_url)
    try:
        if engine.dialect.name != "postgresql":
            raise ValueError("database roles exist on PostgreSQL only")
        with engine.begin() as conn:
            database = conn.execute(text("SELECT current_database()")).scalar_one()
            stmts = grant_statements(role, database)
            for stmt in stmts:
                conn.execute(text(stmt))
    finally:
        engine.dispose()
    return stmts
