"""The audit log is append-only on both backends, and its CSV export is formula-safe."""
from __future__ import annotations

import pytest
from sqlalchemy import delete, text, update
from sqlalchemy.exc import DBAPIError

from leaderboard.server.access import audit
from leaderboard.server.models.access import APPEND_ONLY_MESSAGE, AuditEvent


def test_database_refuses_update_and_delete(app, session):
    event = audit.record(session, None, "auth.login_failed", "user:ghost",
                         {"email": "ghost@example.org"}, "10.0.0.1")
    session.commit()
    for stmt in (update(AuditEvent).values(action="tampered"),
                 delete(AuditEvent),
                 text("UPDATE audit_event SET ip = '0.0.0.0'"),
                 text("DELETE FROM audit_event")):
        with pytest.raises(DBAPIError, match=APPEND_ONLY_MESSAGE):
            session.execute(stmt)
            session.commit()
        session.rollback()
    session.expire_all()
    kept = session.get(AuditEvent, event.id)
    assert (kept.action, kept.ip) == ("auth.login_failed", "10.0.0.1")


def test_postgres_refuses_truncate_too(pg_url):
    """SQLite has no TRUNCATE; PostgreSQL's row triggers do not fire for it, a statement one does."""
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    engine = create_engine(pg_url)
    with Session(engine) as session:
        audit.record(session, None, "auth.login_failed", "user:ghost", {}, "10.0.0.1")
        session.commit()
        before = session.scalar(text("SELECT count(*) FROM audit_event"))
        with pytest.raises(DBAPIError, match=APPEND_ONLY_MESSAGE):
            session.execute(text("TRUNCATE audit_event"))
        session.rollback()
        assert session.scalar(text("SELECT count(*) FROM audit_event")) == before >= 1
    engine.dispose()


def test_csv_export_filters_and_neutralises_formulas(world, app):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        audit.record(s, None, "auth.login_failed", "=HYPERLINK(\"http://evil\")",
                     {"email": "@evil"}, "10.0.0.2")
    admin = world.client("admin")
    body = admin.get("/admin/audit.csv?action=auth.").get_data(as_text=True)
    lines = body.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith('"id","at"')
    assert "\"'=HYPERLINK" in lines[1]
    page = admin.get("/admin/audit?action=access.").get_data(as_text=True)
    assert "access.sign" in page and "auth.login_failed" not in page


def test_audit_record_validates_its_input(session):
    with pytest.raises(ValueError, match="action"):
        audit.record(session, None, "")
    with pytest.raises(TypeError, match="detail"):
        audit.record(session, None, "x", detail=["not", "a", "dict"])
