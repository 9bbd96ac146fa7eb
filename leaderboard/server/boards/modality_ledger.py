"""Modality boards kept in the scoring transaction (issue 25; per kind and split, issue 33).

A modality board is one modality x one board kind (detection, localization, question answering,
explanation: `leaderboard.server.boards.normalise`) x one split. It has one column per task of
that kind that covers the modality (every benchmark's latest release, in key order:
`RELEASES`): the task's board on that split, the part that board shows (dev: all; test: public
until revealed), the modality's slice (or the overall board of a one-modality task), its
headline metric. A team's cell in a column is the headline of its row on that board (the row
that represents it there).

**The rule** (`RULE`, written under every board). Each headline is normalised per task: chance
0, perfect 1 (`normalise.normalise`; each column states its chance level). A row's score is the
mean of its normalised cells. A team appears as soon as it has a result on one task of the
board; teams with a result on every task (full coverage) are ranked by their mean, equal means
sharing a rank; the others are listed below them, most tasks first, with their coverage and
their mean over the tasks they cover, unranked. Baselines (one row per kind: random, all-fake,
all-real) are reference rows placed by the same order among the teams, never given a rank.

Why the mean of normalised scores: a team's mean depends only on its own results (so it is kept
by updating the rows that changed), and normalising to chance 0 puts a 50%-chance yes/no task
and a 5%-chance TPR(5) on one scale; mixing kinds (judgment beside explanation) is what the
kinds avoid.

Maintenance: `leaderboard.server.boards.hook` calls `refresh_groups` in the transaction that
changed the standings, for the groups ("t:<team>", "s:<submission>") whose rows changed; the
baseline rows of each touched board are recomputed with them (a handful of rows); when a
board's columns change (a first row on a new board, a benchmark imported or revealed, a
re-key), that board is rebuilt from the standings (`rebuild_board`).
"""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, insert, select, text
from sqlalchemy.orm import Session

from leaderboard.core.records import slice_key_of
from leaderboard.server.boards.ledger import _float_code, shown_cells
from leaderboard.server.boards.normalise import (
    KIND_ORDER,
    KIND_TITLES,
    board_kind,
    chance_level,
    normalise,
    perfect_value,
)
from leaderboard.server.boards.sql_keys import NO_JUDGE, fcode
from leaderboard.server.boards.standings import by_magnitude
from leaderboard.server.models import Benchmark, Submission
from leaderboard.server.models.standings import (
    ModalityBoard,
    ModalityStanding,
    Standing,
    StandingBoard,
)
from leaderboard.server.services import releases

#: display order of modalities (benchmarks.md, "Per-modality boards")
MODALITY_ORDER = ("image", "video", "audio", "text", "3d")
#: display order of splits (the held-out split first: what a board is cited for)
SPLIT_ORDER = ("test", "dev")
NA = "1" + "0" * 16
#: bulk deletes without the ORM fetching each deleted row's id (nothing holds those objects)
_NOSYNC = {"synchronize_session": False}

#: which release of a benchmark a modality board reads (issue 37): its columns move to a new
#: release when it is imported (its boards start empty and fill as teams submit or are re-run);
#: older releases keep their own task boards
RELEASES = ("A benchmark with several releases contributes its latest release only; its "
            "older releases keep their own task boards.")
RULE = ("Each task's headline is normalised so that chance is 0 and perfect is 1: "
        "(value - chance) / (perfect - chance), capped at 1 and not floored (below chance is "
        "negative); each column states its chance level and why. A row's score is the mean of "
        "its normalised cells, with a 95% bootstrap interval over the items (each task's items "
        "resampled, the metric recomputed and normalised, then averaged) and n, the items "
        "behind it. A team is listed as soon as it has a result on one task of this board; only "
        "teams with a result on every task are ranked, by their mean (equal means share a "
        "rank); the others are listed below them, most tasks first, with their coverage and "
        "their mean over the tasks they cover, unranked. Each cell is the team's row on that "
        "task's board (this split, the part the board shows). Baselines are reference rows: "
        "placed by the same order among the teams, marked, never given a rank. " + RELEASES)


