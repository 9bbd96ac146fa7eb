"""The standings service: boards per benchmark x task x split, modality boards, their cache.

Views call these functions and render what they return (plain, JSON-ready dicts); ranking rules
live in `leaderboard.server.boards.standings`, the cache in `leaderboard.server.boards.cache`. Every write that changes a
board (scores stored, a submission hidden, disqualified, selected, a private part revealed, a pack
imported) calls `invalidate_boards` (`leaderboard.server.boards.cache`) after its commit.

Fairness (design.md, "Boards, splits and fairness"): on a split whose scores carry parts (test),
a team's representative is chosen on the public part, and the board shows the public part until
the benchmark's ``private_revealed``, then the private part. Hidden submissions, private
(``is_public`` false) ones and unscored ones are never on a board; disqualified ones appear, with
their reason and unranked, only in "all submissions" mode. A judge-made column shows only the
records of the benchmark's judge (official, else ``DEFAULT_JUDGE``) and names it; self-mapped
records stay and are marked per cell (a column never mixes judges).
"""
from __future__ import annotations

import logging

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core import records
from leaderboard.core.records import slice_key_of
from leaderboard.server.boards import standings
from leaderboard.server.boards.cache import CROSS, get_cache, invalidate_boards  # noqa: F401  (re-exported for views)
from leaderboard.server.boards.reads import (  # noqa: F401  (placement: re-exported for views)
    board_page_from_standings,
    iter_board_rows,
    placement,
)
from leaderboard.server.boards.reads import headline_cells as reads_headline_cells
from leaderboard.server.boards.reads import mean_rank_page as reads_mean_rank_page
from leaderboard.server.boards.reads import team_rows as reads_team_rows
from leaderboard.server.boards.standings import Cell, Column, Entry
from leaderboard.server.models import Benchmark, Score, Submission, Team
from leaderboard.server.services import NotFound, ServiceError

log = logging.getLogger(__name__)

#: display order of modalities (benchmarks.md, "Per-modality boards")
MODALITY_ORDER = ("image", "video", "audio", "text", "3d")
MODES = ("team", "all")
#: the most rows one board page may hold
MAX_PER_PAGE = 500

# -- benchmark metadata ------------------------------------------------------------------------
def _info_of(bench: Benchmark) -> dict:
    meta = bench.meta_json or {}
    return {"key": bench.key, "title": bench.title, "version": bench.version,
            "tasks": meta.get("tasks", []), "modalities": meta.get("modalities", []),
            "splits": meta.get("splits", []), "metrics": meta.get("metrics", {}),
            "private_revealed": bool(bench.private_revealed),
            "submissions_open": bool(bench.submissions_open),
            "official_judge": bench.official_judge, "id": bench.id,
            "scoring_only": bool(meta.get("scoring_only"))}


def benchmark_info(session: Session, key: str) -> dict:
    """Public metadata of one benchmark (cached); NotFound names the known keys."""
    def compute():
        bench = session.scalar(select(Benchmark).where(Benchmark.key == key))
        return None if bench is None else _info_of(bench)

    info = get_cache().get_or_compute(key, ("info",), compute)
    if info is None:
        known = list(session.scalars(select(Benchmark.key).order_by(Benchmark.key)))
        raise NotFound(f"no benchmark {key!r}; known: {known}")
    return info


def list_benchmark_infos(session: Session) -> list[dict]:
    """Every benchmark's public metadata, by key (cached)."""
    return get_cache().get_or_compute(CROSS, ("benchmarks",), lambda: [
        _info_of(b) for b in session.scalars(select(Benchmark).order_by(Benchmark.key))])


def task_of(info: dict, task: str) -> dict:
    for t in info["tasks"]:
        if t["key"] == task:
            return t
    raise NotFound(f"benchmark {info['key']!r} has no task {task!r}; "
                   f"tasks: {[t['key'] for t in info['tasks']]}")


