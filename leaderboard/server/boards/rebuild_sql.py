"""The SQL of the set-based standings rebuild (issues 25 and 39): the staging tables, the slices
and their counters, the fill of the standing rows with their keys and representatives, on
PostgreSQL and SQLite. `leaderboard.server.boards.rebuild` runs these steps in place (one
benchmark, SQLite); `leaderboard.server.boards.rebuild_swap` runs them on several connections into
fresh tables. The steps and their contracts are described in `rebuild`'s module docstring.
"""
from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

from sqlalchemy import delete, select, text, update
from sqlalchemy.orm import Session

from leaderboard.server.boards.ledger import _bench_meta, _float_code, _order_names, _order_of
from leaderboard.server.boards.sql_keys import NO_JUDGE as _NO_JUDGE
from leaderboard.server.boards.sql_keys import fcode as _fcode
from leaderboard.server.models.standings import Standing, StandingBoard

log = logging.getLogger(__name__)

#: a record's judge is allowed when every " + " part is "self-mapped" or the board's judge
#: (`services.judging.record_judge_allowed`): remove those parts, nothing may be left
_ALLOWED = ("(sc.judge IS NULL OR replace(replace(' + ' || sc.judge, ' + self-mapped', ''),"
            " :bj, '') = '')")


# -- dialect pieces ------------------------------------------------------------------------------
def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def _tcode(pg: bool, col: str) -> str:
    """SQL for the key's time part: ``%Y%m%d%H%M%S%f`` in UTC."""
    if pg:
        return f"to_char({col} AT TIME ZONE 'UTC', 'YYYYMMDDHH24MISSUS')"
    # SQLite stores "YYYY-MM-DD HH:MM:SS.ffffff" (UTC, see models.base.TZDateTime)
    return f"lb_tcode({col})"


def _idcode(pg: bool, col: str) -> str:
    return f"lpad(CAST({col} AS text), 12, '0')" if pg else f"substr('000000000000' || {col}, -12)"


def _register_sqlite(session: Session) -> None:
    raw = session.connection().connection.driver_connection
    raw.create_function("lb_fcode", 1, lambda x: _float_code(float(x)), deterministic=True)
    raw.create_function("lb_tcode", 1, _sqlite_tcode, deterministic=True)
    raw.create_function("lb_json", -1, lambda *a: json.dumps(list(a)), deterministic=True)


