"""The full rebuild on PostgreSQL builds fresh tables and swaps them in (issue 39): a reader on
another connection reads the old rows until the swap commits, and the swapped-in tables have
exactly the schema the models and migrations declare (names of the tables, indexes,
constraints and sequences; validated foreign keys; the old tables' grants)."""
from __future__ import annotations

import uuid

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, select, text

from leaderboard.server.boards import modality_ledger, rebuild, rebuild_swap
from leaderboard.server.models import Base
from leaderboard.server.models.standings import Standing, StandingBoard


# the swap is PostgreSQL's: only that database's variant of the boards fixtures (no skips)
pytestmark = pytest.mark.parametrize("boards_db_url", ["postgresql"], indirect=True)


@pytest.fixture
def pg_session(boards_session):
    assert boards_session.get_bind().dialect.name == "postgresql"
    return boards_session


def _case(s, make):
    bench = make.benchmark()
    teams = [make.team() for _ in range(3)]
    subs = [make.submission(bench, teams[i % 3] if i != 4 else None,
                            scores={"public": {"accuracy": 0.5 + i / 20, "fpr": 0.1},
                                    "private": {"accuracy": 0.4 + i / 30}})
            for i in range(7)]
    for i, sub in enumerate(subs):  # a modality's slice: rows on the modality boards
        for part in ("public", "private"):
            make.score(sub, part=part, task="detection", metric="accuracy",
                       value=0.3 + i / 40, slice_key="modality=image")
    s.commit()
    return bench, subs


def _schema(conn) -> dict:
    insp = inspect(conn)
    out = {}
    for t in ("standing", "standing_board"):
        out[t] = {
            "pk": insp.get_pk_constraint(t),
            "unique": sorted((u["name"], tuple(u["column_names"]))
                             for u in insp.get_unique_constraints(t)),
            "indexes": sorted((i["name"], tuple(i["column_names"]), i["unique"])
                              for i in insp.get_indexes(t)),
            "fks": sorted((f["name"], tuple(f["constrained_columns"]), f["referred_table"],
                           f["options"].get("ondelete")) for f in insp.get_foreign_keys(t)),
            "seq": conn.execute(text("SELECT pg_get_serial_sequence(:t, 'id')"),
                                {"t": t}).scalar(),
        }
    return out


def test_readers_keep_the_old_rows_until_the_swap(pg_session, make, monkeypatch):
    s = pg_session
    _bench, subs = _case(s, make)
    engine = s.get_bind()
    with engine.connect() as conn:
        before = _schema(conn)
    # a score changed behind the ledger's back: the standings are stale until the rebuild
    s.execute(text("UPDATE score SET value = 0.99 WHERE submission_id = :sid"
                   " AND part = 'public' AND metric = 'accuracy'"), {"sid": subs[0].id})
    s.commit()
    reader = create_engine(engine.url)
    seen = {}

    def shown(conn) -> float:
        cells = conn.execute(text(
            "SELECT st.cells_json FROM standing st JOIN standing_board b ON b.id = st.board_id"
            " WHERE st.submission_id = :sid AND b.part = 'public' AND b.slice_key = ''"),
            {"sid": subs[0].id}).scalar_one()
        return {m: v for m, v, *_ in cells["shown"]}["accuracy"]

    real_swap = rebuild_swap._swap

    def swap_watched(session):
        with reader.connect() as conn:
            # readers are not blocked by the build (only writers are)
            conn.execute(text("SET lock_timeout = '2s'"))
            seen["before_swap"] = shown(conn)
            seen["fresh"] = conn.execute(text(
                "SELECT count(*) FROM lb_fresh_standing")).scalar_one()
        real_swap(session)
        with reader.connect() as conn:  # the swap holds its lock until the commit
            conn.execute(text("SET lock_timeout = '200ms'"))
            with pytest.raises(Exception, match="lock timeout"):
                shown(conn)

    monkeypatch.setattr(rebuild_swap, "_swap", swap_watched)
    old_boards = dict(s.execute(select(StandingBoard.__table__.c.slice_key,
                                       StandingBoard.__table__.c.id)
                                .where(StandingBoard.__table__.c.part == "public")).all())
    rows = rebuild.rebuild(s)
    s.commit()
    with reader.connect() as conn:
        seen["after"] = shown(conn)
        fresh_left = conn.execute(text(
            "SELECT count(*) FROM pg_class WHERE relname LIKE 'lb_fresh%'")).scalar_one()
    reader.dispose()
    assert seen["before_swap"] != pytest.approx(0.99)
    assert seen["fresh"] == rows > 0
    assert seen["after"] == pytest.approx(0.99)
    assert fresh_left == 0
    # a board keeps its id when its key is unchanged
    assert dict(s.execute(select(StandingBoard.__table__.c.slice_key,
                                 StandingBoard.__table__.c.id)
                          .where(StandingBoard.__table__.c.part == "public")).all()) \
        == old_boards
    with engine.connect() as conn:
        assert _schema(conn) == before
        assert conn.execute(text(
            "SELECT bool_and(convalidated) FROM pg_constraint WHERE conrelid IN"
            " ('standing'::regclass, 'standing_board'::regclass)")).scalar_one()
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}),
                                Base.metadata)
    assert diff == []
    # the sequences go on: new rows get ids after the rebuilt ones
    top = s.scalar(select(Standing.__table__.c.id).order_by(Standing.__table__.c.id.desc())
                   .limit(1))
    nxt = s.scalar(text("SELECT nextval('standing_id_seq')"))
    assert nxt > top
    # the modality boards, rebuilt on several connections, equal the one-session rebuild
    parallel = _modality(s)
    assert parallel
    modality_ledger.rebuild_all(s)
    s.flush()
    assert _modality(s) == parallel


