"""Board pages read from the standings (issue 16): one indexed range plus counts.

A page of a board is the rows of one standings slice (`leaderboard.server.models.standings`) in
key order: "team" mode reads the rows that represent their team (``rep_key``), "all" mode every
row with disqualified ones last (``all_key``). The rank of the page's first competitor is one
plus the number of competitors before it, an index range count; ranks then run down the page.
Memory per request is one page, whatever the board's size.

The result has the shape `leaderboard.server.boards.service.compute_board_full` builds from the
score rows (tests hold the two equal), plus paging: ``page``, ``per_page``, ``total``,
``pages``, ``ranked`` and ``baselines``.
"""
from __future__ import annotations

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from leaderboard.core import records
from leaderboard.core.records import slice_key_of
from leaderboard.server.boards.ledger import shown_cells
from leaderboard.server.boards.standings import Cell, board_order, columns_for, tie_break_rule
from leaderboard.server.models import Submission, Team
from leaderboard.server.models.standings import Standing, StandingBoard


def _slices(session: Session, info: dict, split: str) -> tuple[str, str]:
    """(shown part, pick part): ("all", "all") unless the split's scores carry parts."""
    has_parts = session.scalar(
        select(StandingBoard.id).where(StandingBoard.benchmark_id == info["id"],
                                       StandingBoard.split == split,
                                       StandingBoard.part == "public",
                                       StandingBoard.rows > 0).limit(1)) is not None
    if not has_parts:
        return "all", "all"
    return ("private" if info["private_revealed"] else "public"), "public"


def _resolve(session: Session, info: dict, task: dict, split: str, modality: str | None,
             wanted: dict):
    shown, pick = _slices(session, info, split)
    slices = sorted(session.scalars(
        select(StandingBoard.slice_key).where(
            StandingBoard.benchmark_id == info["id"], StandingBoard.split == split,
            StandingBoard.task == task["key"], StandingBoard.part == pick,
            StandingBoard.rows > 0)))
    desired = dict(wanted)
    if modality is not None:
        desired["modality"] = modality
    skey = slice_key_of(desired)
    if skey not in slices and modality is not None and list(task["modalities"]) == [modality]:
        # a one-modality task's overall numbers are that modality's numbers
        desired.pop("modality")
        skey = slice_key_of(desired)
    sb = session.scalar(select(StandingBoard).where(
        StandingBoard.benchmark_id == info["id"], StandingBoard.split == split,
        StandingBoard.task == task["key"], StandingBoard.slice_key == skey,
        StandingBoard.part == shown))
    return shown, pick, slices, skey, sb