def _columns(info: dict, task: dict, present: set[str]) -> list[Column]:
    """The task's metric columns that have values: headline, secondaries, then declared order."""
    return standings.columns_for(info["metrics"], task, present)


def parse_slice_key(text: str | None) -> dict:
    """Inverse of `slice_key_of`; raises ServiceError naming a malformed part."""
    try:
        return records.parse_slice_key(text)
    except ValueError as exc:
        raise ServiceError(str(exc)) from None


def _parts(session: Session, info: dict, split: str) -> tuple[str, str]:
    """(shown part, pick part) of a split: ("all", "all") unless its scores carry parts."""
    has_parts = session.scalar(
        select(Score.id).join(Submission, Score.submission_id == Submission.id)
        .where(Submission.benchmark_id == info["id"], Submission.split == split,
               Score.part == "public").limit(1)) is not None
    if not has_parts:
        return "all", "all"
    return ("private" if info["private_revealed"] else "public"), "public"


def _on_board():
    return (Submission.status == "scored", Submission.hidden.is_(False),
            Submission.is_public.is_(True))


# -- boards ------------------------------------------------------------------------------------
def board(session: Session, *, benchmark_key: str, task: str, split: str,
          modality: str | None = None, slice_key: str | None = None,
          mode: str = "team", page: int = 1, per_page: int | None = None) -> dict:
    """One page of a board (cached), read from the standings (`compute_board`).

    ``per_page`` None: every row (CSV export, cross-benchmark pages: one row per team in team
    mode); else at most ``MAX_PER_PAGE``. The result carries ``rows`` (the page), ``page``,
    ``per_page``, ``total``, ``pages``, ``ranked`` (ranked rows on the whole board) and
    ``baselines`` (the baseline rows, wherever they rank). Raises NotFound / ServiceError naming
    a bad argument."""
    info = benchmark_info(session, benchmark_key)
    t = task_of(info, task)
    if split not in info["splits"]:
        raise NotFound(f"benchmark {benchmark_key!r} has no split {split!r}; "
                       f"splits: {info['splits']}")
    if modality is not None and modality not in t["modalities"]:
        raise ServiceError(f"task {task!r} has no modality {modality!r}; "
                           f"modalities: {t['modalities']}")
    if mode not in MODES:
        raise ServiceError(f"mode must be one of {list(MODES)}, got {mode!r}")
    if page < 1 or (per_page is not None and not 1 <= per_page <= MAX_PER_PAGE):
        raise ServiceError(f"page must be >= 1 and per_page in 1..{MAX_PER_PAGE}, got "
                           f"page={page!r}, per_page={per_page!r}")
    wanted = parse_slice_key(slice_key)
    key = ("board", task, split, modality, slice_key_of(wanted), mode, page, per_page)
    return get_cache().get_or_compute(
        benchmark_key, key,
        lambda: _with_intervals(session, info, t, split, modality=modality, wanted=wanted,
                                mode=mode, page=compute_board(
                                    session, info, t, split, modality=modality, wanted=wanted,
                                    mode=mode, page=page, per_page=per_page)))


def compute_board(session: Session, info: dict, task: dict, split: str, *,
                  modality: str | None, wanted: dict, mode: str, page: int = 1,
                  per_page: int | None = None) -> dict:
    """One page of the board, uncached, from the standings: one indexed range of rows and a
    count of the competitors ahead of it (no scan of submissions or score rows)."""
    return board_page_from_standings(session, info, task, split, modality=modality,
                                     wanted=wanted, mode=mode, page=page, per_page=per_page)


def board_rows(session: Session, *, benchmark_key: str, task: str, split: str,
               modality: str | None = None, slice_key: str | None = None,
               mode: str = "team", chunk: int = 1000):
    """Every row of a board, uncached, in keyset chunks (exports such as the CSV); arguments
    are checked as by `board`."""
    info = benchmark_info(session, benchmark_key)
    t = task_of(info, task)
    if mode not in MODES:
        raise ServiceError(f"mode must be one of {list(MODES)}, got {mode!r}")
    return iter_board_rows(session, info, t, split, modality=modality,
                           wanted=parse_slice_key(slice_key), mode=mode, chunk=chunk)