def benchmark_boards(meta: dict) -> set[tuple[str, str, str]]:
    """The (modality, kind, split) boards a benchmark has a column on."""
    out = set()
    for t in meta.get("tasks", []):
        kind = board_kind(t)
        if kind is None:
            continue
        for m in t.get("modalities", []):
            for split in meta.get("splits", []):
                out.add((m, kind, split))
    return out


def benchmark_modalities(meta: dict) -> set[str]:
    return {m for t in meta.get("tasks", []) for m in t.get("modalities", [])}


def _order(seq, order) -> list:
    return [x for x in order if x in seq] + sorted(set(seq) - set(order))


def all_modalities(session: Session) -> list[str]:
    seen: set[str] = set()
    for meta in session.scalars(select(Benchmark.meta_json)):
        seen |= benchmark_modalities(meta or {})
    return _order(seen, MODALITY_ORDER)


def all_boards(session: Session) -> list[tuple[str, str, str]]:
    """Every (modality, kind, split) board, in display order."""
    seen: set = set()
    for meta in session.scalars(select(Benchmark.meta_json)):
        seen |= benchmark_boards(meta or {})
    mods = _order({m for m, _k, _s in seen}, MODALITY_ORDER)
    kinds = _order({k for _m, k, _s in seen}, KIND_ORDER)
    splits = _order({s for _m, _k, s in seen}, SPLIT_ORDER)
    return [(m, k, s) for m in mods for k in kinds for s in splits if (m, k, s) in seen]


def kind_title(kind: str) -> str:
    return KIND_TITLES.get(kind, kind)


class _Slices:
    """The standings' board slices and the benchmarks, read once (one query each) for every
    board a refresh resolves: per board a handful of lookups instead of a few queries per
    task per benchmark."""

    def __init__(self, session: Session):
        # the latest release of each benchmark only (issue 37, `RELEASES`)
        self.benchmarks = sorted(releases.latest_releases(session), key=lambda b: b.key)
        self.slices: dict[tuple, tuple[int, str | None, int]] = {}
        self.has_parts: set[tuple[int, str]] = set()
        for sid, bid, split, task, skey, part, rows, judge in session.execute(
                select(StandingBoard.id, StandingBoard.benchmark_id, StandingBoard.split,
                       StandingBoard.task, StandingBoard.slice_key, StandingBoard.part,
                       StandingBoard.rows, StandingBoard.judge)):
            self.slices[(bid, split, task, skey, part)] = (sid, judge, rows or 0)
            if part == "public" and rows:
                self.has_parts.add((bid, split))

    def rows(self, key: tuple) -> int:
        hit = self.slices.get(key)
        return hit[2] if hit else 0


def columns(session: Session, modality: str, kind: str, split: str,
            slices: _Slices | None = None) -> list[dict]:
    """The board's columns, resolved to their standings slices (``board_id`` None: that task
    board has no rows yet). ``slices``: read once by the caller for many boards."""
    slices = _Slices(session) if slices is None else slices
    out = []
    for bench in slices.benchmarks:
        meta = bench.meta_json or {}
        tasks = [t for t in meta.get("tasks", []) if modality in t.get("modalities", [])
                 and board_kind(t) == kind]
        if split not in meta.get("splits", []) or not tasks:
            continue
        has_parts = (bench.id, split) in slices.has_parts
        shown, pick = (("private" if bench.private_revealed else "public"), "public") \
            if has_parts else ("all", "all")
        for t in tasks:
            skey = slice_key_of({"modality": modality})
            if (not slices.rows((bench.id, split, t["key"], skey, pick))
                    and list(t["modalities"]) == [modality]):
                skey = ""  # a one-modality task's overall numbers are that modality's
            sb = slices.slices.get((bench.id, split, t["key"], skey, shown))
            spec = meta.get("metrics", {}).get(t["headline"], {})
            hib = bool(spec.get("higher_is_better", True))
            mag = by_magnitude(spec) if spec else False
            chance, why = chance_level(bench.family or bench.key, t, t["headline"], spec)
            out.append({"key": f"{bench.key}/{t['key']}", "benchmark": bench.key,
                        "benchmark_id": bench.id, "task": t["key"], "task_kind": t["kind"],
                        "split": split, "part": shown, "slice_key": skey,
                        "metric": t["headline"],
                        "title": f"{bench.title}: {t.get('title') or t['key']}",
                        "metric_title": spec.get("title") or t["headline"],
                        "higher_is_better": hib, "by_magnitude": mag,
                        "arrow": "|\u2193|" if mag else ("\u2191" if hib else "\u2193"),
                        "fmt": spec.get("fmt", "num"), "lower": spec.get("lower"),
                        "upper": spec.get("upper"),
                        "chance": None if mag else chance, "chance_basis":
                        "ranked by |value|: 1 - |value| / its largest bound" if mag else why,
                        "perfect": 0.0 if mag else perfect_value(spec),
                        "board_id": sb[0] if sb else None, "judge": sb[1] if sb else None})
    return out


