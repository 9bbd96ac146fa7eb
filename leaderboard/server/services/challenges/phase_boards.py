"""A challenge phase's board: the submissions made during the phase (on its split), ranked by
the benchmark's own board rules (`leaderboard.server.boards.standings`: the same columns,
directions, tie-breaks and one row per team), with each value's CI and n and the rank
intervals of `leaderboard.server.boards.intervals`, like every board.

Which part a phase board shows: the phase's part, except that a phase ranking the *private*
part shows the public part until the benchmark's private part is revealed (the defence against
tuning to the board). A team's row: its best selected submission in the phase (judged on the
part shown), else its best on the public part (the whole split when it has no parts).

While the phase runs the board is computed on read and cached with the benchmark's boards
(cleared by `invalidate_boards` like them). When the phase closes the reconciler freezes it into
``ChallengePhase.board_json`` (`leaderboard.server.services.challenges.finishing`); when the
challenge finishes, the final results (on the phase's own part) supersede it.
"""
from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.boards import intervals, standings
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.models import Benchmark, Score, Submission, Team, utcnow
from leaderboard.server.models.challenges import Challenge, ChallengePhase
from leaderboard.server.services.challenges.timeline import phase_state
from leaderboard.server.services.judging import board_judge, record_judge_allowed

log = logging.getLogger(__name__)


def shown_part(phase: ChallengePhase, bench: Benchmark) -> str:
    """The part a phase's board shows now (module docstring)."""
    if phase.part == "private" and not bench.private_revealed:
        return "public"
    return phase.part


def _phase_subs(session: Session, ch: Challenge, phase: ChallengePhase) -> dict[int, Submission]:
    """The scored, visible submissions made to ``phase`` (a team's other submissions during
    it went to the standing boards, issue 33)."""
    return {s.id: s for s in session.scalars(select(Submission).where(
        Submission.phase_id == phase.id, Submission.benchmark_id == ch.benchmark_id,
        Submission.status == "scored", Submission.hidden.is_(False),
        Submission.is_public.is_(True), Submission.is_baseline.is_(False),
        Submission.team_id.is_not(None)))}


def phase_results(session: Session, ch: Challenge, phase: ChallengePhase, *,
                  part: str | None = None) -> list[dict]:
    """The ranking of one phase, one board per task, on ``part`` (default: `shown_part`).

    Each board: ``task``, ``title``, ``part``, ``columns``, ``primary``, ``rule``,
    ``interval_rule`` and ``rows`` (``rank``, ``team``, ``team_id``, ``submission_id``,
    ``method_name``, ``selected``, ``created_at``, ``values`` per metric with value, CI and n,
    ``rank_interval``)."""
    bench = ch.benchmark
    meta = bench.meta_json or {}
    part = part or shown_part(phase, bench)
    pick_part = "all" if phase.part == "all" else "public"
    subs = _phase_subs(session, ch, phase)
    teams = dict(session.execute(select(Team.id, Team.name).where(
        Team.id.in_({s.team_id for s in subs.values()}))).all()) if subs else {}
    official = board_judge(bench.official_judge)
    out = []
    for task in meta.get("tasks", []):
        cells: dict[int, dict[str, dict[str, standings.Cell]]] = {}
        if subs:
            for sid, p, metric, value, lo, hi, n, judge in session.execute(
                    select(Score.submission_id, Score.part, Score.metric, Score.value,
                           Score.ci_low, Score.ci_high, Score.n, Score.judge)
                    .where(Score.submission_id.in_(list(subs)), Score.task == task["key"],
                           Score.slice_key == "", Score.part.in_({part, pick_part}))):
                if record_judge_allowed(judge, official):  # a column never mixes judges
                    cells.setdefault(sid, {}).setdefault(p, {})[metric] = standings.Cell(
                        value, lo, hi, n or 0)
        present = {m for parts in cells.values() for m in parts.get(part, {})}
        primary, _ = standings.board_order(meta.get("metrics", {}), task, present)
        columns = standings.columns_for(meta.get("metrics", {}), task, present)
        board = {"task": task["key"], "title": task.get("title") or task["key"], "part": part,
                 "columns": [c.as_dict() for c in columns], "primary": primary, "rule": "",
                 "interval_rule": "", "rows": []}
        out.append(board)
        if primary is None:
            continue
        entries = []
        for sid, parts in cells.items():
            if part not in parts:
                continue
            s = subs[sid]
            entries.append(standings.Entry(
                submission_id=sid, created_at=s.created_at, cells=parts[part],
                pick=parts.get(pick_part, {}), team_id=s.team_id,
                team_name=teams.get(s.team_id, ""), method_name=s.method_name,
                selected=s.selected, disqualified_reason=s.disqualified_reason))
        for e in entries:
            if e.selected:  # among its selections a team is judged on the part shown
                e.pick = e.cells
        secondary = task.get("secondary", [])
        ranked = standings.build_rows(entries, columns, primary=primary, secondary=secondary,
                                      mode="team")
        board["rule"] = standings.tie_break_rule(columns, primary=primary, secondary=secondary)
        board["rows"] = [_row(r, columns) for r in ranked]
        _add_intervals(board, task, columns)
    return out


