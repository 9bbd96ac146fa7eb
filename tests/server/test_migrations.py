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


def _row(table, **given) -> dict:
    """``given`` plus a plain value for every other NOT NULL column without a default."""
    import datetime as dt

    from sqlalchemy import Boolean, Date, DateTime, Integer, String, Text
    out = dict(given)
    for col in table.columns:
        if col.name in out or col.nullable or col.server_default is not None or (
                col.primary_key and isinstance(col.type, Integer)):
            continue
        t = col.type
        out[col.name] = (False if isinstance(t, Boolean) else
                         0 if isinstance(t, Integer) else
                         dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
                         if isinstance(t, DateTime) else dt.date(2026, 1, 1)
                         if isinstance(t, Date) else "x" if isinstance(t, (String, Text)) else {})
    return out


def test_0012_counts_existing_phase_submissions(empty_db):
    """Upgrading a database that holds a running phase's submissions links them to the phase
    and counts the ones that count (a cap already used stays used)."""
    import datetime as dt

    from sqlalchemy import MetaData, insert, select

    upgrade_database(empty_db, "0011")
    engine = create_engine(empty_db)
    meta = MetaData()
    meta.reflect(engine)
    t = meta.tables
    utc = dt.timezone.utc
    opens, closes = dt.datetime(2026, 1, 1, tzinfo=utc), dt.datetime(2026, 2, 1, tzinfo=utc)
    with engine.begin() as conn:
        conn.execute(insert(t["benchmark"]).values(_row(t["benchmark"], id=1, key="b")))
        conn.execute(insert(t["team"]).values(_row(t["team"], id=1, name="A")))
        conn.execute(insert(t["challenge"]).values(_row(t["challenge"], id=1, benchmark_id=1,
                                                        key="c")))
        conn.execute(insert(t["challenge_phase"]).values(_row(
            t["challenge_phase"], id=7, challenge_id=1, position=0, split="test",
            opens_at=opens, closes_at=closes)))
        for sid, when, counts, split in ((1, opens + dt.timedelta(days=1), True, "test"),
                                         (2, opens + dt.timedelta(days=2), True, "test"),
                                         (3, opens + dt.timedelta(days=3), False, "test"),
                                         (4, closes + dt.timedelta(days=1), True, "test"),
                                         (5, opens + dt.timedelta(days=1), True, "dev")):
            conn.execute(insert(t["submission"]).values(_row(
                t["submission"], id=sid, benchmark_id=1, team_id=1, split=split,
                created_at=when, counts_toward_quota=counts)))
    upgrade_database(empty_db)
    meta = MetaData()
    meta.reflect(engine)
    t = meta.tables
    with engine.connect() as conn:
        phases = {i: p for i, p in conn.execute(select(t["submission"].c.id,
                                                       t["submission"].c.phase_id))}
        usage = conn.execute(select(t["phase_usage"].c.team_id, t["phase_usage"].c.phase_id,
                                    t["phase_usage"].c.count)).all()
    engine.dispose()
    assert phases == {1: 7, 2: 7, 3: 7, 4: None, 5: None}
    assert [tuple(u) for u in usage] == [(1, 7, 2)]


def test_0023_gives_every_team_submission_its_method(empty_db):
    """Existing submissions keep their method names and get a method each (per team; not the
    baselines), with the latest description and links, and a free slug per team."""
    import datetime as dt

    from sqlalchemy import MetaData, insert, select

    upgrade_database(empty_db, "0021")
    engine = create_engine(empty_db)
    meta = MetaData()
    meta.reflect(engine)
    t = meta.tables
    day = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    with engine.begin() as conn:
        conn.execute(insert(t["benchmark"]).values(_row(t["benchmark"], id=1, key="b")))
        for tid in (1, 2):
            conn.execute(insert(t["team"]).values(_row(t["team"], id=tid, name=f"T{tid}",
                                                       invite_code=f"c{tid}")))
        for sid, team, name, paper, base in ((1, 1, "Net A", "https://a/1", False),
                                             (2, 1, "Net A", "https://a/2", False),
                                             (3, 1, "net-a", "", False),
                                             (4, 2, "Net A", "", False),
                                             (5, None, "Baseline: random", "", True)):
            conn.execute(insert(t["submission"]).values(_row(
                t["submission"], id=sid, benchmark_id=1, team_id=team, method_name=name,
                paper_url=paper, code_url="", description="", is_baseline=base,
                created_at=day + dt.timedelta(hours=sid))))
    upgrade_database(empty_db)
    meta = MetaData()
    meta.reflect(engine)
    m = meta.tables["method"]
    with engine.connect() as conn:
        got = sorted(tuple(r) for r in conn.execute(select(m.c.team_id, m.c.name, m.c.slug,
                                                           m.c.paper_url)))
    engine.dispose()
    assert got == [(1, "Net A", "net-a", "https://a/2"), (1, "net-a", "net-a-2", ""),
                   (2, "Net A", "net-a", "")]
