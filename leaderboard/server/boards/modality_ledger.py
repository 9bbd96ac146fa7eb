"""Modality boards kept in the scoring transaction (issue 25; rule of issue 21, item 2).

A modality board has one column per task that covers the modality (every benchmark, in key
order): the task's board on the benchmark's held-out split, the part that board shows, the
modality's slice (or the overall board of a one-modality task), its headline metric. A team's
cell in a column is the headline of its row on that board (the row that represents it there).

**The rule.** Only teams with a result in *every* column are ranked, by their mean normalised
score: each headline mapped onto [0, 1] by its declared range and direction (1 = the best
value the metric can take; a signed metric ranked by magnitude: 1 - |v| / max |bound|), then
averaged. Equal means share a rank; the row order among them is fixed by team id. Teams with a
result in some columns are listed below the ranked ones, most columns first, with their
coverage and their partial mean (not ranked). Baselines are shown but not ranked.

Why this rule, not the mean rank it replaces: a mean rank over "the columns a team has entries
for" ranked first a team with five random-quality entries (each rank among few entrants) above a
team that is best on every task; and a team's mean rank moves whenever any other team submits
anywhere, so it cannot be kept per team. A mean of normalised scores depends only on the team's
own results, compares like with like (every ranked team answered every task), and is kept by
updating the rows that changed.

Maintenance: `leaderboard.server.boards.hook` calls `refresh_groups` in the transaction that
changed the standings, for the groups ("t:<team>", "s:<submission>") whose rows changed; when a
modality's columns change (a first row on a new board, a benchmark imported or revealed, a
re-key), that modality is rebuilt from the standings (`rebuild_modality`).
"""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from leaderboard.core.records import slice_key_of
from leaderboard.server.boards.ledger import _float_code, shown_cells
from leaderboard.server.boards.sql_keys import NO_JUDGE as _NO_JUDGE
from leaderboard.server.boards.sql_keys import fcode as _fcode
from leaderboard.server.boards.standings import by_magnitude
from leaderboard.server.models import Benchmark
from leaderboard.server.models.standings import (
    ModalityBoard,
    ModalityStanding,
    Standing,
    StandingBoard,
)

#: display order of modalities (benchmarks.md, "Per-modality boards")
MODALITY_ORDER = ("image", "video", "audio", "text", "3d")
NA = "1" + "0" * 16
#: bulk deletes without the ORM fetching each deleted row's id (nothing holds those objects)
_NOSYNC = {"synchronize_session": False}

RULE = ("Only teams with a result on every task of this modality are ranked: by the mean of "
        "their normalised headline scores (each task's headline mapped onto 0-1 by its "
        "declared range and direction, 1 = the best possible value; a metric ranked by its "
        "distance from 0 uses 1 - |value| / its largest bound). Each cell is the team's row on "
        "that task's board (held-out split, the part the board shows). Equal means share a "
        "rank. Teams with results on some tasks only are listed below, most tasks first, with "
        "their coverage and partial mean, unranked; baselines are shown, not ranked.")


def benchmark_modalities(meta: dict) -> set[str]:
    return {m for t in meta.get("tasks", []) for m in t.get("modalities", [])}


def all_modalities(session: Session) -> list[str]:
    seen: set[str] = set()
    for meta in session.scalars(select(Benchmark.meta_json)):
        seen |= benchmark_modalities(meta or {})
    return [m for m in MODALITY_ORDER if m in seen] + sorted(seen - set(MODALITY_ORDER))


def _split_of(meta: dict) -> str | None:
    splits = meta.get("splits", [])
    if "test" in splits:
        return "test"
    return splits[-1] if splits else None


def normalise(value: float | None, spec: dict) -> float | None:
    """A headline on [0, 1], 1 = best (see the module docstring); None for n/a."""
    if value is None or value != value:
        return None
    lower = spec.get("lower")
    upper = spec.get("upper")
    lower = 0.0 if lower is None else float(lower)
    upper = 1.0 if upper is None else float(upper)
    if spec.get("by_magnitude"):
        span = max(abs(lower), abs(upper)) or 1.0
        x = 1.0 - abs(value) / span
    elif upper == lower:
        return None
    elif spec.get("higher_is_better", True):
        x = (value - lower) / (upper - lower)
    else:
        x = (upper - value) / (upper - lower)
    return min(1.0, max(0.0, x))


