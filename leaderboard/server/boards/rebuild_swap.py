"""A full standings rebuild on PostgreSQL into fresh tables, swapped in at the end (issue 39).

The in-place rebuild (`leaderboard.server.boards.rebuild`) deletes every row, inserts them back
through the foreign-key triggers and the unique indexes, and drops the secondary indexes
meanwhile, so board reads wait for its commit. Here, for ``rebuild(session)`` of every benchmark:

1. the caller's transaction locks ``standing_board`` and ``standing`` in SHARE ROW EXCLUSIVE
   mode: readers go on reading them; writers (a scoring transaction's standings hook) wait for
   the swap, then write into the new tables (PostgreSQL looks a waiting statement's table up
   again by name); a second full rebuild waits for the first;
2. ``lb_fresh_standing_board`` and ``lb_fresh_standing`` are created bare (columns and defaults,
   the same sequences; no index, no foreign key) and committed on a connection of their own;
3. `WORKERS` connections each stage and count their share of the groups (a team's rows, or a
   team-less submission's, are in one share: `rebuild_sql.stage`); the board rows are made from the
   summed counts (a board keeps its id when its key is unchanged, so ids cached by readers or
   by a waiting writer stay right) and committed; then each worker writes its share's rows,
   counting the boards' counters as it writes, and commits;
4. the indexes are built after the fill, shared among the connections (sorted builds with
   ``maintenance_work_mem``); the foreign keys are added NOT VALID and validated (one anti-join
   each instead of a trigger call per row); the tables are analysed;
5. in the caller's transaction: the old tables are dropped and the fresh ones renamed to the
   names the models and migrations declare (tables, indexes, constraints; the sequences are
   re-owned), with the old tables' owner and grants. **The caller's session is then
   committed** (the swap must not hold its exclusive lock while the modality boards are
   rebuilt): the caller's transaction ends here, its earlier work committed with the swap.

On an error the fresh tables are dropped and the caller's transaction is left to roll back:
the old standings stay as they were.
"""
from __future__ import annotations

import json
import logging
import queue
import threading
import time

from sqlalchemy import UniqueConstraint, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from leaderboard.server.boards import modality_ledger
from leaderboard.server.boards import rebuild_sql as rb
from leaderboard.server.models.standings import ModalityBoard, Standing, StandingBoard

log = logging.getLogger(__name__)

#: connections that build shares of the boards at once (the machine's cores; one more only
#: adds switching)
WORKERS = 2
#: per connection: the representatives' window sort and the pick join in memory; index builds
WORK_MEM = "1GB"
MAINTENANCE_WORK_MEM = "1GB"
#: how long a worker waits for the board rows before giving up
_WAIT_S = 3600
FRESH = "lb_fresh_"
BOARD, ROWS = StandingBoard.__tablename__, Standing.__tablename__


def can_swap(session: Session) -> bool:
    """Whether this role may build and swap the tables: it owns them (or is a member of the
    owning role) and may create tables in their schema. The application role of a deploy
    with separate roles (`leaderboard.server.dbroles`) may not: it rebuilds in place."""
    return bool(session.scalar(text(
        "SELECT bool_and(pg_has_role(c.relowner, 'USAGE')"
        " AND has_schema_privilege(c.relnamespace, 'CREATE'))"
        " FROM pg_class c WHERE c.oid IN (CAST(:a AS regclass), CAST(:b AS regclass))"),
        {"a": BOARD, "b": ROWS}))


def rebuild_swapped(session: Session, bench_ids: list[int]) -> int:
    """Every benchmark's standings into fresh tables, swapped in; returns the rows written.
    Commits the caller's session (see the module docstring)."""
    engine = session.get_bind()
    session.execute(text(f"LOCK TABLE {BOARD}, {ROWS} IN SHARE ROW EXCLUSIVE MODE"))
    plan = rb._Plan(session, bench_ids)
    old_ids = {(b, sp, t, k, p): i for i, b, sp, t, k, p in session.execute(text(
        f"SELECT id, benchmark_id, split, task, slice_key, part FROM {BOARD}"))}
    t0 = time.perf_counter()
    _create_fresh(engine)
    try:
        total = _fill(engine, plan, old_ids) if plan.pairs else 0
        t1 = time.perf_counter()
        _finish(engine)
        t2 = time.perf_counter()
        _swap(session)
        session.commit()
    except BaseException:
        _drop_fresh(engine)
        raise
    log.info("standings swapped rows=%s fill_s=%.1f index_s=%.1f swap_s=%.1f", total,
             t1 - t0, t2 - t1, time.perf_counter() - t2)
    return total