def compute_board_full(session: Session, info: dict, task: dict, split: str, *,
                  modality: str | None, wanted: dict, mode: str) -> dict:
    """The whole board from the score rows, uncached: the reference the standings must equal
    (tests compare the two after every kind of event; no request calls it)."""
    shown, pick = _parts(session, info, split)
    slices = _available_slices(session, info, task, split, pick)
    desired = dict(wanted)
    if modality is not None:
        desired["modality"] = modality
    skey = slice_key_of(desired)
    if skey not in slices and modality is not None and list(task["modalities"]) == [modality]:
        # a one-modality task's overall numbers are that modality's numbers
        desired.pop("modality")
        skey = slice_key_of(desired)
    q = (select(Score.submission_id, Score.part, Score.metric, Score.value, Score.ci_low,
                Score.ci_high, Score.n, Score.judge)
         .join(Submission, Score.submission_id == Submission.id)
         .where(Submission.benchmark_id == info["id"], Submission.split == split, *_on_board(),
                Score.task == task["key"], Score.slice_key == skey,
                Score.part.in_({shown, pick})))
    # a column never mixes judges: judge-made records only from the benchmark's judge
    # (official, else the configured default); self-mapped ones stay, marked per cell
    from leaderboard.server.services.judging import board_judge, record_judge_allowed
    official = board_judge(info["official_judge"])
    cells: dict[int, dict[str, dict[str, Cell]]] = {}
    judges: dict[int, dict[str, str]] = {}
    for sid, part, metric, value, lo, hi, n, judge in session.execute(q):
        if not record_judge_allowed(judge, official):
            continue
        cells.setdefault(sid, {}).setdefault(part, {})[metric] = Cell(value, lo, hi, n or 0)
        if judge is not None and part == shown:
            judges.setdefault(sid, {})[metric] = judge
    present = {m for parts in cells.values() for m in parts.get(shown, {})}
    columns = _columns(info, task, present)
    judged = {m for per in judges.values() for m, j in per.items() if j != "self-mapped"}
    base = {"benchmark": info["key"], "benchmark_title": info["title"], "task": task,
            "split": split, "part": shown, "pick_part": pick, "modality": modality,
            "slice_key": skey, "slices": slices, "mode": mode,
            # the "other slices" filter: modality has its own filter, so it is left out here
            "slice_choices": sorted({slice_key_of({k: v for k, v in
                                                   parse_slice_key(s).items()
                                                   if k != "modality"})
                                     for s in slices} - {""}),
            "private_revealed": info["private_revealed"],
            "columns": [{**c.as_dict(), "judge": official if c.metric in judged else None}
                        for c in columns], "primary": task["headline"]}
    if not columns:
        return {**base, "rows": [], "rule": ""}
    # a slice without the headline (SynCred's form/style slices carry TPR and FPR, not
    # TPR(5)) ranks by its first column: the task's secondaries, then the declared order
    primary = task["headline"] if task["headline"] in present else columns[0].metric
    base["primary"] = primary
    entries = _entries(session, cells, shown=shown, pick=pick, include_dq=(mode == "all"))
    secondary = task.get("secondary", [])
    rows = standings.build_rows(entries, columns, primary=primary,
                                secondary=secondary, mode=mode)
    rule = standings.tie_break_rule(columns, primary=primary, secondary=secondary)
    return {**base, "rule": rule,
            "rows": [{**_row_dict(r, columns), "judges": judges.get(r.entry.submission_id, {})}
                     for r in rows]}