def columns(session: Session, modality: str) -> list[dict]:
    """The modality's columns, resolved to their standings slices (``board_id`` None: that
    board has no rows yet)."""
    out = []
    for bench in session.scalars(select(Benchmark).order_by(Benchmark.key)):
        meta = bench.meta_json or {}
        split = _split_of(meta)
        tasks = [t for t in meta.get("tasks", []) if modality in t.get("modalities", [])]
        if split is None or not tasks:
            continue
        has_parts = session.scalar(select(StandingBoard.id).where(
            StandingBoard.benchmark_id == bench.id, StandingBoard.split == split,
            StandingBoard.part == "public", StandingBoard.rows > 0).limit(1)) is not None
        shown, pick = (("private" if bench.private_revealed else "public"), "public") \
            if has_parts else ("all", "all")
        for t in tasks:
            skey = slice_key_of({"modality": modality})
            found = session.scalar(select(StandingBoard.id).where(
                StandingBoard.benchmark_id == bench.id, StandingBoard.split == split,
                StandingBoard.task == t["key"], StandingBoard.slice_key == skey,
                StandingBoard.part == pick, StandingBoard.rows > 0).limit(1))
            if found is None and list(t["modalities"]) == [modality]:
                skey = ""  # a one-modality task's overall numbers are that modality's
            sb = session.execute(select(StandingBoard.id, StandingBoard.judge).where(
                StandingBoard.benchmark_id == bench.id, StandingBoard.split == split,
                StandingBoard.task == t["key"], StandingBoard.slice_key == skey,
                StandingBoard.part == shown)).first()
            spec = meta.get("metrics", {}).get(t["headline"], {})
            hib = bool(spec.get("higher_is_better", True))
            mag = by_magnitude(spec) if spec else False
            out.append({"key": f"{bench.key}/{t['key']}", "benchmark": bench.key,
                        "benchmark_id": bench.id, "task": t["key"], "split": split,
                        "part": shown, "slice_key": skey, "metric": t["headline"],
                        "title": f"{bench.title}: {t.get('title') or t['key']}",
                        "metric_title": spec.get("title") or t["headline"],
                        "higher_is_better": hib, "by_magnitude": mag,
                        "arrow": "|\u2193|" if mag else ("\u2191" if hib else "\u2193"),
                        "fmt": spec.get("fmt", "num"), "lower": spec.get("lower"),
                        "upper": spec.get("upper"),
                        "board_id": sb[0] if sb else None, "judge": sb[1] if sb else None})
    return out


# -- rows ----------------------------------------------------------------------------------------
def _row(grp: str, cols: list[dict], found: dict[str, tuple[int, dict]]) -> dict:
    """A modality row of ``grp`` from its standing on each column (``found[col key]`` =
    (submission id, cells_json))."""
    cells, scores = {}, []
    for c in cols:
        hit = found.get(c["key"])
        if hit is None:
            continue
        sid, cells_json = hit
        cell = shown_cells(cells_json, c["judge"]).get(c["metric"])
        value, lo, hi, n = (cell[0], cell[1], cell[2], cell[3] or 0) if cell else (None, None,
                                                                                  None, 0)
        norm = normalise(value, c)
        cells[c["key"]] = [sid, value, lo, hi, n, norm]
        if norm is not None:
            scores.append(norm)
    covered = len(scores)
    # 12 decimals: equal results tie whatever the order they were summed in (SQL or Python)
    mean = round(sum(scores) / covered, 12) if covered else None
    ranked = bool(cols) and covered == len(cols)
    code = NA if mean is None else "0" + _float_code(-mean)
    if ranked:
        key = "0" + code + grp
    else:
        key = "1" + f"{len(cols) - covered:04d}" + code + grp
    team_id = int(grp[2:]) if grp.startswith("t:") else None
    return {"grp": grp, "team_id": team_id, "covered": covered, "ranked": ranked,
            "mean_score": mean, "sort_key": key, "cells_json": cells}


def _standings_of(session: Session, cols: list[dict], grps: Iterable[str] | None):
    """(grp, column key, submission id, cells_json) of the representative rows on the columns'
    boards, by group; ``grps`` None: every group."""
    col_of = {c["board_id"]: c["key"] for c in cols if c["board_id"] is not None}
    if not col_of:
        return
    q = (select(Standing.grp, Standing.board_id, Standing.submission_id, Standing.cells_json)
         .where(Standing.board_id.in_(list(col_of)), Standing.rep_key.is_not(None),
                Standing.is_baseline.is_(False)))
    if grps is not None:
        q = q.where(Standing.grp.in_(list(grps)))
    for grp, bid, sid, cells in session.execute(q.order_by(Standing.grp)
                                                .execution_options(yield_per=5000)):
        yield grp, col_of[bid], sid, cells


