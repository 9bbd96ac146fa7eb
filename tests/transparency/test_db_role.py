"""PostgreSQL: the application's role can append to the transparency log and read it, never
change, empty or drop it; the owner is refused changes too (the triggers of revision 0016)."""
from __future__ import annotations

from sqlalchemy import create_engine, text

from leaderboard.server.models.transparency import LOG_APPEND_ONLY_MESSAGE
from tests.server.test_db_roles import _refused, roles  # noqa: F401  (fixture)


def test_the_app_role_cannot_alter_the_log(roles):  # noqa: F811
    owner_url, app_url = roles
    engine = create_engine(app_url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO log_entry (idx, data, event, benchmark_key, created_at) "
                          "VALUES (0, '{}', 'scored', 'x', now())"))
        conn.execute(text("INSERT INTO log_node (key, hash) VALUES (0, '\\x00')"))
        assert conn.execute(text("SELECT count(*) FROM log_entry")).scalar_one() == 1
    engine.dispose()
    for table in ("log_entry", "log_node"):
        for sql in (f"TRUNCATE {table}", f"DELETE FROM {table}",
                    f"UPDATE {table} SET " + ("data = 'x'" if table == "log_entry"
                                              else "hash = hash")):
            _refused(app_url, sql, "permission denied")
        for sql in (f"ALTER TABLE {table} DISABLE TRIGGER ALL", f"DROP TABLE {table}",
                    f"DROP TRIGGER {table}_append_only ON {table}"):
            _refused(app_url, sql, "must be (the )?owner")
        for sql in (f"TRUNCATE {table}", f"DELETE FROM {table}"):
            _refused(owner_url, sql, LOG_APPEND_ONLY_MESSAGE)
