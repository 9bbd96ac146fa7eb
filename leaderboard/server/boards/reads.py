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

import re
from datetime import datetime, time, timedelta, timezone

from sqlalchemy import bindparam, case, func, or_, select, text
from sqlalchemy.orm import Session

from leaderboard.core import records
from leaderboard.core.records import slice_key_of
from leaderboard.server.boards.ledger import shown_cells
from leaderboard.server.boards.standings import Cell, board_order, columns_for, tie_break_rule
from leaderboard.server.models import Submission, Team
from leaderboard.server.models.standings import Standing, StandingBoard
from leaderboard.server.services.judging import record_judge_allowed


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
                              per_page: int | None = None,
                              after: tuple[str, int] | None = None) -> dict:
    """One page of a board (see the module docstring); ``per_page`` None: every row.

    ``after`` (key, rank): the page starts after that key, its ranks after that rank (keyset
    paging: no offset, no count). ``next_after`` in the result: the same for the next page,
    None on the last one."""
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
    if after is not None:
        q = q.where(key > after[0])
    if per_page is not None:
        q = q.limit(per_page) if after is not None else q.offset((page - 1) * per_page).limit(per_page)
    rows_raw = session.execute(q).all()
    rank = 0
    if after is not None:
        rank = after[1]
    elif rows_raw:
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
    nxt = ((rows_raw[-1].key, rank) if per_page is not None and len(rows_raw) == per_page
           and page < pages else None)
    return {**base, "rows": rows, "page": page, "per_page": per_page, "total": total,
            "pages": pages, "ranked": ranked, "baselines": baselines, "next_after": nxt}


def _rows_query(key):
    return (select(key.label("key"), Standing.competes, Standing.cells_json,
                   Standing.submission_id, Submission.team_id, Team.name.label("team_name"),
                   Submission.method_name, Submission.created_at, Submission.is_baseline,
                   Submission.baseline_kind, Submission.selected,
                   Submission.disqualified_reason, Submission.code_url)
            .join(Submission, Standing.submission_id == Submission.id)
            .outerjoin(Team, Submission.team_id == Team.id))


def _row_name(r) -> str:
    """The name a row shows in its Team column (a baseline's kind when it has no team)."""
    return r.team_name or (f"Baseline ({r.baseline_kind})" if r.is_baseline else "")