def _signature(cols: list[dict]) -> list:
    """What the board stores of its columns (and compares to see whether they changed)."""
    return [dict(c) for c in cols]


def _board(session: Session, modality: str) -> ModalityBoard:
    mb = session.scalar(select(ModalityBoard).where(ModalityBoard.modality == modality))
    if mb is None:
        mb = ModalityBoard(modality=modality, rows=0, ranked=0, columns_json=[])
        session.add(mb)
        session.flush()
    return mb


def rebuild_modality(session: Session, modality: str, cols: list[dict] | None = None) -> int:
    """Every row of one modality board from the standings; returns the rows written.

    On PostgreSQL one ``INSERT ... SELECT`` (the headline cells read from the rows' JSON in
    SQL: a Python pass decoding every row took ~5 s per 50,000 submissions); elsewhere the
    Python pass `refresh_groups` shares (tests hold the two equal)."""
    cols = columns(session, modality) if cols is None else cols
    mb = _board(session, modality)
    session.execute(delete(ModalityStanding).where(ModalityStanding.board_id == mb.id),
                    execution_options=_NOSYNC)
    if session.get_bind().dialect.name == "postgresql":
        rows, ranked = _rebuild_sql(session, mb.id, cols)
        mb.rows, mb.ranked, mb.columns_json = rows, ranked, _signature(cols)
        session.flush()
        return rows
    batch, rows, ranked = [], 0, 0
    current, found = None, {}

    def flush_group():
        nonlocal rows, ranked
        if current is not None:
            row = _row(current, cols, found)
            batch.append({**row, "board_id": mb.id})
            rows += 1
            ranked += row["ranked"]

    for grp, col, sid, cells in _standings_of(session, cols, None):
        if grp != current:
            flush_group()
            current, found = grp, {}
            if len(batch) >= 5000:
                session.execute(insert(ModalityStanding), batch)
                batch = []
        found[col] = (sid, cells)
    flush_group()
    if batch:
        session.execute(insert(ModalityStanding), batch)
    mb.rows, mb.ranked, mb.columns_json = rows, ranked, _signature(cols)
    session.flush()
    return rows


def _rebuild_sql(session: Session, board_id: int, cols: list[dict]) -> tuple[int, int]:
    """(rows, ranked) written for one modality board, in one statement (PostgreSQL)."""
    from sqlalchemy import text

    live = [c for c in cols if c["board_id"] is not None]
    if not live:
        return 0, 0
    values, params = [], {"mb": board_id, "ncols": len(cols)}
    for i, c in enumerate(live):
        lo = 0.0 if c.get("lower") is None else float(c["lower"])
        hi = 1.0 if c.get("upper") is None else float(c["upper"])
        values.append(f"(:b{i}, :k{i}, :m{i}, CAST(:lo{i} AS float8), CAST(:hi{i} AS float8),"
                      f" :hib{i}, :mag{i}, :bj{i})")
        params.update({f"b{i}": c["board_id"], f"k{i}": c["key"], f"m{i}": c["metric"],
                       f"lo{i}": lo, f"hi{i}": hi, f"hib{i}": bool(c["higher_is_better"]),
                       f"mag{i}": bool(c["by_magnitude"]),
                       f"bj{i}": " + " + (c["judge"] or _NO_JUDGE)})
    # the last record of the headline the column's judge allows (`ledger.shown_cells`)
    allowed = ("(e->>5 IS NULL OR replace(replace(' + ' || (e->>5), ' + self-mapped', ''),"
               " c.bj, '') = '')")
    norm = ("CASE WHEN v IS NULL OR v = 'NaN'::float8 THEN NULL"
            " WHEN mag THEN greatest(0.0, least(1.0, 1.0 - abs(v) / (CASE WHEN"
            " greatest(abs(lo), abs(hi)) = 0 THEN 1.0 ELSE greatest(abs(lo), abs(hi)) END)))"
            " WHEN hi = lo THEN NULL"
            " WHEN hib THEN greatest(0.0, least(1.0, (v - lo) / (hi - lo)))"
            " ELSE greatest(0.0, least(1.0, (hi - v) / (hi - lo))) END")
    mean_code = _fcode(True, "-(a.mean)")
    res = session.execute(text(
        "INSERT INTO modality_standing (board_id, grp, team_id, covered, ranked, mean_score,"
        " sort_key, cells_json)"
        " SELECT :mb, a.grp, CASE WHEN a.grp LIKE 't:%' THEN CAST(substr(a.grp, 3) AS integer)"
        " END, a.covered, a.covered = :ncols, a.mean,"
        " CASE WHEN a.covered = :ncols THEN '0' || '0' || " + mean_code + " || a.grp"
        " ELSE '1' || lpad(CAST(:ncols - a.covered AS text), 4, '0') ||"
        " CASE WHEN a.mean IS NULL THEN '1' || repeat('0', 16) ELSE '0' || " + mean_code +
        " END || a.grp END, a.cells"
        " FROM (SELECT grp, count(norm) AS covered,"
        " CASE WHEN count(norm) > 0 THEN CAST(round(CAST(sum(norm) / count(norm) AS numeric),"
        " 12) AS float8) END AS mean,"
        " json_object_agg(col_key, json_build_array(submission_id, v, clo, chi, n, norm))"
        " AS cells FROM ("
        "  SELECT r.grp, r.col_key, r.submission_id, r.v, r.clo, r.chi, r.n, " + norm +
        "  AS norm FROM ("
        "   SELECT st.grp, c.col_key, st.submission_id, c.lo, c.hi, c.hib, c.mag,"
        "   CAST(rec->>1 AS float8) AS v, CAST(rec->>2 AS float8) AS clo,"
        "   CAST(rec->>3 AS float8) AS chi,"
        "   CASE WHEN rec IS NULL THEN 0 ELSE coalesce(CAST(rec->>4 AS integer), 0) END AS n"
        "   FROM standing st JOIN (VALUES " + ", ".join(values) + ")"
        "   AS c(board_id, col_key, metric, lo, hi, hib, mag, bj) ON c.board_id = st.board_id"
        "   LEFT JOIN LATERAL (SELECT e AS rec FROM json_array_elements(st.cells_json->'shown')"
        "   WITH ORDINALITY AS x(e, i) WHERE e->>0 = c.metric AND " + allowed +
        "   ORDER BY i DESC LIMIT 1) last ON true"
        "   WHERE st.rep_key IS NOT NULL AND st.is_baseline = false"
        "  ) r"
        " ) q GROUP BY grp) a"), params)
    rows = res.rowcount
    ranked = session.scalar(text("SELECT count(*) FROM modality_standing WHERE board_id = :mb"
                                 " AND ranked"), {"mb": board_id})
    return rows, int(ranked or 0)


