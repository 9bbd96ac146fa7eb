"""A board's history (issue 38, item 2): its best score over time, each top team's best over
time, and every submission's rank when it was made and now.

Read from the board itself, in "all submissions" mode (`leaderboard.server.boards.board`), so it
shows exactly what the board shows: hidden, private and unscored submissions are never rows
there; disqualified rows and baselines are rows but do not compete, so they never make a step
or take a rank here either. On a test split the shown part is the board's (public until the
benchmark's private part is revealed).

Order and ties: "better" is the board's own order (the primary metric in its declared
direction, then the task's secondary metrics, then the earlier submission, then the lower id;
`leaderboard.server.boards.standings`). A submission makes a new step only when it is strictly
ahead of the best before it in that order, so an equal headline value made later never makes a
step. Time is the submission's ``created_at`` (the time the board shows); submissions are
replayed in (time, id) order.

Ranks: "rank when made" = 1 + the competing submissions made before it that are ahead of it on
today's board; "rank now" = its rank on the board in "all submissions" mode; both are out of the
competing submissions at that moment (``of_then`` / ``of_now``). Team mode (one row per team) is
not replayed.
"""
from __future__ import annotations

import bisect
from datetime import datetime

from sqlalchemy.orm import Session

from leaderboard.server.boards.board import board, board_rows
from leaderboard.server.boards.cache import get_cache

#: teams drawn as their own series, the best ones on today's board first
TOP_TEAMS = 5


def board_history(session: Session, *, benchmark_key: str, task: str, split: str,
                  modality: str | None = None, slice_key: str | None = None) -> dict:
    """The history of one board (cached with the board; cleared by `invalidate_boards`).

    Arguments as `leaderboard.server.boards.board.board` (same errors for bad ones). Returns
    {"benchmark", "task", "split", "part", "slice_key", "primary", "column", "rule", "best":
    [step], "teams": [{"team": {"id", "name"}, "steps": [step]}], "ranks": {str(id):
    {"then", "of_then", "now", "of_now"}}}; a step is {"at" (ISO time), "submission_id",
    "team", "method_name", "value"}."""
    head = board(session, benchmark_key=benchmark_key, task=task, split=split,
                 modality=modality, slice_key=slice_key, mode="all", page=1, per_page=1)
    key = ("history", task, split, modality, head["slice_key"])
    return get_cache().get_or_compute(benchmark_key, key, lambda: _compute(
        session, head, benchmark_key=benchmark_key, task=task, split=split, modality=modality,
        slice_key=slice_key))


def _compute(session: Session, head: dict, **args) -> dict:
    primary = head["primary"]
    column = next((c for c in head["columns"] if c["metric"] == primary), None)
    # today's board, best first: a competing row's "all" rank is its place in the board's order
    rows = [r for r in board_rows(session, **args, mode="all") if r["rank"] is not None]
    of_now = len(rows)
    replay = sorted(rows, key=lambda r: (datetime.fromisoformat(r["created_at"]),
                                         r["submission_id"]))
    seen: list[int] = []  # board places of the submissions replayed so far, sorted
    best: list[dict] = []
    ranks: dict[str, dict] = {}
    for r in replay:
        place = r["rank"]
        ahead = bisect.bisect_left(seen, place)
        bisect.insort(seen, place)
        ranks[str(r["submission_id"])] = {"then": ahead + 1, "of_then": len(seen),
                                          "now": place, "of_now": of_now}
        if ahead == 0:  # nothing made before it is ahead: a new best
            best.append(_step(r, primary))
    teams: list[dict] = []
    by_team: dict[int, dict] = {}
    for r in rows:  # best first: the first TOP_TEAMS distinct teams
        tid = r["team"]["id"]
        if tid is None or r["is_baseline"]:
            continue
        if tid not in by_team:
            if len(by_team) == TOP_TEAMS:
                continue
            by_team[tid] = {"team": dict(r["team"]), "steps": [], "_best": None}
            teams.append(by_team[tid])
    for r in replay:
        t = by_team.get(r["team"]["id"])
        if t is not None and (t["_best"] is None or r["rank"] < t["_best"]):
            t["_best"] = r["rank"]
            t["steps"].append(_step(r, primary))
    for t in teams:
        del t["_best"]
    return {"benchmark": head["benchmark"], "task": args["task"], "split": args["split"],
            "part": head["part"], "modality": args["modality"], "slice_key": head["slice_key"],
            "primary": primary, "column": column, "rule": head.get("rule", ""),
            "best": best, "teams": teams, "ranks": ranks}


def _step(r: dict, primary: str) -> dict:
    return {"at": r["created_at"], "submission_id": r["submission_id"], "team": r["team"],
            "method_name": r["method_name"],
            "value": (r["values"].get(primary) or {}).get("value")}


def submission_ranks(session: Session, *, benchmark_key: str, task: str, split: str,
                     submission_id: int) -> dict | None:
    """{"then", "of_then", "now", "of_now"} of one submission on a task's overall board (see
    the module docstring); None when it does not compete there."""
    # cached per submission too: a submission page then reads one small entry, not the
    # whole board's ranks (one per ranked submission)
    return get_cache().get_or_compute(
        benchmark_key, ("history_rank", task, split, submission_id),
        lambda: board_history(session, benchmark_key=benchmark_key, task=task,
                              split=split)["ranks"].get(str(submission_id)))


def history_csv_rows(h: dict):
    """The CSV rows of a history: a header, then every step of every series."""
    yield ["series", "team_id", "team", "at", "submission_id", "method_name", h["primary"]]
    for s in h["best"]:
        yield ["best", s["team"]["id"], s["team"]["name"], s["at"], s["submission_id"],
               s["method_name"], s["value"]]
    for t in h["teams"]:
        for s in t["steps"]:
            yield ["team", t["team"]["id"], t["team"]["name"], s["at"], s["submission_id"],
                   s["method_name"], s["value"]]
