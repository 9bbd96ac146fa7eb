"""A method's results across the boards (issue 38, item 1): what its page and its JSON show.

A method (`leaderboard.server.models.methods`) is a team's named detector; its results are its
rows on the overall board of every benchmark, task and split where it has one, read from the
boards themselves so that every number is the board's:

* the row shown is the method's best submission on that board in the board's own order
  ("all submissions" mode order); when the team is represented on the default ("team" mode)
  board by one of the method's submissions, that row is the one shown, in "team" mode;
* its rank, rank interval, value, CI and n are the board's own: the row is read through
  `leaderboard.server.boards.board.board` (cached with the boards) as the one-row keyset page
  that starts after the row before it, which is how the board serves its next pages; ``page``
  / ``mode`` say which page of the board (at ``per_page`` rows) holds it, so a reader can
  follow the link and find the same numbers;
* only what the boards show is read: hidden, private and unscored submissions are never rows
  on a board (`leaderboard.server.access.visibility` is the rule), so a method page shows none
  of them whoever reads it; on a test split the part is the board's (public until revealed).

The method's own history on a board: each of its submissions there, in the order they were
made, with the value of the board's primary column; a step where it got ahead of all its
earlier ones in the board's order (as `leaderboard.server.boards.history` does for a board).

Results are cached per benchmark with its boards (cleared by `invalidate_boards`).
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.boards.board import board
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.boards.meta import benchmark_info
from leaderboard.server.boards.reads import place_of, rows_of
from leaderboard.server.models import Benchmark, Submission


def board_submissions(session: Session, *, team_id: int, name: str) -> dict[str, list[dict]]:
    """{benchmark key: [{"id", "split", "created_at"}]} of the method's submissions that can
    be on a board (scored, public, not hidden, not a baseline), oldest first."""
    rows = session.execute(
        select(Submission.id, Submission.split, Submission.created_at, Benchmark.key)
        .join(Benchmark, Submission.benchmark_id == Benchmark.id)
        .where(Submission.team_id == team_id, Submission.method_name == name,
               Submission.status == "scored", Submission.is_public.is_(True),
               Submission.hidden.is_(False), Submission.is_baseline.is_(False))
        .order_by(Benchmark.key, Submission.created_at, Submission.id)).all()
    out: dict[str, list[dict]] = {}
    for sid, split, created, key in rows:
        out.setdefault(key, []).append({"id": sid, "split": split,
                                        "created_at": created.isoformat()})
    return out


def method_results(session: Session, *, team_id: int, name: str, per_page: int) -> list[dict]:
    """The method's results (see the module docstring), by benchmark, task (declared order)
    and split (declared order). ``per_page``: the board pages' size, so ``page`` names the
    board page that holds the row.

    Each result: {"benchmark", "benchmark_title", "task" (the task dict), "split", "part",
    "mode", "page", "submission_id", "rank", "ranked", "rank_interval", "primary", "columns",
    "values" ({metric: {"value", "ci_low", "ci_high", "n"}}), "disqualified_reason",
    "history" ([{"at", "submission_id", "value", "step"}])}."""
    out: list[dict] = []
    for key, subs in board_submissions(session, team_id=team_id, name=name).items():
        out += get_cache().get_or_compute(
            key, ("method_results", team_id, name, per_page),
            lambda: _benchmark_results(session, key, subs, per_page))
    return out


def _benchmark_results(session: Session, key: str, subs: list[dict],
                       per_page: int) -> list[dict]:
    info = benchmark_info(session, key)
    made = {s["id"]: s["created_at"] for s in subs}
    out = []
    for t in info["tasks"]:
        for split in info["splits"]:
            ids = [s["id"] for s in subs if s["split"] == split]
            found = rows_of(session, info, t, split, ids) if ids else None
            if found is None:
                continue
            rows = found["rows"]
            rep = next((r for r in rows if r["rep_key"] is not None), None)
            chosen, mode = (rep, "team") if rep is not None else (rows[0], "all")
            key_ = chosen["rep_key"] if mode == "team" else chosen["all_key"]
            where = place_of(session, found["board_id"], mode, key_)
            page = (where["place"] - 1) // per_page + 1
            shown = _board_row(session, key, t["key"], split, mode, where,
                               chosen["submission_id"])
            if shown is None:  # the board changed between the reads: its next read has it
                continue
            b = shown.pop("_board")
            out.append({"benchmark": key, "benchmark_title": info["title"], "task": t,
                        "split": split, "part": b["part"], "mode": mode, "page": page,
                        "submission_id": shown["submission_id"], "rank": shown["rank"],
                        "ranked": b["ranked"], "rank_interval": shown.get("rank_interval"),
                        "primary": b["primary"], "columns": b["columns"],
                        "values": shown["values"],
                        "disqualified_reason": shown["disqualified_reason"],
                        "created_at": shown["created_at"],
                        "history": _history(rows, made, b["primary"])})
    return out


def _board_row(session: Session, key: str, task: str, split: str, mode: str, where: dict,
               submission_id: int) -> dict | None:
    """The submission's row as the board serves it: the board's keyset page of one row after
    the row before it (`board.board` with the cursor its next page would carry), so a row deep
    in a board costs two index reads, not an offset over every row above it; the first rows
    (nothing ranked before them) are read as page ``place`` of one row."""
    if where["key_before"] is not None and where["ranked_before"] >= 1:
        version = get_cache().version(key)
        cursor = f"{where['place']}.{where['ranked_before']}.{version}.{where['key_before']}"
        b = board(session, benchmark_key=key, task=task, split=split, mode=mode,
                  per_page=1, cursor=cursor)
    else:
        b = board(session, benchmark_key=key, task=task, split=split, mode=mode,
                  page=where["place"], per_page=1)
    row = b["rows"][0] if b["rows"] else None
    if row is None or row["submission_id"] != submission_id:
        return None  # the board changed between the two reads
    return {**row, "_board": {k: b[k] for k in ("part", "ranked", "primary", "columns")}}


def _history(rows: list[dict], made: dict, primary: str) -> list[dict]:
    """The method's submissions on one board in the order they were made, each with the
    primary value and whether it was a new best for the method (board order: ``all_key``)."""
    best = None
    out = []
    for r in sorted(rows, key=lambda r: (made[r["submission_id"]], r["submission_id"])):
        cell = r["cells"].get(primary)
        step = best is None or r["all_key"] < best
        if step:
            best = r["all_key"]
        out.append({"at": made[r["submission_id"]], "submission_id": r["submission_id"],
                    "value": cell[0] if cell else None, "step": step})
    return out


def best_results(results: list[dict], limit: int = 3) -> list[dict]:
    """A method's best results for a list (the team page): ranked ones by rank, then the
    rest; ties by benchmark, task and split order as given."""
    ranked = sorted((r for r in results if r["rank"] is not None),
                    key=lambda r: (r["rank"], r["split"] != "test"))
    return (ranked + [r for r in results if r["rank"] is None])[:limit]