def _sqlite_tcode(value: str) -> str:
    dt = datetime.fromisoformat(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y%m%d%H%M%S%f")


def _key(pg: bool, order: list, alias: str) -> str:
    """SQL of `ledger.encode_key` over ``alias``'s per-metric value columns ``v<i>``."""
    parts = []
    for metric_index, higher, magnitude in order:
        v = f"{alias}.v{metric_index}"
        x = f"abs({v})" if magnitude else (f"-({v})" if higher else v)
        nan = f" OR {v} = 'NaN'::float8" if pg else ""
        parts.append(f"CASE WHEN {v} IS NULL{nan} THEN '1{'0' * 16}' ELSE '0' || {_fcode(pg, x)} END")
    parts.append(_tcode(pg, "s.created_at"))
    parts.append(_idcode(pg, "s.id"))
    return " || ".join(parts)


# -- the pass ------------------------------------------------------------------------------------
class _Plan:
    """What a pass over these benchmarks needs from their declarations: each benchmark's
    (tasks, metric specs, judge), every declared metric (``v<i>`` is ``metrics[i]``) and the
    (benchmark, task, board judge) pairs a board has."""

    def __init__(self, session, bench_ids: list[int]):
        self.bench_ids = list(bench_ids)
        self.metas = {bid: _bench_meta(session, bid) for bid in self.bench_ids}
        self.metrics = sorted({m for _t, specs, _j in self.metas.values() for m in specs})
        self.pairs = [(bid, task, " + " + (judge or _NO_JUDGE))
                      for bid, (tasks, _s, judge) in self.metas.items() for task in tasks]


def _rebuild_many(session: Session, bench_ids: list[int]) -> int:
    """Rebuild the standings of these benchmarks in one pass over their score rows, in place."""
    pg = _dialect(session) == "postgresql"
    if not pg:
        _register_sqlite(session)
    if pg:
        # this transaction's sorts and hashes in memory (the default 4 MB spills the
        # representatives' window sort to disk); JIT compiles more than these few statements
        # gain from it
        session.execute(text("SET LOCAL work_mem = '256MB'"))
        session.execute(text("SET LOCAL jit = off"))
    board_ids = select(StandingBoard.id).where(StandingBoard.benchmark_id.in_(bench_ids))
    # no session synchronisation: the ORM would fetch every deleted row's id (RETURNING) to
    # expire objects nobody holds (2.6M ids, 800 MB, at 500,000 submissions)
    nosync = {"synchronize_session": False}
    session.execute(delete(Standing).where(Standing.board_id.in_(board_ids)),
                    execution_options=nosync)
    session.execute(delete(StandingBoard).where(StandingBoard.benchmark_id.in_(bench_ids)),
                    execution_options=nosync)
    plan = _Plan(session, bench_ids)
    if not plan.pairs:
        return 0
    stage(session, plan, pg)
    by_order: dict[tuple, list[int]] = {}
    for fields, sig in boards(plan, slice_counts(session, plan)):
        b = StandingBoard(**fields)
        session.add(b)
        session.flush()
        by_order.setdefault(sig, []).append(b.id)
    total = sum(fill(session, plan, pg, sig, ids) for sig, ids in by_order.items())
    drop_stage(session)
    _recount_all(session, bench_ids)
    return total


def stage(conn, plan: _Plan, pg: bool, part_of: tuple[int, int] | None = None) -> None:
    """The pass's temporary tables on ``conn`` (a session or a connection): ``lb_rb_task``,
    ``lb_rb_sub`` and ``lb_rb_grp`` (see the module docstring). ``part_of`` (k, n): only the
    groups ("t:<team>", "s:<submission>") whose number is k modulo n, so that n connections
    can build disjoint shares of every board (a group's rows, and so its representative, stay
    in one share)."""
    ids_sql = ", ".join(str(int(b)) for b in plan.bench_ids) or "NULL"
    metrics = plan.metrics
    for name in ("lb_rb_task", "lb_rb_sub", "lb_rb_grp"):
        conn.execute(text(f"DROP TABLE IF EXISTS {name}"))
    true, false = ("true", "false") if pg else ("1", "0")
    # the (benchmark, task) pairs a board has, with the board's judge as the filter needs it
    conn.execute(text("CREATE TEMP TABLE lb_rb_task (benchmark_id integer, task"
                      " varchar(64), bj varchar(200))"))
    conn.execute(text("INSERT INTO lb_rb_task VALUES (:b, :t, :j)"),
                 [{"b": b, "t": t, "j": j} for b, t, j in plan.pairs])
    share = ""
    if part_of is not None:
        k, n = int(part_of[0]), int(part_of[1])
        share = (" AND (CASE WHEN s.team_id IS NULL OR s.is_baseline THEN s.id"
                 f" ELSE s.team_id END) % {n} = {k}")
    conn.execute(text(
        "CREATE TEMP TABLE lb_rb_sub AS SELECT s.id, s.benchmark_id, s.split, s.created_at,"
        " s.team_id, s.is_baseline, s.selected,"
        " (s.disqualified_reason IS NOT NULL AND s.disqualified_reason <> '') AS dq,"
        " EXISTS (SELECT 1 FROM score p WHERE p.submission_id = s.id AND p.part = 'public') AS hp"
        # the keys' time and id parts, once per submission (the keys of its rows end in them)
        + (f", {_tcode(pg, 's.created_at')} || {_idcode(pg, 's.id')} AS tid" if pg else "") +
        f" FROM submission s WHERE s.benchmark_id IN ({ids_sql}) AND s.status = 'scored'"
        f" AND s.hidden = {false} AND s.is_public = {true}{share}"))
    if pg:
        conn.execute(text("ANALYZE lb_rb_sub"))
        conn.execute(text("ANALYZE lb_rb_task"))
    allowed = _ALLOWED.replace(":bj", "t.bj")
    rows = ("FROM score sc JOIN lb_rb_sub s ON s.id = sc.submission_id"
            " JOIN lb_rb_task t ON t.benchmark_id = s.benchmark_id AND t.task = sc.task"
            " WHERE (CASE WHEN s.hp THEN sc.part IN ('public', 'private')"
            " ELSE sc.part = 'all' END)")
    if pg:
        # one sort of the score rows by group then id: the records aggregate in id order as
        # they arrive (json_agg has no partial, parallel form that could reorder them; an
        # ORDER BY inside the aggregate would sort every group again, twice), and each
        # declared metric's last allowed record is the largest [id, value, judged] array
        # among its allowed records (no window, no second sort)
        pivots = []
        for i, m in enumerate(metrics):
            pivots.append(
                "max(ARRAY[CAST(id AS float8), value, CASE WHEN judge IS NOT NULL AND"
                " judge <> 'self-mapped' THEN 1.0 ELSE 0.0 END])"
                f" FILTER (WHERE ok = 1 AND metric = '{_sql_str(m)}') AS a{i}")
        cols = "".join(f", a{i}[2] AS v{i}, CASE WHEN a{i} IS NULL THEN 0 ELSE 1 END AS h{i},"
                       f" CASE WHEN a{i}[3] = 1.0 THEN 1 ELSE 0 END AS j{i}"
                       for i in range(len(metrics)))
        # each group also carries what its pick part's group holds (the "public" part's, or
        # the "all" part's: the last part of its (submission, task, slice) in part order, which
        # the grouping already sorted by): its records and values, so the insert needs no
        # self-join
        pick = ("CASE WHEN last_value(part) OVER w = CASE WHEN hp = 1 THEN 'public'"
                " ELSE 'all' END THEN last_value({}) OVER w END")
        pcols = "".join(f", {pick.format(f'v{i}')} AS pv{i}" for i in range(len(metrics)))
        # a share reads only its own score rows: its submissions in id order, each one's
        # rows by the submission index (a merge join or a hash join reads every score row,
        # the other shares' too); the rows come out by submission, so the sort below only
        # orders each submission's rows
        rows = rows.replace("JOIN lb_rb_sub s", "JOIN (SELECT * FROM lb_rb_sub ORDER BY id) s")
        conn.execute(text("SET LOCAL enable_mergejoin = off"))
        conn.execute(text("SET LOCAL enable_hashjoin = off"))
        conn.execute(text(
            "CREATE TEMP TABLE lb_rb_grp AS SELECT sid, task,"
            f" skey, part, recs, any_ok{''.join(f', v{i}, h{i}, j{i}' for i in range(len(metrics)))},"
            f" {pick.format('picks')} AS ppicks{pcols} FROM ("
            f"SELECT sid, task, skey, part, recs, picks, hp, any_ok{cols} FROM (SELECT sid,"
            " task, skey, part,"
            " json_agg(json_build_array(metric, value, ci_low, ci_high, n, judge)) AS recs,"
            # a "private" group is never a pick part: no picks for it
            " json_agg(json_build_array(metric, value, judge)) FILTER (WHERE part <> 'private')"
            " AS picks, max(ok) AS any_ok, max(hp) AS hp" + "".join(", " + p for p in pivots) +
            " FROM (SELECT sc.submission_id AS sid, sc.task, sc.slice_key AS skey, sc.part,"
            " sc.id, sc.metric, sc.value, sc.ci_low, sc.ci_high, coalesce(sc.n, 0) AS n,"
            " sc.judge, CASE WHEN s.hp THEN 1 ELSE 0 END AS hp,"
            f" CASE WHEN {allowed} THEN 1 ELSE 0 END AS ok {rows}"
            " ORDER BY sc.submission_id, sc.task, sc.slice_key, sc.part, sc.id) r"
            " GROUP BY sid, task, skey, part) g0) g"
            " WINDOW w AS (PARTITION BY sid, task, skey ORDER BY part"
            " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"))
        conn.execute(text("SET LOCAL enable_mergejoin = on"))
        conn.execute(text("SET LOCAL enable_hashjoin = on"))
        conn.execute(text("ANALYZE lb_rb_grp"))
        return
    # SQLite's JSON functions print reals with at most 16 significant digits: its records are
    # JSON text made by Python (exact), concatenated in score id order
    rec = "lb_json(metric, value, ci_low, ci_high, coalesce(n, 0), judge)"
    pick = "lb_json(metric, value, judge)"

    def agg(e):
        return f"'[' || group_concat({e}, ', ') || ']'"
    pivots = []
    for i, m in enumerate(metrics):
        last = f"rn = 1 AND ok = 1 AND metric = '{_sql_str(m)}'"
        pivots.append(f"max(CASE WHEN {last} THEN value END) AS v{i},"
                      f" max(CASE WHEN {last} THEN 1 ELSE 0 END) AS h{i},"
                      f" max(CASE WHEN {last} AND judge IS NOT NULL AND judge <> 'self-mapped'"
                      f" THEN 1 ELSE 0 END) AS j{i}")
    inner = (
        "SELECT sc.id, sc.submission_id, sc.task, sc.slice_key, sc.part, sc.metric, sc.value,"
        " sc.ci_low, sc.ci_high, sc.n, sc.judge,"
        f" CASE WHEN {allowed} THEN 1 ELSE 0 END AS ok,"
        " row_number() OVER (PARTITION BY sc.submission_id, sc.task, sc.slice_key, sc.part,"
        f" sc.metric, CASE WHEN {allowed} THEN 1 ELSE 0 END ORDER BY sc.id DESC) AS rn {rows}"
        # SQLite aggregates in the order rows arrive: records in score id order
        " ORDER BY sc.submission_id, sc.task, sc.slice_key, sc.part, sc.id")
    conn.execute(text(
        "CREATE TEMP TABLE lb_rb_grp AS SELECT submission_id AS sid, task, slice_key AS skey,"
        f" part, {agg(rec)} AS recs, {agg(pick)} AS picks, max(ok) AS any_ok"
        + "".join(", " + p for p in pivots) +
        f" FROM ({inner}) r GROUP BY submission_id, task, slice_key, part"))


def drop_stage(conn) -> None:
    for name in ("lb_rb_task", "lb_rb_sub", "lb_rb_grp"):
        conn.execute(text(f"DROP TABLE {name}"))


def slice_counts(conn, plan: _Plan) -> list[tuple]:
    """(benchmark, split, task, slice, part, rows, then per declared metric: rows with a shown
    value, rows whose shown record was judged) of every slice in the staged groups."""
    sums = "".join(f", sum(h{i}), sum(j{i})" for i in range(len(plan.metrics)))
    return [tuple(r) for r in conn.execute(text(
        f"SELECT s.benchmark_id, s.split, g.task, g.skey, g.part, count(*){sums}"
        " FROM lb_rb_grp g JOIN lb_rb_sub s ON s.id = g.sid WHERE g.any_ok = 1"
        " GROUP BY s.benchmark_id, s.split, g.task, g.skey, g.part"))]


def boards(plan: _Plan, slices: list[tuple]) -> list[tuple[dict, tuple]]:
    """Each slice's board (the `StandingBoard` columns) and the signature of its ranking
    order (per column: metric index, higher is better, by magnitude), from `slice_counts`
    rows (summed when several shares were counted apart)."""
    merged: dict[tuple, list[int]] = {}
    for bid, split, task, skey, part, *counts in slices:
        acc = merged.setdefault((bid, split, task, skey, part), [0] * len(counts))
        for i, c in enumerate(counts):
            acc[i] += int(c or 0)
    out = []
    metrics = plan.metrics
    for (bid, split, task, skey, part), (rows, *counts) in merged.items():
        tasks, specs, judge = plan.metas[bid]
        present = {m: counts[2 * i] for i, m in enumerate(metrics) if counts[2 * i]}
        judged = {m: counts[2 * i + 1] for i, m in enumerate(metrics) if counts[2 * i + 1]}
        fields = {"benchmark_id": bid, "split": split, "task": task, "slice_key": skey,
                  "part": part, "rows": rows, "metrics_json": present, "judged_json": judged,
                  "judge": judge}
        order = _order_of(StandingBoard(**fields), tasks, specs)
        fields["order_json"] = _order_names(order)
        sig = tuple((metrics.index(c.metric), c.higher_is_better, c.by_magnitude) for c in order)
        out.append((fields, sig))
    return out


def fill(conn, plan: _Plan, pg: bool, sig: tuple, ids: list[int], *,
         table: str = "standing", board_table: str = "standing_board",
         count: bool = False):
    """Write the staged groups' rows on the boards ``ids`` (whose ranking order is ``sig``)
    into ``table``, with their keys and each group's representative; returns the rows written,
    or with ``count`` (PostgreSQL) the counters per board: {board id: (rows, ranked, reps,
    ranked reps)}, counted as the rows are written."""
    if pg:
        return _fill_pg(conn, plan, sig, ids, table, board_table, count)
    collate = ""
    key, pick_key = _key(pg, list(sig), "g"), _key(pg, list(sig), "p")
    cells = ("json_build_object('shown', g.recs, 'pick', coalesce(p.picks, '[]'::json))" if pg
             else "'{\"shown\": ' || g.recs || ', \"pick\": ' || coalesce(p.picks, '[]') || '}'")
    # the representative of each group (`ledger._elect`): not disqualified, selected
    # first, then the best pick key; elected here, so no row is written twice
    rep = (f"CASE WHEN NOT k.dq AND row_number() OVER (PARTITION BY k.board_id, k.grp"
           f" ORDER BY k.dq, k.selected DESC, k.pick_key{collate}) = 1"
           " THEN k.sort_key END")
    insert = (
        f"INSERT INTO {table} (board_id, submission_id, grp, sort_key, all_key, rep_key,"
        " pick_key, selected, disqualified, is_baseline, competes, cells_json)"
        " SELECT k.board_id, k.sid, k.grp, k.sort_key,"
        " CASE WHEN k.dq THEN '1' ELSE '0' END || k.sort_key, " + rep + ","
        " k.pick_key, k.selected, k.dq, k.is_baseline,"
        " (NOT k.dq AND NOT k.is_baseline), k.cells"
        " FROM (SELECT b.id AS board_id, s.id AS sid, s.dq, s.selected, s.is_baseline,"
        " CASE WHEN s.team_id IS NULL OR s.is_baseline THEN 's:' || s.id"
        " ELSE 't:' || s.team_id END AS grp,"
        f" {key} AS sort_key, {pick_key} AS pick_key, {cells} AS cells"
        " FROM lb_rb_grp g JOIN lb_rb_sub s ON s.id = g.sid"
        " LEFT JOIN lb_rb_grp p ON p.sid = g.sid AND p.task = g.task AND p.skey = g.skey"
        " AND p.part = CASE WHEN s.hp THEN 'public' ELSE 'all' END"
        f" JOIN {board_table} b ON b.benchmark_id = s.benchmark_id AND b.split = s.split"
        " AND b.task = g.task AND b.slice_key = g.skey AND b.part = g.part"
        f" WHERE g.any_ok = 1 AND b.id IN ({', '.join(str(int(i)) for i in ids)})) k")
    return _run_insert(conn, insert, count)


def _fill_pg(conn, plan: _Plan, sig: tuple, ids: list[int], table: str, board_table: str,
             count: bool):
    """`fill` on PostgreSQL, from the staged groups' pick columns (``pv<i>``, ``ppicks``) and
    the submissions' key tails (``tid``).

    The keys are computed once per row in a narrow projection (board, group, election order,
    keys, the group's ``ctid``: ~150-byte rows), the representatives elected by a window over
    it, and the records joined back by ``ctid`` afterwards: the records are never sorted (a window over the
    full rows sorted 600-byte rows, 615 MB per share at 500,000 submissions)."""
    tail = f"{_tcode(True, 's.created_at')} || {_idcode(True, 's.id')}"
    key = _key(True, list(sig), "g").replace(tail, "s.tid")
    pick_key = key.replace("g.v", "g.pv")
    in_ids = ", ".join(str(int(i)) for i in ids)
    narrow = (
        "SELECT g.ctid AS gid, b.id AS board_id, s.id AS sid, s.dq, s.selected, s.is_baseline,"
        " CASE WHEN s.team_id IS NULL OR s.is_baseline THEN 's:' || s.id"
        f" ELSE 't:' || s.team_id END AS grp, {key} AS sort_key, {pick_key} AS pick_key"
        " FROM lb_rb_grp g JOIN lb_rb_sub s ON s.id = g.sid"
        f" JOIN {board_table} b ON b.benchmark_id = s.benchmark_id AND b.split = s.split"
        " AND b.task = g.task AND b.slice_key = g.skey AND b.part = g.part"
        # OFFSET 0: the keys computed here, once (flattened into the window's query, the
        # planner evaluates them above the window, sort_key once per use: 5.8 s of the
        # window at 500,000)
        f" WHERE g.any_ok = 1 AND b.id IN ({in_ids}) OFFSET 0")
    # the representative of each group (`ledger._elect`): not disqualified, selected
    # first, then the best pick key
    rep = ("CASE WHEN NOT k.dq AND row_number() OVER (PARTITION BY k.board_id, k.grp"
           ' ORDER BY k.dq, k.selected DESC, k.pick_key COLLATE "C") = 1'
           " THEN k.sort_key END")
    insert = (
        f"INSERT INTO {table} (board_id, submission_id, grp, sort_key, all_key, rep_key,"
        " pick_key, selected, disqualified, is_baseline, competes, cells_json)"
        " SELECT k.board_id, k.sid, k.grp, k.sort_key,"
        " CASE WHEN k.dq THEN '1' ELSE '0' END || k.sort_key, k.rep_key,"
        " k.pick_key, k.selected, k.dq, k.is_baseline, (NOT k.dq AND NOT k.is_baseline),"
        " json_build_object('shown', g.recs, 'pick', coalesce(g.ppicks, '[]'::json))"
        f" FROM (SELECT k.*, {rep} AS rep_key FROM ({narrow}) k) k"
        # by the row's address: the staged table is not written after it is filled
        " JOIN lb_rb_grp g ON g.ctid = k.gid")
    return _run_insert(conn, insert, count)


def _run_insert(conn, insert: str, count: bool):
    """Run a fill's ``INSERT``: its row count, or with ``count`` each board's counters (rows,
    ranked, reps, ranked reps) from the inserted rows themselves (no second pass)."""
    if not count:
        return conn.execute(text(insert)).rowcount
    return {int(b): (int(n), int(r), int(p), int(rp)) for b, n, r, p, rp in conn.execute(text(
        f"WITH ins AS ({insert} RETURNING board_id, competes, rep_key IS NOT NULL AS rep)"
        " SELECT board_id, count(*), sum(CASE WHEN competes THEN 1 ELSE 0 END),"
        " sum(CASE WHEN rep THEN 1 ELSE 0 END),"
        " sum(CASE WHEN rep AND competes THEN 1 ELSE 0 END) FROM ins GROUP BY board_id"))}


def _sql_str(s: str) -> str:
    return str(s).replace("'", "''")


def _recount_all(session: Session, bench_ids: list[int]) -> None:
    """Every slice's counters from its rows, in one grouped read."""
    t = "true" if _dialect(session) == "postgresql" else "1"
    counts = session.execute(text(
        "SELECT board_id, count(*),"
        f" sum(CASE WHEN competes = {t} THEN 1 ELSE 0 END),"
        " sum(CASE WHEN rep_key IS NOT NULL THEN 1 ELSE 0 END),"
        f" sum(CASE WHEN rep_key IS NOT NULL AND competes = {t} THEN 1 ELSE 0 END)"
        " FROM standing WHERE board_id IN (SELECT id FROM standing_board WHERE benchmark_id"
        f" IN ({', '.join(str(int(b)) for b in bench_ids)})) GROUP BY board_id")).all()
    if counts:
        session.execute(update(StandingBoard), [
            {"id": b, "rows": n, "ranked": r, "reps": p, "ranked_reps": rp}
            for b, n, r, p, rp in counts])
    session.expire_all()


__all__ = ["boards", "drop_stage", "fill", "slice_counts", "stage"]