# -- rows ----------------------------------------------------------------------------------------
def _row(grp: str, cols: list[dict], found: dict[str, tuple[int, dict]], *,
         is_baseline: bool = False) -> dict:
    """A modality row of ``grp`` from its standing on each column (``found[col key]`` =
    (submission id, cells_json))."""
    cells, scores, n_items = {}, [], 0
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
            n_items += n
    covered = len(scores)
    # 12 decimals: equal results tie whatever the order they were summed in (SQL or Python)
    mean = round(sum(scores) / covered, 12) if covered else None
    full = bool(cols) and covered == len(cols)
    code = NA if mean is None else "0" + _float_code(-mean)
    if full:
        key = "0" + code + grp
    else:
        key = "1" + f"{len(cols) - covered:04d}" + code + grp
    team_id = int(grp[2:]) if grp.startswith("t:") else None
    return {"grp": grp, "team_id": team_id, "is_baseline": is_baseline, "covered": covered,
            "ranked": full and not is_baseline, "mean_score": mean, "n_items": n_items,
            "sort_key": key, "cells_json": cells}


def _standings_of(session: Session, cols: list[dict], grps: Iterable[str] | None):
    """(grp, column key, submission id, cells_json) of the representative team rows on the
    columns' boards, by group; ``grps`` None: every group."""
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


def _baseline_rows(session: Session, cols: list[dict]) -> list[dict]:
    """One reference row per baseline kind ("b:<kind>"): on each column, the kind's best row
    (its representative order on that board)."""
    col_of = {c["board_id"]: c["key"] for c in cols if c["board_id"] is not None}
    if not col_of:
        return []
    found: dict[str, dict] = {}
    for bid, sid, kind, cells in session.execute(
            select(Standing.board_id, Standing.submission_id, Submission.baseline_kind,
                   Standing.cells_json)
            .join(Submission, Standing.submission_id == Submission.id)
            .where(Standing.board_id.in_(list(col_of)), Standing.is_baseline.is_(True),
                   Standing.rep_key.is_not(None))
            .order_by(Standing.board_id, Standing.rep_key)):
        found.setdefault(f"b:{kind or 'baseline'}", {}).setdefault(col_of[bid], (sid, cells))
    return [_row(g, cols, f, is_baseline=True) for g, f in sorted(found.items())]


def _signature(cols: list[dict]) -> list:
    """What the board stores of its columns (and compares to see whether they changed)."""
    return [dict(c) for c in cols]


def _board(session: Session, key: tuple[str, str, str]) -> ModalityBoard:
    modality, kind, split = key
    mb = session.scalar(select(ModalityBoard).where(ModalityBoard.modality == modality,
                                                    ModalityBoard.kind == kind,
                                                    ModalityBoard.split == split))
    if mb is None:
        mb = ModalityBoard(modality=modality, kind=kind, split=split, rows=0, ranked=0,
                           columns_json=[])
        session.add(mb)
        session.flush()
    return mb


def _write_baselines(session: Session, mb: ModalityBoard, cols: list[dict]) -> None:
    session.execute(delete(ModalityStanding).where(ModalityStanding.board_id == mb.id,
                                                   ModalityStanding.is_baseline.is_(True)),
                    execution_options=_NOSYNC)
    rows = [{**r, "board_id": mb.id} for r in _baseline_rows(session, cols)]
    if rows:
        session.execute(insert(ModalityStanding), rows)