def rebuild_all(session: Session) -> int:
    """Every modality board (and none for a modality no benchmark has any more)."""
    mods = all_modalities(session)
    session.execute(delete(ModalityBoard).where(ModalityBoard.modality.not_in(mods)),
                    execution_options=_NOSYNC)
    return sum(rebuild_modality(session, m) for m in mods)


def is_empty(session: Session) -> bool:
    return session.scalar(select(ModalityBoard.id).limit(1)) is None


def refresh_groups(session: Session, touched: Iterable[tuple[int, str]]) -> None:
    """Bring the modality rows of these (benchmark id, group) pairs up to date, in the
    caller's transaction; a modality whose columns changed is rebuilt."""
    by_modality: dict[str, set[str]] = {}
    metas = dict(session.execute(select(Benchmark.id, Benchmark.meta_json)).all())
    touched = list(touched)
    if any(bid not in metas for bid, _grp in touched):
        rebuild_all(session)  # a benchmark was deleted: its modalities lost columns
        return
    for bid, grp in touched:
        for m in benchmark_modalities(metas.get(bid) or {}):
            by_modality.setdefault(m, set()).add(grp)
    for modality, grps in sorted(by_modality.items()):
        cols = columns(session, modality)
        mb = _board(session, modality)
        if "*" in grps or (mb.columns_json or []) != _signature(cols):
            rebuild_modality(session, modality, cols)
            continue
        found: dict[str, dict] = {g: {} for g in grps}
        for grp, col, sid, cells in _standings_of(session, cols, grps):
            found[grp][col] = (sid, cells)
        old = dict(session.execute(select(ModalityStanding.grp, ModalityStanding.ranked).where(
            ModalityStanding.board_id == mb.id, ModalityStanding.grp.in_(list(grps)))).all())
        session.execute(delete(ModalityStanding).where(
            ModalityStanding.board_id == mb.id, ModalityStanding.grp.in_(list(grps))))
        new = [{**_row(g, cols, f), "board_id": mb.id} for g, f in found.items() if f]
        if new:
            session.execute(insert(ModalityStanding), new)
        mb.rows += len(new) - len(old)
        mb.ranked += sum(r["ranked"] for r in new) - sum(bool(v) for v in old.values())
    session.flush()


__all__ = ["RULE", "all_modalities", "columns", "normalise", "rebuild_all",
           "rebuild_modality", "refresh_groups"]