# -- steps ---------------------------------------------------------------------------------------
def _settings(conn: Connection) -> None:
    # one statement per core already: no parallel workers on top; nothing here needs to wait
    # for its WAL flush (a crash before the swap leaves only fresh tables to drop)
    conn.execute(text(f"SET LOCAL work_mem = '{WORK_MEM}'"))
    conn.execute(text(f"SET LOCAL maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'"))
    conn.execute(text("SET LOCAL max_parallel_workers_per_gather = 0"))
    conn.execute(text("SET LOCAL max_parallel_maintenance_workers = 0"))
    conn.execute(text("SET LOCAL synchronous_commit = off"))
    conn.execute(text("SET LOCAL jit = off"))


def _create_fresh(engine: Engine) -> None:
    with engine.begin() as conn:
        for name in (ROWS, BOARD):
            conn.execute(text(f"DROP TABLE IF EXISTS {FRESH}{name}"))
        for name in (BOARD, ROWS):
            # columns, NOT NULL and defaults (the ids' sequences): nothing a row must pass
            conn.execute(text(f"CREATE TABLE {FRESH}{name} (LIKE {name} INCLUDING DEFAULTS)"))
        # the board table is small: its keys now, so the workers' join finds them
        conn.execute(text(f"ALTER TABLE {FRESH}{BOARD} ADD CONSTRAINT {FRESH}pk_{BOARD}"
                          " PRIMARY KEY (id)"))


def _drop_fresh(engine: Engine) -> None:
    try:
        with engine.begin() as conn:
            for name in (ROWS, BOARD):
                conn.execute(text(f"DROP TABLE IF EXISTS {FRESH}{name}"))
    except Exception:  # the error that stopped the rebuild is the one to report
        log.exception("fresh standings tables not dropped")


class _Worker(threading.Thread):
    """One connection's share: stage and count, wait for the boards, write the rows."""

    def __init__(self, engine: Engine, plan, k: int, out: queue.Queue):
        super().__init__(name=f"standings-rebuild-{k}", daemon=True)
        self.engine, self.plan, self.k, self.out = engine, plan, k, out
        self.inbox: queue.Queue = queue.Queue()

    def run(self) -> None:
        try:
            with self.engine.begin() as conn:
                _settings(conn)
                rb.stage(conn, self.plan, True, (self.k, WORKERS))
                self.out.put(("slices", self.k, rb.slice_counts(conn, self.plan)))
                by_order = self.inbox.get(timeout=_WAIT_S)
                if by_order is None:
                    raise RuntimeError("standings rebuild stopped")
                counts: dict[int, list[int]] = {}
                for sig, ids in by_order.items():
                    got = rb.fill(conn, self.plan, True, sig, ids, table=FRESH + ROWS,
                                  board_table=FRESH + BOARD, count=True)
                    for bid, c in got.items():
                        counts[bid] = c
                rb.drop_stage(conn)
            self.out.put(("rows", self.k, counts))
        except BaseException as exc:  # reported to the coordinating thread
            self.out.put(("error", self.k, exc))


def _fill(engine: Engine, plan, old_ids: dict) -> int:
    out: queue.Queue = queue.Queue()
    workers = [_Worker(engine, plan, k, out) for k in range(WORKERS)]
    for w in workers:
        w.start()
    try:
        slices = _collect(out, "slices")
        by_order = _write_boards(engine, plan, [r for rows in slices for r in rows], old_ids)
        for w in workers:
            w.inbox.put(by_order)
        counts = _collect(out, "rows")
    except BaseException:
        for w in workers:
            w.inbox.put(None)
        for w in workers:
            w.join(timeout=60)
        raise
    for w in workers:
        w.join()
    per_board: dict[int, list[int]] = {}
    for share in counts:
        for bid, c in share.items():
            acc = per_board.setdefault(bid, [0, 0, 0, 0])
            for i, x in enumerate(c):
                acc[i] += x
    with engine.begin() as conn:
        if per_board:
            conn.execute(text(
                f"UPDATE {FRESH}{BOARD} SET rows = :n, ranked = :r, reps = :p,"
                " ranked_reps = :rp WHERE id = :id"),
                [{"id": b, "n": n, "r": r, "p": p, "rp": rp}
                 for b, (n, r, p, rp) in per_board.items()])
    return sum(c[0] for c in per_board.values())


def _collect(out: queue.Queue, kind: str) -> list:
    got = []
    while len(got) < WORKERS:
        what, _k, value = out.get(timeout=_WAIT_S)
        if what == "error":
            raise value
        assert what == kind, (what, kind)
        got.append(value)
    return got