def _row(r: standings.RankedRow, columns: list[standings.Column]) -> dict:
    e = r.entry
    return {"rank": r.rank, "team": e.team_name, "team_id": e.team_id,
            "submission_id": e.submission_id, "method_name": e.method_name,
            "selected": e.selected, "created_at": e.created_at.isoformat(),
            "values": {c.metric: (e.cells[c.metric] if c.metric in e.cells
                                  else standings.Cell(None)).as_dict() for c in columns},
            "rank_interval": None}


def _add_intervals(board: dict, task: dict, columns: list[standings.Column]) -> None:
    hib = next((c.higher_is_better for c in columns if c.metric == board["primary"]), True)
    try:
        found = intervals.board_intervals(task=task, part=board["part"], slice_key="",
                                          primary=board["primary"], higher_is_better=hib,
                                          rows=board["rows"])
    except Exception:  # noqa: BLE001 - a missing interval must never cost the board itself
        log.exception("phase board rank intervals failed task=%s", task["key"])
        found = {}
    for row in board["rows"]:
        row["rank_interval"] = found.get(row["submission_id"])
    board["interval_rule"] = intervals.RULE if found else ""


def phase_board(session: Session, ch: Challenge, phase: ChallengePhase, *,
                now: datetime | None = None) -> dict:
    """What a phase's board page shows: ``source`` "final" (the challenge's frozen results),
    "frozen" (frozen when the phase closed) or "live"; ``part``, ``frozen_at`` and ``tasks``
    (the boards of `phase_results`). A live board is cached with the benchmark's boards."""
    now = now or utcnow()
    base = {"challenge": ch.key, "position": phase.position, "name": phase.name,
            "split": phase.split, "phase_part": phase.part,
            "state": phase_state(phase, now)}
    final = next((ph for ph in (ch.results_json or {}).get("phases", [])
                  if ph.get("position", None) in (None, phase.position)
                  and ph["name"] == phase.name), None)
    if final is not None:
        return {**base, "source": "final", "part": phase.part,
                "frozen_at": ch.results_json["frozen_at"], "tasks": final["tasks"]}
    if phase.board_json is not None:
        return {**base, "source": "frozen", **phase.board_json}
    part = shown_part(phase, ch.benchmark)
    # the key names the phase's rules: an edit of its window or part is a new entry
    key = ("challenge_phase", ch.key, phase.id, phase.split, part,
           phase.opens_at.isoformat(), phase.closes_at.isoformat())
    tasks = get_cache().get_or_compute(ch.benchmark.key, key,
                                       lambda: phase_results(session, ch, phase, part=part))
    return {**base, "source": "live", "part": part, "frozen_at": None, "tasks": tasks}


def results_rows(results: dict) -> tuple[list[str], list[list]]:
    """(header, rows) of the frozen results as one flat table (the CSV export)."""
    header = ["phase", "split", "part", "task", "rank", "team", "method", "submission_id",
              "metric", "value", "ci_low", "ci_high", "n"]
    rows = []
    for ph in results.get("phases", []):
        for t in ph["tasks"]:
            for r in t["rows"]:
                for c in t["columns"]:
                    v = r["values"][c["metric"]]
                    rows.append([ph["name"], ph["split"], ph["part"], t["task"], r["rank"],
                                 r["team"], r["method_name"], r["submission_id"], c["metric"],
                                 v["value"], v["ci_low"], v["ci_high"], v["n"]])
    return header, rows