def _row_dict(r, columns, judge: str | None, rank: int | None) -> dict:
    cells = shown_cells(r.cells_json, judge)
    name = _row_name(r)
    values = {}
    for c in columns:
        v = cells.get(c.metric)
        values[c.metric] = (Cell(v[0], v[1], v[2], v[3] or 0) if v else Cell(None)).as_dict()
    return {"rank": rank, "submission_id": r.submission_id,
            "team": {"id": r.team_id, "name": name}, "method_name": r.method_name,
            "created_at": r.created_at.isoformat(), "is_baseline": r.is_baseline,
            "baseline_kind": r.baseline_kind, "selected": r.selected,
            "disqualified_reason": r.disqualified_reason, "values": values,
            "code_url": r.code_url or "",
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


def top_ranked(session: Session, info: dict, task: dict, split: str, *, modality: str | None,
               wanted: dict, mode: str, limit: int) -> list[dict]:
    """The board's first ``limit`` ranked rows as {"submission_id", "rank"}, best first: one
    index range over the competing rows, nothing else read."""
    _shown, _pick, _slices_, _skey, sb = _resolve(session, info, task, split, modality, wanted)
    if sb is None:
        return []
    key = Standing.rep_key if mode == "team" else Standing.all_key
    ids = session.scalars(select(Standing.submission_id).where(
        Standing.board_id == sb.id, key.is_not(None), Standing.competes.is_(True))
        .order_by(key).limit(limit)).all()
    return [{"submission_id": sid, "rank": i} for i, sid in enumerate(ids, start=1)]


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


def rows_of(session: Session, info: dict, task: dict, split: str,
            submission_ids: list[int]) -> dict | None:
    """Some submissions' rows on a task's overall board, for a page that shows one team's
    method (issue 38): None when the board has none of them, else {"board_id", "judge",
    "rows": [{"submission_id", "competes", "rep_key", "all_key", "cells" (the shown cells:
    `ledger.shown_cells`)}]}, best first in the board's "all" order."""
    _shown, _pick, _slices_, _skey, sb = _resolve(session, info, task, split, None, {})
    if sb is None or not submission_ids:
        return None
    mine = session.execute(
        select(Standing.submission_id, Standing.competes, Standing.rep_key, Standing.all_key,
               Standing.cells_json)
        .where(Standing.board_id == sb.id, Standing.submission_id.in_(submission_ids),
               Standing.all_key.is_not(None))
        .order_by(Standing.all_key)).all()
    if not mine:
        return None
    return {"board_id": sb.id, "judge": sb.judge,
            "rows": [{"submission_id": r.submission_id, "competes": r.competes,
                      "rep_key": r.rep_key, "all_key": r.all_key,
                      "cells": shown_cells(r.cells_json, sb.judge)} for r in mine]}


def place_of(session: Session, board_id: int, mode: str, key: str) -> dict:
    """Where the row with ``key`` (its ``rep_key`` in "team" mode, ``all_key`` in "all") stands
    on its board: {"place" (1 + the rows before it, ranked or not: its row number on the
    board's pages), "ranked_before" (the competing rows before it), "key_before" (the key of
    the row just before it; None for the first)}: two index range reads, so that a page can
    read the row as the board's keyset page after ``key_before`` (`board.board`'s cursor)."""
    col = Standing.rep_key if mode == "team" else Standing.all_key
    before = (Standing.board_id == board_id, col.is_not(None), col < key)
    total, ranked = session.execute(select(
        func.count(), func.coalesce(func.sum(case((Standing.competes.is_(True), 1), else_=0)),
                                    0)).where(*before)).one()
    key_before = session.scalar(select(col).where(*before).order_by(col.desc()).limit(1))
    return {"place": total + 1, "ranked_before": int(ranked), "key_before": key_before}


def light_rows(session: Session, info: dict, task: dict, split: str, *, modality: str | None,
               wanted: dict, mode: str, narrow: dict | None = None) -> dict | None:
    """The rows of a board, best first, without their cells: what the board tools filter on
    (issue 38). None when the board has no row; else {"board_id", "judge", "rows": [[
    submission_id, rank (the board's; None for a row that does not compete), team name (as the
    row shows it), method name, the day it was made (``YYYY-MM-DD``, UTC), is_baseline,
    code_url]]}. No cells are decoded, and on PostgreSQL the day is formatted by the server.

    ``narrow`` (the board tools' filters: ``q``, ``code``, ``from``, ``to``, ``baselines``):
    only rows that may pass them are returned, a superset the caller filters exactly
    (`boards.tools.keep`): the database keeps the rows with a code link, the days from the day
    before ``from`` to the day after ``to``, no baselines when asked, and, on PostgreSQL for an
    ASCII ``q``, the names that contain it in lower case or that are not all ASCII (whose
    Unicode case folding only Python does) or a team-less row's; the ranks are still the whole
    board's (a running count over it, in the database)."""
    _shown, _pick, _slices_, _skey, sb = _resolve(session, info, task, split, modality, wanted)
    if sb is None:
        return None
    key = Standing.rep_key if mode == "team" else Standing.all_key
    pg = session.get_bind().dialect.name == "postgresql"
    made = (func.to_char(func.timezone("UTC", Submission.created_at), "YYYY-MM-DD") if pg
            else Submission.created_at)
    ranked = func.sum(case((Standing.competes.is_(True), 1), else_=0)).over(
        order_by=key, rows=(None, 0))
    inner = (select(Standing.competes, Standing.submission_id, key.label("k"),
                    ranked.label("ranked"), Team.name.label("team_name"),
                    Submission.method_name, made.label("made"),
                    Submission.created_at.label("created"), Submission.is_baseline,
                    Submission.baseline_kind, Submission.code_url)
             .join(Submission, Standing.submission_id == Submission.id)
             .outerjoin(Team, Submission.team_id == Team.id)
             .where(Standing.board_id == sb.id, key.is_not(None))).subquery()
    c = inner.c
    q = select(c.competes, c.submission_id, c.ranked, c.team_name, c.method_name, c.made,
               c.is_baseline, c.baseline_kind, c.code_url).where(*_narrowing(c, narrow, pg))
    rows = []
    for r in session.execute(q.order_by(c.k)):
        rows.append([r.submission_id, r.ranked if r.competes else None, _row_name(r),
                     r.method_name, r.made if pg else r.made.isoformat()[:10], r.is_baseline,
                     r.code_url or ""])
    return {"board_id": sb.id, "judge": sb.judge, "rows": rows}


def _narrowing(c, narrow: dict | None, pg: bool) -> list:
    """The database side of ``light_rows``' ``narrow``: conditions that keep every row the
    board tools would keep (see there)."""
    if not narrow:
        return []
    out = []
    if not narrow.get("baselines", True):
        out.append(c.is_baseline.is_(False))
    if narrow.get("code"):
        out.append(func.coalesce(c.code_url, "") != "")
    if narrow.get("from"):
        start = datetime.combine(narrow["from"], time.min, timezone.utc) - timedelta(days=1)
        out.append(c.created >= start)
    if narrow.get("to"):
        end = datetime.combine(narrow["to"], time.min, timezone.utc) + timedelta(days=2)
        out.append(c.created < end)
    q = narrow.get("q") or ""
    if pg and q and q.isascii():
        pattern = "%" + re.sub(r"([\\%_])", r"\\\1", q.lower()) + "%"
        out.append(or_(c.team_name.is_(None),
                       func.lower(c.team_name).like(pattern, escape="\\"),
                       func.lower(c.method_name).like(pattern, escape="\\"),
                       c.team_name.op("~")("[^[:ascii:]]"),
                       c.method_name.op("~")("[^[:ascii:]]")))
    return out


def rows_by_id(session: Session, board_id: int, mode: str, columns, judge: str | None,
               ranks: dict[int, int | None]) -> dict[int, dict]:
    """{submission id: its full row (as a board page has it)} of the submissions in ``ranks``
    ({id: the board's rank}) on board ``board_id``."""
    key = Standing.rep_key if mode == "team" else Standing.all_key
    out: dict[int, dict] = {}
    ids = list(ranks)
    for i in range(0, len(ids), 500):
        for r in session.execute(_rows_query(key).where(
                Standing.board_id == board_id, Standing.submission_id.in_(ids[i:i + 500]))):
            out[r.submission_id] = _row_dict(r, columns, judge, ranks[r.submission_id])
    return out


#: a board's rows in its order with their running count of competing rows, and the records of
#: one metric in each row's cells (see ``_RECORDS_SQL``); a row without one comes once, with
#: NULLs
_ORDER_SQL = {
    "postgresql": "SELECT b.submission_id, b.competes, b.is_baseline, b.ranked, e.rec ->> 1,"
                  " e.rec ->> 5 FROM ({board}) AS b LEFT JOIN LATERAL"
                  " json_array_elements(b.cells_json -> 'shown') WITH ORDINALITY AS e(rec, i)"
                  " ON e.rec ->> 0 = :metric ORDER BY b.k, e.i",
    "sqlite": "SELECT b.submission_id, b.competes, b.is_baseline, b.ranked, e.value -> '$[1]',"
              " e.value ->> '$[5]' FROM ({board}) AS b"
              " LEFT JOIN json_each(b.cells_json, '$.shown') AS e"
              " ON e.value ->> '$[0]' = :metric ORDER BY b.k, e.key",
}
_BOARD_SQL = ("SELECT s.submission_id, s.competes, s.is_baseline, s.cells_json, s.{key} AS k,"
              " sum(CASE WHEN s.competes THEN 1 ELSE 0 END) OVER (ORDER BY s.{key}"
              " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS ranked"
              " FROM standing s WHERE s.board_id = :board AND s.{key} IS NOT NULL")


def order_rows(session: Session, info: dict, task: dict, split: str, *, modality: str | None,
               wanted: dict, mode: str, metric: str | None) -> dict | None:
    """The rows of a board, best first, with only what a re-sort and the baselines filter
    need (issue 38): None when the board has no row; else {"board_id", "judge", "rows": [[
    submission_id, rank (the board's; None for a row that does not compete), is_baseline,
    its shown value of ``metric`` (as `metric_values` gives it; None: none, or no
    ``metric``)]]}.

    One statement: a range of the board's rows, a running count and the metric's records
    picked out of each row's cells by the database; no join, no JSON decoded in Python."""
    _shown, _pick, _slices_, _skey, sb = _resolve(session, info, task, split, modality, wanted)
    if sb is None:
        return None
    board = _BOARD_SQL.format(key="rep_key" if mode == "team" else "all_key")
    sql = (_ORDER_SQL[_dialect(session)].format(board=board) if metric is not None else
           f"SELECT b.submission_id, b.competes, b.is_baseline, b.ranked, NULL, NULL"
           f" FROM ({board}) AS b ORDER BY b.k")
    rows: list[list] = []
    last = None
    for sid, competes, baseline, ranked, value, record_judge in session.execute(
            text(sql), {"board": sb.id, "metric": metric}):
        if sid != last:
            rows.append([sid, ranked if competes else None, bool(baseline), None])
            last = sid
        if record_judge_allowed(record_judge, sb.judge):  # a later record wins
            rows[-1][3] = _number(value)
    return {"board_id": sb.id, "judge": sb.judge, "rows": rows}


def _dialect(session: Session) -> str:
    return "postgresql" if session.get_bind().dialect.name == "postgresql" else "sqlite"


def _number(value: str | None) -> float | None:
    """A record's value from its JSON text (None for JSON null or no record)."""
    return None if value is None or value == "null" else float(value)


#: a page of a board's rows ordered by one ranking column's code in the key (see
#: `ranking_sorted`): the code's first character puts n/a last in either direction
_KEY_SORT_SQL = ("SELECT b.submission_id, b.competes, b.ranked FROM ({board}) AS b {where}"
                 " ORDER BY substr(b.code, 1, 1), b.code {dir}, b.k{limit}")


def ranking_sorted(session: Session, info: dict, task: dict, split: str, *,
                   modality: str | None, wanted: dict, mode: str, col: dict, direction: str,
                   baselines: bool, offset: int, limit: int | None) -> dict | None:
    """Rows ``offset`` to ``offset + limit`` (None: all) of a board re-sorted by ``col``, when
    it is one of the columns the board's keys were made with (its ``order_json``, same
    direction): its value's code is then in every row's key (`ledger.encode_key`: 17
    characters a column that sort better first, n/a last), so the database sorts the rows by
    that part of the key and hands back the page only. Ties keep the board's order; rows keep
    the board's rank. None when ``col`` is not such a column (or the board has no row); else
    {"board_id", "judge", "total", "rows": [[submission_id, rank (None: does not compete)]]};
    ``baselines`` False drops the baselines."""
    _shown, _pick, _slices_, _skey, sb = _resolve(session, info, task, split, modality, wanted)
    if sb is None:
        return None
    spec = [col["metric"], bool(col.get("higher_is_better", True)),
            bool(col.get("by_magnitude"))]
    at = next((j for j, c in enumerate(sb.order_json or []) if list(c) == spec), None)
    if at is None:
        return None
    key = "rep_key" if mode == "team" else "all_key"
    start = 1 + 17 * at + (1 if mode == "all" else 0)  # all_key: a disqualified flag first
    code = f"substr(s.{key}, {start}, 17)"
    if _dialect(session) == "postgresql":
        code += ' COLLATE "C"'  # bytewise, as the keys
    better = "asc" if col.get("by_magnitude") or not col.get("higher_is_better", True) else "desc"
    sql = _KEY_SORT_SQL.format(
        board=_BOARD_SQL.format(key=key).replace("s.cells_json,", f"{code} AS code,"),
        where="" if baselines else "WHERE NOT b.is_baseline",
        dir="ASC" if direction == better else "DESC",
        limit="" if limit is None else f" LIMIT {int(limit)} OFFSET {int(offset)}")
    rows = [[sid, ranked if competes else None]
            for sid, competes, ranked in session.execute(text(sql), {"board": sb.id})]
    if baselines:
        total = sb.reps if mode == "team" else sb.rows
    else:
        total = session.scalar(select(func.count()).select_from(Standing).where(
            Standing.board_id == sb.id,
            (Standing.rep_key if mode == "team" else Standing.all_key).is_not(None),
            Standing.is_baseline.is_(False)))
    return {"board_id": sb.id, "judge": sb.judge, "total": total, "rows": rows}


#: one metric's records in each row's cells (``shown``: [[metric, value, ci_low, ci_high, n,
#: judge], ...]) in their stored order, as (submission id, the value's JSON text, the judge):
#: the value is taken as its JSON text and parsed by Python's ``float`` as the whole cells'
#: decoding does, so it is the very float the row's cells give on either database
_RECORDS_SQL = {
    "postgresql": "SELECT s.submission_id, e.rec ->> 1, e.rec ->> 5 FROM standing s"
                  " CROSS JOIN LATERAL json_array_elements(s.cells_json -> 'shown')"
                  " WITH ORDINALITY AS e(rec, i)"
                  " WHERE s.board_id = :board AND e.rec ->> 0 = :metric {ids}"
                  " ORDER BY s.submission_id, e.i",
    "sqlite": "SELECT s.submission_id, e.value -> '$[1]', e.value ->> '$[5]' FROM standing s,"
              " json_each(s.cells_json, '$.shown') AS e"
              " WHERE s.board_id = :board AND e.value ->> '$[0]' = :metric {ids}"
              " ORDER BY s.submission_id, e.key",
}


def metric_values(session: Session, board_id: int, metric: str, judge: str | None,
                  ids: list[int] | None = None) -> list[list]:
    """[[submission id, its shown value of ``metric``]] of the rows of board ``board_id`` that
    have one (only those in ``ids`` when given; keep it short), in id order. The shown value is
    `ledger.shown_cells`': the last of the metric's records that the board's ``judge`` allows;
    None for a record without a value.

    The database picks the metric's records out of each row's cells and hands back their value
    and judge as text, so a re-sort of a whole board decodes no JSON in Python (issue 38)."""
    dialect = _dialect(session)
    params: dict = {"board": board_id, "metric": metric}
    stmt = text(_RECORDS_SQL[dialect].format(
        ids="AND s.submission_id IN :ids" if ids is not None else ""))
    if ids is not None:
        if not ids:
            return []
        stmt = stmt.bindparams(bindparam("ids", expanding=True))
        params["ids"] = list(ids)
    out: dict[int, float | None] = {}
    for sid, value, record_judge in session.execute(stmt, params):
        if record_judge_allowed(record_judge, judge):  # a later record wins, as in the cells
            out[sid] = _number(value)
    return [[sid, v] for sid, v in out.items()]