def _write_boards(engine: Engine, plan, slices: list[tuple], old_ids: dict) -> dict:
    """Insert the boards into the fresh table (a board keeps its old id when its key is
    unchanged); returns {order signature: [board ids]}."""
    by_order: dict[tuple, list[int]] = {}
    made = rb.boards(plan, slices)
    with engine.begin() as conn:
        for fields, sig in made:
            key = tuple(fields[c] for c in ("benchmark_id", "split", "task", "slice_key",
                                            "part"))
            params = {**fields, "id": old_ids.get(key)}
            for c in ("metrics_json", "judged_json", "order_json"):
                params[c] = json.dumps(params[c])
            bid = conn.execute(text(
                f"INSERT INTO {FRESH}{BOARD} (id, benchmark_id, split, task, slice_key, part,"
                " rows, metrics_json, judged_json, order_json, judge) VALUES"
                f" (coalesce(:id, nextval('{BOARD}_id_seq')), :benchmark_id, :split, :task,"
                " :slice_key, :part, :rows, CAST(:metrics_json AS json),"
                " CAST(:judged_json AS json), CAST(:order_json AS json), :judge) RETURNING id"),
                params).scalar_one()
            by_order.setdefault(sig, []).append(bid)
        # a fresh table has no statistics: without them the planner joins the groups to the
        # boards before the submissions (5x the rows, hashed to disk)
        conn.execute(text(f"ANALYZE {FRESH}{BOARD}"))
    return by_order


def _index_sql(ix, table: str) -> str:
    cols = ", ".join(c.name for c in ix.columns)
    unique = "UNIQUE " if ix.unique else ""
    return f"CREATE {unique}INDEX {FRESH}{ix.name} ON {table} ({cols})"


def _finish(engine: Engine) -> None:
    """Indexes (shared among the connections, largest first), constraints, statistics."""
    table = FRESH + ROWS
    jobs = [f"CREATE UNIQUE INDEX {FRESH}pk_{ROWS} ON {table} (id)"]
    for c in Standing.__table__.constraints:
        if isinstance(c, UniqueConstraint):
            cols = ", ".join(col.name for col in c.columns)
            jobs.append(f"CREATE UNIQUE INDEX {FRESH}{c.name} ON {table} ({cols})")
    jobs += [_index_sql(ix, table) for ix in Standing.__table__.indexes]
    # widest keys first, so the two connections end together
    jobs.sort(key=lambda s: -len(s))
    pending: queue.Queue = queue.Queue()
    for j in jobs:
        pending.put(j)
    errors: list[BaseException] = []

    def build() -> None:
        try:
            while True:
                try:
                    sql = pending.get_nowait()
                except queue.Empty:
                    return
                with engine.begin() as conn:
                    _settings(conn)
                    conn.execute(text(sql))
        except BaseException as exc:
            errors.append(exc)

    _together(build, errors)
    with engine.begin() as conn:
        _settings(conn)
        for c in Standing.__table__.constraints:
            if isinstance(c, UniqueConstraint):
                conn.execute(text(f"ALTER TABLE {table} ADD CONSTRAINT {FRESH}{c.name}"
                                  f" UNIQUE USING INDEX {FRESH}{c.name}"))
        conn.execute(text(f"ALTER TABLE {table} ADD CONSTRAINT {FRESH}pk_{ROWS}"
                          f" PRIMARY KEY USING INDEX {FRESH}pk_{ROWS}"))
        for c in StandingBoard.__table__.constraints:
            if isinstance(c, UniqueConstraint):
                cols = ", ".join(col.name for col in c.columns)
                conn.execute(text(f"ALTER TABLE {FRESH}{BOARD} ADD CONSTRAINT {FRESH}{c.name}"
                                  f" UNIQUE ({cols})"))
        for name, t in ((ROWS, Standing.__table__), (BOARD, StandingBoard.__table__)):
            for fk in t.foreign_key_constraints:
                ref = fk.referred_table.name
                ref = FRESH + ref if ref in (BOARD, ROWS) else ref
                col = fk.column_keys[0]
                target = fk.elements[0].column.name
                ondelete = f" ON DELETE {fk.ondelete}" if fk.ondelete else ""
                # NOT VALID, then one validating anti-join: no trigger call per row
                conn.execute(text(
                    f"ALTER TABLE {FRESH}{name} ADD CONSTRAINT {fk.name} FOREIGN KEY ({col})"
                    f" REFERENCES {ref} ({target}){ondelete} NOT VALID"))
                conn.execute(text(f"ALTER TABLE {FRESH}{name} VALIDATE CONSTRAINT {fk.name}"))
    with engine.begin() as conn:
        conn.execute(text(f"ANALYZE {FRESH}{BOARD}"))
        conn.execute(text(f"ANALYZE {FRESH}{ROWS}"))


