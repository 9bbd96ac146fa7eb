"""PostgreSQL: the application's role can append to the transparency log and read it, never
change, empty or drop it; the owner is refused changes too (the triggers of revision 0016). Its
grants on the receipt and log tables are exactly what issuing receipts needs (issue 36)."""
from __future__ import annotations

import json

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from leaderboard.server.services import admin_ops
from leaderboard.server.models import Benchmark, Submission, User
from leaderboard.server.services.benchmarks import import_pack
from leaderboard.server.web import create_app
from tests.server.conftest import AuthActions, make_config
from tests.transparency.conftest import make_admin, post_predictions

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


#: every privilege the application role holds on the receipt and log tables, nothing more:
#: the log is appended to; a receipt state is created once and moved on in three columns
RECEIPT_GRANTS = {
    "log_entry": ({"SELECT", "INSERT"}, set()),
    "log_node": ({"SELECT", "INSERT"}, set()),
    "receipt_state": ({"SELECT", "INSERT"}, {"last_index", "state_digest", "flags_json"}),
}


def test_the_app_roles_grants_on_receipts_are_exactly_what_it_needs(roles):  # noqa: F811
    owner_url, app_url = roles
    role = app_url.split("://", 1)[1].split("@", 1)[0]
    engine = create_engine(owner_url)
    with engine.connect() as conn:
        for table, (table_privileges, updatable) in RECEIPT_GRANTS.items():
            got = set(conn.execute(text(
                "SELECT privilege_type FROM information_schema.role_table_grants "
                "WHERE grantee = :r AND table_name = :t"), {"r": role, "t": table}).scalars())
            assert got == table_privileges, (table, got)
            columns = set(conn.execute(text(
                "SELECT column_name FROM information_schema.column_privileges WHERE "
                "grantee = :r AND table_name = :t AND privilege_type = 'UPDATE'"),
                {"r": role, "t": table}).scalars())
            assert columns == updatable, (table, columns)
    with Session(engine) as s, s.begin():
        bench = Benchmark(key="b", title="b", version="1", pack_path="/x")
        s.add(bench)
        s.flush()
        row = Submission(benchmark_id=bench.id, split="dev", method_name="m", status="scored")
        s.add(row)
        s.flush()
        sub = row.id
    engine.dispose()
    # as the application role: the receipt chain's own statements work ...
    engine = create_engine(app_url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO receipt_state (submission_id, salt, last_index, "
                          "state_digest, flags_json) VALUES (:s, 'ab', 0, 'd', '{}')"),
                     {"s": sub})
        conn.execute(text("UPDATE receipt_state SET last_index = 1, state_digest = 'e', "
                          "flags_json = '{\"hidden\": true}' WHERE submission_id = :s"),
                     {"s": sub})
    engine.dispose()
    # ... and nothing else: no deleting a state (a fresh chain, a new salt), no new salt, no
    # moving a state to another submission, no emptying the table
    for sql in (f"DELETE FROM receipt_state WHERE submission_id = {sub}",
                f"UPDATE receipt_state SET salt = 'cd' WHERE submission_id = {sub}",
                f"UPDATE receipt_state SET submission_id = 0 WHERE submission_id = {sub}",
                "TRUNCATE receipt_state"):
        _refused(app_url, sql, "permission denied")


def test_receipts_are_issued_and_chained_as_the_app_role(roles, tmp_path, demo_packs,  # noqa: F811
                                                         baseline_files):
    """The real issuer, as the application role: a first receipt (INSERT of the state), then
    a hide and an unhide (its UPDATE), with no privilege beyond the grants above."""
    _, app_url = roles
    app = create_app(make_config(app_url, tmp_path))
    try:
        db = app.extensions["lb_db"]
        with app.app_context(), db.scope() as s:
            import_pack(s, demo_packs["syncred"], data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
        client = app.test_client()
        sid = post_predictions(client, AuthActions(client).member(),
                               baseline_files["dev"].read_bytes())
        admin_id = make_admin(app)
        for hidden in (True, False):
            with db.scope() as s:
                admin_ops.set_hidden(s, s.get(User, admin_id), s.get(Submission, sid), hidden)
        events = [json.loads(e["data"])["receipt"]["event"] for e in
                  client.get("/api/v1/log/entries?start=0").get_json()["entries"]]
        assert events == ["scored", "hidden", "unhidden"]
    finally:
        app.extensions["lb_db"].dispose()