def rebuild_board(session: Session, key: tuple[str, str, str],
                  cols: list[dict] | None = None) -> int:
    """Every row of one modality board from the standings; returns the team rows written.

    On PostgreSQL the team rows come from one ``INSERT ... SELECT`` (the headline cells read
    from the rows' JSON in SQL: a Python pass decoding every row took ~5 s per 50,000
    submissions); elsewhere the Python pass `refresh_groups` shares (tests hold the two
    equal). Baseline rows (a few) always come from Python."""
    cols = columns(session, *key) if cols is None else cols
    mb = _board(session, key)
    session.execute(delete(ModalityStanding).where(ModalityStanding.board_id == mb.id),
                    execution_options=_NOSYNC)
    if session.get_bind().dialect.name == "postgresql":
        rows, ranked = _rebuild_sql(session, mb.id, cols)
    else:
        rows, ranked = _rebuild_python(session, mb.id, cols)
    _write_baselines(session, mb, cols)
    mb.rows, mb.ranked, mb.columns_json = rows, ranked, _signature(cols)
    session.flush()
    return rows


def _rebuild_python(session: Session, board_id: int, cols: list[dict]) -> tuple[int, int]:
    batch, rows, ranked = [], 0, 0
    current, found = None, {}

    def flush_group():
        nonlocal rows, ranked
        if current is not None:
            row = _row(current, cols, found)
            batch.append({**row, "board_id": board_id})
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
    return rows, ranked


def _rebuild_sql(session: Session, board_id: int, cols: list[dict]) -> tuple[int, int]:
    """(rows, ranked) of the team rows written for one modality board, in one statement
    (PostgreSQL)."""
    live = [c for c in cols if c["board_id"] is not None]
    if not live:
        return 0, 0
    values, params = [], {"mb": board_id, "ncols": len(cols)}
    for i, c in enumerate(live):
        lo = -1.0 if c.get("lower") is None else float(c["lower"])
        hi = 1.0 if c.get("upper") is None else float(c["upper"])
        values.append(f"(:b{i}, :k{i}, :m{i}, CAST(:lo{i} AS float8), CAST(:hi{i} AS float8),"
                      f" CAST(:ch{i} AS float8), CAST(:pf{i} AS float8), :mag{i}, :bj{i})")
        params.update({f"b{i}": c["board_id"], f"k{i}": c["key"], f"m{i}": c["metric"],
                       f"lo{i}": lo, f"hi{i}": hi,
                       f"ch{i}": 0.0 if c.get("chance") is None else float(c["chance"]),
                       f"pf{i}": float(c["perfect"]), f"mag{i}": bool(c["by_magnitude"]),
                       f"bj{i}": " + " + (c["judge"] or NO_JUDGE)})
    # the last record of the headline the column's judge allows (`ledger.shown_cells`)
    allowed = ("(e->>5 IS NULL OR replace(replace(' + ' || (e->>5), ' + self-mapped', ''),"
               " c.bj, '') = '')")
    # `normalise.normalise` in SQL
    norm = ("CASE WHEN v IS NULL OR v = 'NaN'::float8 THEN NULL"
            " WHEN mag THEN least(1.0, 1.0 - abs(v) / (CASE WHEN"
            " greatest(abs(lo), abs(hi)) = 0 THEN 1.0 ELSE greatest(abs(lo), abs(hi)) END))"
            " WHEN pf = ch THEN NULL"
            " ELSE least(1.0, (v - ch) / (pf - ch)) END")
    mean_code = fcode(True, "-(a.mean)")
    res = session.execute(text(
        "INSERT INTO modality_standing (board_id, grp, team_id, is_baseline, covered, ranked,"
        " mean_score, n_items, sort_key, cells_json)"
        " SELECT :mb, a.grp, CASE WHEN a.grp LIKE 't:%' THEN CAST(substr(a.grp, 3) AS integer)"
        " END, false, a.covered, a.covered = :ncols, a.mean, a.n_items,"
        " CASE WHEN a.covered = :ncols THEN '0' || '0' || " + mean_code + " || a.grp"
        " ELSE '1' || lpad(CAST(:ncols - a.covered AS text), 4, '0') ||"
        " CASE WHEN a.mean IS NULL THEN '1' || repeat('0', 16) ELSE '0' || " + mean_code +
        " END || a.grp END, a.cells"
        " FROM (SELECT grp, count(norm) AS covered,"
        " CASE WHEN count(norm) > 0 THEN CAST(round(CAST(sum(norm) / count(norm) AS numeric),"
        " 12) AS float8) END AS mean,"
        " coalesce(sum(CASE WHEN norm IS NOT NULL THEN n END), 0) AS n_items,"
        " json_object_agg(col_key, json_build_array(submission_id, v, clo, chi, n, norm))"
        " AS cells FROM ("
        "  SELECT r.grp, r.col_key, r.submission_id, r.v, r.clo, r.chi, r.n, " + norm +
        "  AS norm FROM ("
        "   SELECT st.grp, c.col_key, st.submission_id, c.lo, c.hi, c.ch, c.pf, c.mag,"
        "   CAST(rec->>1 AS float8) AS v, CAST(rec->>2 AS float8) AS clo,"
        "   CAST(rec->>3 AS float8) AS chi,"
        "   CASE WHEN rec IS NULL THEN 0 ELSE coalesce(CAST(rec->>4 AS integer), 0) END AS n"
        "   FROM standing st JOIN (VALUES " + ", ".join(values) + ")"
        "   AS c(board_id, col_key, metric, lo, hi, ch, pf, mag, bj) ON c.board_id = st.board_id"
        "   LEFT JOIN LATERAL (SELECT e AS rec FROM json_array_elements(st.cells_json->'shown')"
        "   WITH ORDINALITY AS x(e, i) WHERE e->>0 = c.metric AND " + allowed +
        "   ORDER BY i DESC LIMIT 1) last ON true"
        "   WHERE st.rep_key IS NOT NULL AND st.is_baseline = false"
        # the columns' boards by the index (ix_standing_rep), not a scan of every board's rows
        # (the join alone leaves the planner a full scan: ~2.6M rows per board at 500,000)
        "   AND st.board_id IN (" + ", ".join(str(int(c["board_id"])) for c in live) + ")"
        "  ) r"
        " ) q GROUP BY grp) a"), params)
    rows = res.rowcount
    ranked = session.scalar(text("SELECT count(*) FROM modality_standing WHERE board_id = :mb"
                                 " AND ranked"), {"mb": board_id})
    return rows, int(ranked or 0)


