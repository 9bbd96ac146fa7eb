"""A board built from the score rows, uncached: the reference the standings must equal.

Tests compare `compute_board_full` with the board read from the standings after every kind of
event; no request calls it.
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.records import parse_slice_key, slice_key_of
from leaderboard.server.boards import standings
from leaderboard.server.boards.standings import Cell, Column, Entry
from leaderboard.server.models import Score, Submission, Team
from leaderboard.server.services.judging import board_judge, record_judge_allowed


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
    columns = standings.columns_for(info["metrics"], task, present)
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
                Submission.selected, Submission.disqualified_reason, Submission.code_url)
         .outerjoin(Team, Submission.team_id == Team.id)
         .where(Submission.id.in_(list(cells))))
    out = []
    for sid, team_id, team_name, method, created, is_base, base_kind, sel, dq, code in \
            session.execute(q):
        if dq and not include_dq:
            continue
        parts = cells[sid]
        if shown not in parts:
            continue
        name = team_name or (f"Baseline ({base_kind})" if is_base else "")
        out.append(Entry(submission_id=sid, created_at=created, cells=parts[shown],
                         pick=parts.get(pick, {}), team_id=team_id, team_name=name,
                         method_name=method, is_baseline=is_base, baseline_kind=base_kind,
                         selected=sel, disqualified_reason=dq,
                         extra={"code_url": code or ""}))
    return out


def _row_dict(row: standings.RankedRow, columns: list[Column]) -> dict:
    e = row.entry
    return {"rank": row.rank, "submission_id": e.submission_id,
            "team": {"id": e.team_id, "name": e.team_name}, "method_name": e.method_name,
            "created_at": e.created_at.isoformat(), "is_baseline": e.is_baseline,
            "baseline_kind": e.baseline_kind, "selected": e.selected,
            "disqualified_reason": e.disqualified_reason,
            "code_url": e.extra.get("code_url", ""),
            "values": {c.metric: e.cells[c.metric].as_dict() if c.metric in e.cells
                       else Cell(None).as_dict() for c in columns}}