def _swap(session: Session) -> None:
    """Drop the old tables, give their names, owner and grants to the fresh ones."""
    session.execute(text(f"LOCK TABLE {BOARD}, {ROWS} IN ACCESS EXCLUSIVE MODE"))
    grants = {name: session.execute(text(
        "SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(g.rolname) END,"
        " a.privilege_type, a.is_grantable, quote_ident(o.rolname)"
        " FROM pg_class c JOIN pg_roles o ON o.oid = c.relowner,"
        " aclexplode(c.relacl) a LEFT JOIN pg_roles g ON g.oid = a.grantee"
        " WHERE c.oid = CAST(:t AS regclass) AND a.grantee <> c.relowner"), {"t": name}).all()
        for name in (BOARD, ROWS)}
    owners = {name: session.scalar(text(
        "SELECT quote_ident(o.rolname) FROM pg_class c JOIN pg_roles o ON o.oid = c.relowner"
        " WHERE c.oid = CAST(:t AS regclass)"), {"t": name}) for name in (BOARD, ROWS)}
    for name in (BOARD, ROWS):  # the sequences outlive the old tables
        session.execute(text(f"ALTER SEQUENCE {name}_id_seq OWNED BY NONE"))
    session.execute(text(f"DROP TABLE {ROWS}"))
    session.execute(text(f"DROP TABLE {BOARD}"))
    for name in (BOARD, ROWS):
        session.execute(text(f"ALTER TABLE {FRESH}{name} RENAME TO {name}"))
        session.execute(text(f"ALTER SEQUENCE {name}_id_seq OWNED BY {name}.id"))
        session.execute(text(f"ALTER TABLE {name} RENAME CONSTRAINT {FRESH}pk_{name}"
                             f" TO pk_{name}"))
        session.execute(text(f"ALTER TABLE {name} OWNER TO {owners[name]}"))
        for grantee, privilege, grantable, _owner in grants[name]:
            option = " WITH GRANT OPTION" if grantable else ""
            session.execute(text(f"GRANT {privilege} ON {name} TO {grantee}{option}"))
    for t in (StandingBoard.__table__, Standing.__table__):
        for c in t.constraints:
            if isinstance(c, UniqueConstraint):
                session.execute(text(f"ALTER TABLE {t.name} RENAME CONSTRAINT {FRESH}{c.name}"
                                     f" TO {c.name}"))
    for ix in Standing.__table__.indexes:
        session.execute(text(f"ALTER INDEX {FRESH}{ix.name} RENAME TO {ix.name}"))


def rebuild_modality(session: Session) -> int:
    """Every modality board from the swapped-in standings, the boards shared among `WORKERS`
    connections (each board in one transaction of its connection, committed when that
    connection's boards are done: a reader may see one board rebuilt before another; each is
    whole). The boards no benchmark has any more are deleted in the caller's transaction."""
    keys = modality_ledger.all_boards(session)
    for mb in session.scalars(select(ModalityBoard)).all():
        if (mb.modality, mb.kind, mb.split) not in keys:
            session.delete(mb)
    session.flush()
    slices = modality_ledger._Slices(session)
    jobs: queue.Queue = queue.Queue()
    # the boards with most rows first, so the connections end together
    sized = [(k, modality_ledger.columns(session, *k, slices)) for k in keys]
    sized.sort(key=lambda kc: -sum(slices.rows((c["benchmark_id"], c["split"], c["task"],
                                                c["slice_key"], c["part"])) for c in kc[1]))
    for kc in sized:
        jobs.put(kc)
    written: list[int] = []
    errors: list[BaseException] = []
    engine = session.get_bind()

    def work() -> None:
        try:
            with Session(bind=engine) as ws:
                ws.execute(text(f"SET LOCAL work_mem = '{WORK_MEM}'"))
                ws.execute(text("SET LOCAL max_parallel_workers_per_gather = 0"))
                ws.execute(text("SET LOCAL jit = off"))
                while True:
                    try:
                        key, cols = jobs.get_nowait()
                    except queue.Empty:
                        break
                    written.append(modality_ledger.rebuild_board(ws, key, cols))
                ws.commit()
        except BaseException as exc:
            errors.append(exc)

    _together(work, errors)
    return sum(written)


def _together(target, errors: list) -> None:
    """Run ``target`` on ``WORKERS`` threads (each on its own connection) and wait for all;
    re-raise the first error they collected in ``errors``."""
    threads = [threading.Thread(target=target, daemon=True) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


__all__ = ["can_swap", "rebuild_modality", "rebuild_swapped"]