def _with_intervals(session: Session, info: dict, task: dict, split: str, *,
                    modality: str | None, wanted: dict, mode: str, page: dict) -> dict:
    """``page`` with each row's ``rank_interval`` (or None) and ``interval_rule``, the rule
    under the board (issue 14; `leaderboard.server.boards.intervals`).

    The intervals are the board's, whatever the page: computed once from its top rows and
    cached with the board (so cleared by `invalidate_boards` with everything else on it)."""
    from leaderboard.server.boards import intervals

    found: dict = {}
    if page.get("rows"):
        key = ("intervals", task["key"], split, page["slice_key"], mode)
        found = get_cache().get_or_compute(info["key"], key, lambda: _board_intervals(
            session, info, task, split, modality=modality, wanted=wanted, mode=mode,
            baselines=len(page.get("baselines", []))))
    for r in page.get("rows", []):
        r["rank_interval"] = found.get(str(r["submission_id"]))  # str: JSON-cached keys
    page["interval_rule"] = intervals.RULE if found else ""
    return page


def _board_intervals(session: Session, info: dict, task: dict, split: str, *,
                     modality: str | None, wanted: dict, mode: str, baselines: int) -> dict:
    from leaderboard.server.boards import intervals

    top = compute_board(session, info, task, split, modality=modality, wanted=wanted,
                        mode=mode, page=1, per_page=min(MAX_PER_PAGE, intervals.TOP + baselines))
    hib = next((c["higher_is_better"] for c in top["columns"]
                if c["metric"] == top.get("primary")), True)
    try:
        found = intervals.board_intervals(task=task, part=top["part"],
                                          slice_key=top["slice_key"], primary=top["primary"],
                                          higher_is_better=hib, rows=top["rows"],
                                          total=top.get("ranked"))
    except Exception:  # noqa: BLE001 - a missing interval must never cost the board itself
        log.exception("rank intervals failed task=%s slice=%s", task["key"], top["slice_key"])
        found = {}
    return {str(sid): iv for sid, iv in found.items()}


def _available_slices(session: Session, info: dict, task: dict, split: str,
                      part: str) -> list[str]:
    q = (select(Score.slice_key).distinct()
         .join(Submission, Score.submission_id == Submission.id)
         .where(Submission.benchmark_id == info["id"], Submission.split == split, *_on_board(),
                Score.task == task["key"], Score.part == part))
    return sorted(session.scalars(q))  # every slice axis of every metric (issue 12)


def _entries(session: Session, cells: dict, *, shown: str, pick: str,
             include_dq: bool) -> list[Entry]:
    if not cells:
        return []
    q = (select(Submission.id, Submission.team_id, Team.name, Submission.method_name,
                Submission.created_at, Submission.is_baseline, Submission.baseline_kind,
                Submission.selected, Submission.disqualified_reason)
         .outerjoin(Team, Submission.team_id == Team.id)
         .where(Submission.id.in_(list(cells))))
    out = []
    for sid, team_id, team_name, method, created, is_base, base_kind, sel, dq in session.execute(q):
        if dq and not include_dq:
            continue
        parts = cells[sid]
        if shown not in parts:
            continue
        name = team_name or (f"Baseline ({base_kind})" if is_base else "")
        out.append(Entry(submission_id=sid, created_at=created, cells=parts[shown],
                         pick=parts.get(pick, {}), team_id=team_id, team_name=name,
                         method_name=method, is_baseline=is_base, baseline_kind=base_kind,
                         selected=sel, disqualified_reason=dq))
    return out


def _row_dict(row: standings.RankedRow, columns: list[Column]) -> dict:
    e = row.entry
    return {"rank": row.rank, "submission_id": e.submission_id,
            "team": {"id": e.team_id, "name": e.team_name}, "method_name": e.method_name,
            "created_at": e.created_at.isoformat(), "is_baseline": e.is_baseline,
            "baseline_kind": e.baseline_kind, "selected": e.selected,
            "disqualified_reason": e.disqualified_reason,
            "values": {c.metric: e.cells[c.metric].as_dict() if c.metric in e.cells
                       else Cell(None).as_dict() for c in columns}}


