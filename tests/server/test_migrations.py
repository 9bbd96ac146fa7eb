"""Alembic is the only way the schema changes: one head, and `upgrade head` builds exactly the
models' schema on SQLite and PostgreSQL."""
from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text

from leaderboard.server.cli import upgrade_database
from leaderboard.server.config import REPO_ROOT
from leaderboard.server.models import Base


def test_single_head():
    script = ScriptDirectory.from_config(Config(str(REPO_ROOT / "alembic.ini")))
    assert len(script.get_heads()) == 1


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_db(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'mig.db'}"
        return
    from tests.server.conftest import PG_ADMIN_URL, _pg_available
    if not _pg_available():
        pytest.skip("PostgreSQL is not reachable")
    import secrets
    name = f"lb_mig_{secrets.token_hex(4)}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_upgrade_head_matches_models(empty_db):
    upgrade_database(empty_db)
    upgrade_database(empty_db)  # idempotent
    engine = create_engine(empty_db)
    with engine.connect() as conn:
        assert set(Base.metadata.tables) <= set(inspect(conn).get_table_names())
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(ctx, Base.metadata)
    engine.dispose()
    assert diff == []