def rebuild_all(session: Session) -> int:
    """Every modality board (and none for a board no benchmark has any more)."""
    keys = all_boards(session)
    for mb in session.scalars(select(ModalityBoard)).all():
        if (mb.modality, mb.kind, mb.split) not in keys:
            session.delete(mb)
    session.flush()
    slices = _Slices(session)
    return sum(rebuild_board(session, k, columns(session, *k, slices)) for k in keys)


def is_empty(session: Session) -> bool:
    return session.scalar(select(ModalityBoard.id).limit(1)) is None


def refresh_groups(session: Session, touched: Iterable[tuple[int, str]]) -> None:
    """Bring the modality rows of these (benchmark id, group) pairs up to date, in the
    caller's transaction; a board whose columns changed is rebuilt."""
    by_board: dict[tuple, set[str]] = {}
    metas = dict(session.execute(select(Benchmark.id, Benchmark.meta_json)).all())
    touched = list(touched)
    if any(bid not in metas for bid, _grp in touched):
        rebuild_all(session)  # a benchmark was deleted: its boards lost columns
        return
    for bid, grp in touched:
        for key in benchmark_boards(metas.get(bid) or {}):
            by_board.setdefault(key, set()).add(grp)
    slices = _Slices(session)
    for key, grps in sorted(by_board.items()):
        cols = columns(session, *key, slices)
        mb = _board(session, key)
        if "*" in grps or (mb.columns_json or []) != _signature(cols):
            rebuild_board(session, key, cols)
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
        _write_baselines(session, mb, cols)
    session.flush()


__all__ = ["RULE", "all_boards", "all_modalities", "benchmark_boards", "columns",
           "kind_title", "normalise", "rebuild_all", "rebuild_board", "refresh_groups"]