# -- modality boards ---------------------------------------------------------------------------
def modalities(session: Session) -> list[str]:
    """Every modality of any benchmark, in the canonical order, unknown ones after."""
    seen = {m for info in list_benchmark_infos(session) for t in info["tasks"]
            for m in t["modalities"]}
    return [m for m in MODALITY_ORDER if m in seen] + sorted(seen - set(MODALITY_ORDER))


def board_split(info: dict) -> str | None:
    """The split ranked on cross-benchmark pages: the held-out test split when there is one."""
    if "test" in info["splits"]:
        return "test"
    return info["splits"][-1] if info["splits"] else None


def modality_board(session: Session, modality: str, *, page: int = 1,
                   per_page: int | None = None) -> dict:
    """Per-modality board (cached): each team's headline per task in ``modality`` + mean rank.

    ``per_page``: one page of the aggregate's rows (``page``, ``per_page``, ``total``,
    ``pages`` say where); None: every row. The aggregate (ranks only) is computed once per
    change of any board, from the standings keys (no score row, no cell decoded); a page then
    reads the cells of its own rows."""
    if modality not in modalities(session):
        raise NotFound(f"no modality {modality!r}; modalities: {modalities(session)}")
    if page < 1 or (per_page is not None and not 1 <= per_page <= MAX_PER_PAGE):
        raise ServiceError(f"page must be >= 1 and per_page in 1..{MAX_PER_PAGE}, got "
                           f"page={page!r}, per_page={per_page!r}")
    return get_cache().get_or_compute(CROSS, ("modality_page", modality, page, per_page),
                                      lambda: _modality_page(session, modality, page, per_page))