def _modality(s) -> list:
    return sorted(tuple(r) for r in s.execute(text(
        "SELECT b.modality, b.kind, b.split, b.rows, b.ranked, m.grp, m.sort_key, m.covered,"
        " m.ranked, m.is_baseline, m.n_items, CAST(m.cells_json AS text)"
        " FROM modality_standing m JOIN modality_board b ON b.id = m.board_id")))


def test_the_swap_keeps_owner_and_grants(pg_session, make):
    s = pg_session
    _case(s, make)
    role = f"lb_test_reader_{uuid.uuid4().hex[:8]}"
    s.execute(text(f'CREATE ROLE "{role}"'))
    s.execute(text(f'GRANT SELECT, INSERT ON standing TO "{role}"'))
    s.execute(text(f'GRANT SELECT ON standing_board TO "{role}"'))
    s.commit()
    try:
        rebuild.rebuild(s)
        s.commit()
        grants = s.execute(text(
            "SELECT table_name, privilege_type FROM information_schema.role_table_grants"
            " WHERE grantee = :r ORDER BY 1, 2"), {"r": role}).all()
        assert [tuple(g) for g in grants] == [("standing", "INSERT"), ("standing", "SELECT"),
                                              ("standing_board", "SELECT")]
    finally:
        s.rollback()
        s.execute(text(f'REVOKE ALL ON standing, standing_board FROM "{role}"'))
        s.execute(text(f'DROP ROLE "{role}"'))
        s.commit()


def test_a_failed_build_leaves_the_old_tables(pg_session, make, monkeypatch):
    s = pg_session
    _case(s, make)
    n = s.scalar(select(Standing.__table__.c.id).limit(1))
    assert n is not None

    def broken(engine):
        raise RuntimeError("index build failed")

    monkeypatch.setattr(rebuild_swap, "_finish", broken)
    with pytest.raises(RuntimeError, match="index build failed"):
        rebuild.rebuild(s)
    s.rollback()
    assert s.scalar(text("SELECT count(*) FROM pg_class WHERE relname LIKE 'lb_fresh%'")) == 0
    assert s.scalar(select(Standing.__table__.c.id).where(Standing.__table__.c.id == n)) == n


def test_a_writer_waits_for_the_swap_then_writes_the_new_tables(pg_session, make, monkeypatch):
    import threading
    s = pg_session
    _case(s, make)
    board_id = s.scalar(select(StandingBoard.__table__.c.id).limit(1))
    writer = create_engine(s.get_bind().url)
    done = {}

    def write():
        with writer.begin() as conn:
            conn.execute(text("SET LOCAL lock_timeout = '30s'"))
            done["n"] = conn.execute(text("UPDATE standing_board SET judge = 'late@1'"
                                          " WHERE id = :id"), {"id": board_id}).rowcount

    real_swap = rebuild_swap._swap
    thread = threading.Thread(target=write)

    def swap_later(session):
        thread.start()
        thread.join(timeout=1.0)
        done["waited"] = thread.is_alive()  # blocked by the rebuild's lock
        real_swap(session)

    monkeypatch.setattr(rebuild_swap, "_swap", swap_later)
    rebuild.rebuild(s)
    s.commit()
    thread.join(timeout=30)
    writer.dispose()
    assert done == {"waited": True, "n": 1}
    assert s.scalar(text("SELECT judge FROM standing_board WHERE id = :id"),
                    {"id": board_id}) == "late@1"