def board_page_from_standings(session: Session, info: dict, task: dict, split: str, *,
                              modality: str | None, wanted: dict, mode: str, page: int = 1,
                              per_page: int | None = None) -> dict:
    """One page of a board (see the module docstring); ``per_page`` None: every row."""
    shown, pick, slices, skey, sb = _resolve(session, info, task, split, modality, wanted)
    present = {m for m, c in ((sb.metrics_json if sb else None) or {}).items() if c > 0}
    judged = {m for m, c in ((sb.judged_json if sb else None) or {}).items() if c > 0}
    columns = columns_for(info["metrics"], task, present)
    judge = sb.judge if sb is not None else None
    base = {"benchmark": info["key"], "benchmark_title": info["title"], "task": task,
            "split": split, "part": shown, "pick_part": pick, "modality": modality,
            "slice_key": skey, "slices": slices, "mode": mode,
            # the "other slices" filter: modality has its own filter, so it is left out here
            "slice_choices": sorted({slice_key_of({k: v for k, v in
                                                   records.parse_slice_key(s).items()
                                                   if k != "modality"})
                                     for s in slices} - {""}),
            "private_revealed": info["private_revealed"],
            "columns": [{**c.as_dict(), "judge": judge if c.metric in judged else None}
                        for c in columns], "primary": task["headline"]}
    empty = {"page": page, "per_page": per_page, "total": 0, "pages": 1, "ranked": 0,
             "baselines": []}
    if not columns:
        return {**base, **empty, "rows": [], "rule": ""}
    primary, _order = board_order(info["metrics"], task, present)
    secondary = task.get("secondary", [])
    base["primary"] = primary
    base["rule"] = tie_break_rule(columns, primary=primary, secondary=secondary)
    key = Standing.rep_key if mode == "team" else Standing.all_key
    on = (Standing.board_id == sb.id, key.is_not(None))
    # the slice's counters, not a count over the board (kept by the ledger)
    total, ranked = (sb.reps, sb.ranked_reps) if mode == "team" else (sb.rows, sb.ranked)
    q = _rows_query(key).where(*on).order_by(key)
    if per_page is not None:
        q = q.offset((page - 1) * per_page).limit(per_page)
    rows_raw = session.execute(q).all()
    rank = 0
    if rows_raw:
        rank = session.scalar(select(func.count()).select_from(Standing)
                              .where(*on, Standing.competes.is_(True), key < rows_raw[0].key))
    rows = []
    for r in rows_raw:
        if r.competes:
            rank += 1
        rows.append(_row_dict(r, columns, judge, rank if r.competes else None))
    baselines = [_row_dict(r, columns, judge, None) for r in session.execute(
        _rows_query(key).where(Standing.board_id == sb.id, Standing.is_baseline.is_(True),
                               key.is_not(None)).order_by(key).limit(50))]
    pages = 1 if per_page is None else max(1, -(-total // per_page))
    return {**base, "rows": rows, "page": page, "per_page": per_page, "total": total,
            "pages": pages, "ranked": ranked, "baselines": baselines}


def _rows_query(key):
    return (select(key.label("key"), Standing.competes, Standing.cells_json,
                   Standing.submission_id, Submission.team_id, Team.name.label("team_name"),
                   Submission.method_name, Submission.created_at, Submission.is_baseline,
                   Submission.baseline_kind, Submission.selected,
                   Submission.disqualified_reason)
            .join(Submission, Standing.submission_id == Submission.id)
            .outerjoin(Team, Submission.team_id == Team.id))


def _row_dict(r, columns, judge: str | None, rank: int | None) -> dict:
    cells = shown_cells(r.cells_json, judge)
    name = r.team_name or (f"Baseline ({r.baseline_kind})" if r.is_baseline else "")
    values = {}
    for c in columns:
        v = cells.get(c.metric)
        values[c.metric] = (Cell(v[0], v[1], v[2], v[3] or 0) if v else Cell(None)).as_dict()
    return {"rank": rank, "submission_id": r.submission_id,
            "team": {"id": r.team_id, "name": name}, "method_name": r.method_name,
            "created_at": r.created_at.isoformat(), "is_baseline": r.is_baseline,
            "baseline_kind": r.baseline_kind, "selected": r.selected,
            "disqualified_reason": r.disqualified_reason, "values": values,
            "judges": {m: c[4] for m, c in cells.items() if c[4] is not None}}


def placement(session: Session, info: dict, task: dict, split: str, submission_id: int,
              mode: str) -> dict | None:
    """{"rank", "of"} of one submission on a task's overall board in ``mode``; None when it is
    not a row there (team mode: it does not represent its team)."""
    shown, _pick, _slices_, _skey, sb = _resolve(session, info, task, split, None, {})
    if sb is None:
        return None
    key = Standing.rep_key if mode == "team" else Standing.all_key
    mine = session.execute(select(key, Standing.competes).where(
        Standing.board_id == sb.id, Standing.submission_id == submission_id)).first()
    if mine is None or mine[0] is None:
        return None
    competing = (Standing.board_id == sb.id, key.is_not(None), Standing.competes.is_(True))
    of = sb.ranked_reps if mode == "team" else sb.ranked
    if not mine[1]:
        return {"rank": None, "of": of}
    ahead = session.scalar(select(func.count()).select_from(Standing)
                           .where(*competing, key < mine[0]))
    return {"rank": ahead + 1, "of": of}


def team_rows(session: Session, info: dict, task: dict, split: str, modality: str | None, *,
              baselines: bool = False):
    """(slice, rows) of a board in team mode, best first, for cross-benchmark aggregates: each
    row (submission_id, team_id, is_baseline, baseline_kind, rep_key), no cells; the team rows,
    or with ``baselines`` the baseline rows only (a few, through their index); slice None when
    the board has no rows."""
    _shown, _pick, _slices_, _skey, sb = _resolve(session, info, task, split, modality, {})
    if sb is None:
        return None, []
    rows = session.execute(
        select(Standing.submission_id, Submission.team_id, Submission.is_baseline,
               Submission.baseline_kind, Standing.rep_key)
        .join(Submission, Standing.submission_id == Submission.id)
        .where(Standing.board_id == sb.id, Standing.rep_key.is_not(None),
               Standing.is_baseline.is_(baselines))
        .order_by(Standing.rep_key)).all()
    return sb, rows


def headline_cells(session: Session, wanted: list[tuple[int, int, str, str | None]]) -> dict:
    """{(board_id, submission_id): cell dict of ``metric``} for (board id, submission id,
    metric, judge) tuples: the cells one page of an aggregate shows."""
    out = {}
    if not wanted:
        return out
    meta = {(b, sid): (m, j) for b, sid, m, j in wanted}
    for bid, sid, cells in session.execute(
            select(Standing.board_id, Standing.submission_id, Standing.cells_json)
            .where(Standing.submission_id.in_({sid for _b, sid, _m, _j in wanted}),
                   Standing.board_id.in_({b for b, _s, _m, _j in wanted}))):
        if (bid, sid) not in meta:
            continue
        metric, judge = meta[(bid, sid)]
        v = shown_cells(cells, judge).get(metric)
        out[(bid, sid)] = (Cell(v[0], v[1], v[2], v[3] or 0) if v else Cell(None)).as_dict()
    return out


def iter_board_rows(session: Session, info: dict, task: dict, split: str, *,
                    modality: str | None, wanted: dict, mode: str, chunk: int = 1000):
    """Every row of a board, best first, read in keyset chunks of ``chunk`` rows (an export:
    memory is one chunk, and no chunk scans the rows before it)."""
    _shown, _pick, _slices_, _skey, sb = _resolve(session, info, task, split, modality, wanted)
    if sb is None:
        return
    present = {m for m, c in (sb.metrics_json or {}).items() if c > 0}
    columns = columns_for(info["metrics"], task, present)
    if not columns:
        return
    key = Standing.rep_key if mode == "team" else Standing.all_key
    last, rank = None, 0
    while True:
        q = _rows_query(key).where(Standing.board_id == sb.id, key.is_not(None))
        if last is not None:
            q = q.where(key > last)
        rows = session.execute(q.order_by(key).limit(chunk)).all()
        if not rows:
            return
        for r in rows:
            if r.competes:
                rank += 1
            yield _row_dict(r, columns, sb.judge, rank if r.competes else None)
        if len(rows) < chunk:
            return  # the last chunk: no query for an empty one
        last = rows[-1].key


def mean_rank_page(session: Session, board_ids: list[int], *, offset: int,
                   limit: int | None) -> tuple[int, list[dict]]:
    """(teams, one page) of the mean-rank aggregate over boards, computed in the database.

    Each board's team rows (baselines left out) get standard competition ranks by their first
    key column (equal values share a rank, n/a gets none), partitioned so that n/a rows never
    take a rank; a row key is "team:<id>" or "submission:<id>". Order: lower mean rank, more
    entries, then the row key's text; rows without any rank last. The caller makes sure each
    board's first key column is the column to rank by (not a by-magnitude one). Each returned
    row: {"key", "team_id", "mean_rank", "entries", "ranks": {board id: rank},
    "subs": {board id: submission id}}.
    """
    if not board_ids:
        return 0, []
    pg = session.get_bind().dialect.name == "postgresql"
    ids = ", ".join(str(int(b)) for b in board_ids)
    # the row key comes from the standing's group ("t:<team>" / "s:<submission>"): no join
    ranked = (
        "SELECT CASE WHEN substr(s.grp, 1, 2) = 't:' THEN 'team:' ELSE 'submission:' END"
        " || substr(s.grp, 3) AS rk, s.board_id AS board_id,"
        " s.submission_id AS submission_id,"
        " CASE WHEN substr(s.rep_key, 1, 1) = '0' THEN rank() OVER ("
        "  PARTITION BY s.board_id, substr(s.rep_key, 1, 1) ORDER BY substr(s.rep_key, 1, 17))"
        " END AS rnk"
        " FROM standing s"
        f" WHERE s.board_id IN ({ids}) AND s.rep_key IS NOT NULL"
        " AND s.is_baseline = " + ("false" if pg else "0"))
    mean = ("CAST(sum(rnk) AS " + ("double precision" if pg else "REAL") + ")"
            " / NULLIF(count(rnk), 0)")
    collate = ' COLLATE "C"' if pg else ""
    # one statement: the ranks once, the aggregate, its page, and the page's own cells
    sql = (f"WITH ranked AS ({ranked}),"
           f" agg AS (SELECT rk, count(rnk) AS entries, {mean} AS mean FROM ranked"
           " GROUP BY rk),"
           " page AS (SELECT rk, entries, mean, count(*) OVER () AS total FROM agg"
           f" ORDER BY (entries = 0), mean, entries DESC, rk{collate}"
           + ("" if limit is None else f" LIMIT {int(limit)} OFFSET {int(offset)}") + ")"
           " SELECT page.rk, page.entries, page.mean, page.total, ranked.board_id,"
           " ranked.submission_id, ranked.rnk FROM page JOIN ranked ON ranked.rk = page.rk"
           f" ORDER BY (page.entries = 0), page.mean, page.entries DESC, page.rk{collate}")
    out: dict[str, dict] = {}
    total = None
    for rk, entries, m, tot, bid, sid, rnk in session.execute(text(sql)):
        total = tot
        row = out.get(rk)
        if row is None:
            kind, _, num = rk.partition(":")
            row = out[rk] = {"key": rk, "team_id": int(num) if kind == "team" else None,
                             "mean_rank": float(m) if m is not None else None,
                             "entries": entries, "ranks": {}, "subs": {}}
        row["subs"][bid] = sid
        if rnk is not None:
            row["ranks"][bid] = int(rnk)
    if total is None:  # an empty page: still say how many rows there are
        total = session.execute(text(
            f"WITH ranked AS ({ranked}) SELECT count(DISTINCT rk) FROM ranked")).scalar_one()
    return total, list(out.values())