def _modality_page(session: Session, modality: str, page: int, per_page: int | None) -> dict:
    cols = get_cache().get_or_compute(CROSS, ("modality_columns", modality),
                                      lambda: _modality_columns(session, modality))
    boards_of = {c["key"]: c for c in cols["columns"]}
    start = 0 if per_page is None else (page - 1) * per_page
    if all(c["decodable"] for c in cols["columns"]):
        # ranked in the database: the page's rows only come back (issue 16)
        col_of = {c["board_id"]: c["key"] for c in cols["columns"] if c["board_id"]}
        total, found = reads_mean_rank_page(session, list(col_of), offset=start,
                                            limit=per_page)
        chosen = [{"rank": start + i if r["mean_rank"] is not None else None,
                   "team_id": r["team_id"], "mean_rank": r["mean_rank"],
                   "entries": r["entries"],
                   "ranks": {col_of[b]: v for b, v in r["ranks"].items()},
                   "subs": {col_of[b]: v for b, v in r["subs"].items()}}
                  for i, r in enumerate(found, start=1)]
    else:
        agg = get_cache().get_or_compute(CROSS, ("modality", modality),
                                         lambda: compute_modality_board(session, modality))
        total = len(agg["rows"])
        chosen = agg["rows"] if per_page is None else agg["rows"][start:start + per_page]
    wanted = [(boards_of[col]["board_id"], sid, boards_of[col]["metric"],
               boards_of[col]["judge"])
              for r in chosen for col, sid in r["subs"].items()]
    cells = reads_headline_cells(session, wanted)
    team_ids = {r["team_id"] for r in chosen if r["team_id"] is not None}
    names = dict(session.execute(select(Team.id, Team.name)
                                 .where(Team.id.in_(team_ids))).all()) if team_ids else {}
    order = list(boards_of)
    rows = [{"rank": r["rank"], "team": {"id": r["team_id"], "name": names.get(r["team_id"], "")},
             "mean_rank": r["mean_rank"], "entries": r["entries"],
             "cells": {col: {**cells.get((boards_of[col]["board_id"], sid), Cell(None).as_dict()),
                             "submission_id": sid, "rank": r["ranks"].get(col)}
                       for col, sid in sorted(r["subs"].items(),
                                              key=lambda kv: order.index(kv[0]))}}
            for r in chosen]
    columns = [{k: v for k, v in c.items() if k not in ("board_id", "judge", "decodable")}
               for c in cols["columns"]]
    return {"modality": modality, "columns": columns, "rows": rows,
            "baselines": cols["baselines"], "rule": MODALITY_RULE, "page": page,
            "per_page": per_page, "total": total,
            "pages": 1 if per_page is None else max(1, -(-total // per_page))}


MODALITY_RULE = ("Each column is a task's headline metric on its benchmark's held-out "
                 "split (the part shown on its board), taking each team's board row. "
                 "Aggregate = mean rank over the columns a team has entries for (ties share "
                 "a rank); equal means: more entries first, then a fixed order by team id. "
                 "Baselines are shown but not ranked.")


def _modality_columns(session: Session, modality: str) -> dict:
    """The modality board's columns (each with its standings slice, its judge and whether
    its ranking column is the headline, so ranks can come from the keys) and baselines."""
    columns, baselines = [], {}
    for info in list_benchmark_infos(session):
        split = board_split(info)
        for t in info["tasks"]:
            if modality not in t["modalities"] or split is None:
                continue
            spec = info["metrics"].get(t["headline"], {})
            sb, base_rows = reads_team_rows(session, info, t, split, modality, baselines=True)
            order = (sb.order_json or []) if sb is not None else []
            col = f"{info['key']}/{t['key']}"
            columns.append({"key": col, "benchmark": info["key"], "task": t["key"],
                            "split": split, "metric": t["headline"],
                            "title": f"{info['title']}: {t.get('title') or t['key']}",
                            "metric_title": spec.get("title") or t["headline"],
                            "higher_is_better": bool(spec.get("higher_is_better", True)),
                            "arrow": "\u2191" if spec.get("higher_is_better", True) else "\u2193",
                            "fmt": spec.get("fmt", "num"),
                            "board_id": sb.id if sb is not None else None,
                            "judge": sb.judge if sb is not None else None,
                            "decodable": sb is None or (
                                bool(order) and order[0][0] == t["headline"]
                                and not order[0][2])})
            if sb is None:
                continue
            cells = reads_headline_cells(session, [(sb.id, r.submission_id, t["headline"],
                                                    sb.judge) for r in base_rows])
            for r in base_rows:
                baselines.setdefault(r.baseline_kind or "baseline", {})[col] = {
                    **cells[(sb.id, r.submission_id)], "submission_id": r.submission_id}
    return {"columns": columns,
            "baselines": [{"kind": k, "cells": v} for k, v in sorted(baselines.items())]}


def compute_modality_board(session: Session, modality: str) -> dict:
    """The modality aggregate in Python (the path for a column whose ranking column is not its
    headline): every team row's headline value, mean ranks over them."""
    cols = _modality_columns(session, modality)
    table, subs, team_of = {}, {}, {}
    for c in cols["columns"]:
        if c["board_id"] is None:
            continue
        info = benchmark_info(session, c["benchmark"])
        sb, rows = reads_team_rows(session, info, task_of(info, c["task"]), c["split"],
                                   modality)
        values = {k[1]: v["value"] for k, v in reads_headline_cells(
            session, [(sb.id, r.submission_id, c["metric"], sb.judge) for r in rows]).items()}
        for r in rows:
            rk = (f"team:{r.team_id}" if r.team_id is not None
                  else f"submission:{r.submission_id}")
            team_of[rk] = r.team_id
            table.setdefault(rk, {})[c["key"]] = values.get(r.submission_id)
            subs.setdefault(rk, {})[c["key"]] = r.submission_id
    directions = {c["key"]: c["higher_is_better"] for c in cols["columns"]}
    aggregate = standings.mean_rank_aggregate(table, directions)
    return {"modality": modality, "rows": [
        {"rank": i if a.mean_rank is not None else None, "team_id": team_of[a.key],
         "mean_rank": a.mean_rank, "entries": a.entries, "ranks": a.ranks,
         "subs": subs[a.key]} for i, a in enumerate(aggregate, start=1)]}
