"""A board rebuilt from the transparency log's receipts, and its comparison with a live board.

Every change of a submission's board row is a receipt (`leaderboard.core.transparency.receipts`),
so the latest receipt of each submission says everything the board shows of it: whether it is on
the board (scored, public, not hidden), disqualified or a baseline, its time, and its values on
the part the board shows. `rebuild` applies the boards' ranking rules (docs/benchmarks.md; the
server's `leaderboard.server.boards.standings`, restated here so the toolkit needs no server):
"all submissions" mode, ordered by the primary column then the task's secondaries (each in its
declared direction, a by-magnitude column by |value|, n/a last), then the earliest submission,
then the lower id, disqualified rows after every other; ranks count competitors only (not
baselines, not disqualified rows). The columns and their directions are the benchmark's public
definition, read from the live board; every row and value comes from the log.

Which part: "all" for a split scored without parts; with parts, "public" until the benchmark's
latest receipt says it was revealed, then "private". A column made by a judge takes the record
of the board's judge (or a "self-mapped" one), as the server does.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from leaderboard.core.transparency.receipts import record_value


@dataclass
class Row:
    submission_id: int
    rank: int | None
    values: dict[str, float | None]
    disqualified: bool
    baseline: bool
    submitted_at: str


def latest(bodies: Iterable[dict]) -> dict[tuple[str, int], dict]:
    """The latest receipt body per (benchmark key, submission id), in log order."""
    out: dict[tuple[str, int], dict] = {}
    for b in bodies:
        out[(b["benchmark"]["key"], b["submission"]["id"])] = b
    return out


def revealed(bodies: Iterable[dict], benchmark: str) -> bool:
    """Whether the benchmark's most recent receipt says its private part is revealed."""
    last = None
    for b in bodies:
        if b["benchmark"]["key"] == benchmark and (last is None
                                                   or b["log_index"] > last["log_index"]):
            last = b
    return bool(last and last["benchmark"].get("revealed"))


def shown_part(latest_bodies: Iterable[dict], benchmark: str, split: str,
               is_revealed: bool) -> str:
    has_parts = any(
        b["benchmark"]["key"] == benchmark and b["submission"]["split"] == split
        and b["submission"]["status"] == "scored"
        and ({r["part"] for r in b["records"]} | set(b["sealed_parts"])) & {"public", "private"}
        for b in latest_bodies)
    if not has_parts:
        return "all"
    return "private" if is_revealed else "public"


def _on_board(b: dict) -> bool:
    s = b["submission"]
    return s["status"] == "scored" and s["public"] and not s["hidden"]


def _value(body: dict, *, part: str, task: str, metric: str, judge: str | None):
    found = [r for r in body["records"] if r["part"] == part and r["task"] == task
             and r["metric"] == metric and not r["slice"]]
    if judge is not None:
        found = [r for r in found if r["judge"] in (None, judge, "self-mapped")] or []
    if not found:
        return None
    return record_value(found[-1])


def rebuild(latest_bodies: Iterable[dict], *, benchmark: str, split: str, task: str, part: str,
            columns: list[dict], primary: str, secondary: list[str]) -> list[Row]:
    """The board's rows in "all submissions" mode, best first (see the module docstring).
    ``columns``: the live board's ``[{"metric", "higher_is_better", "by_magnitude", "judge"}]``."""
    by_metric = {c["metric"]: c for c in columns}
    order = [primary] + [m for m in secondary if m in by_metric and m != primary]
    rows = []
    for b in latest_bodies:
        if b["benchmark"]["key"] != benchmark or b["submission"]["split"] != split \
                or not _on_board(b):
            continue
        values = {m: _value(b, part=part, task=task, metric=m, judge=c.get("judge"))
                  for m, c in by_metric.items()}
        if all(v is None for v in values.values()) and not any(
                r["task"] == task and r["part"] == part for r in b["records"]):
            continue  # not scored on this task's part: no row (as the server's standings)
        s = b["submission"]
        rows.append(Row(s["id"], None, values, bool(s["disqualified"]), s["baseline"] is not None,
                        s["submitted_at"] or ""))

    def key(r: Row) -> tuple:
        out: list = [r.disqualified]
        for m in order:
            c, v = by_metric[m], r.values.get(m)
            if v is None:
                out.append((1, 0.0))
            elif c.get("by_magnitude"):
                out.append((0, abs(v)))
            else:
                out.append((0, -v if c["higher_is_better"] else v))
        return (*out, r.submitted_at, r.submission_id)

    rows.sort(key=key)
    rank = 0
    for r in rows:
        if not r.disqualified and not r.baseline:
            rank += 1
            r.rank = rank
    return rows


def compare(rebuilt: list[Row], live_rows: list[dict], *, primary: str, where: str) -> list[str]:
    """Differences between the rebuilt rows and a live board's rows (``rows`` of the board
    API in "all" mode), as sentences naming the board, the submission and both values."""
    out = []
    mine = {r.submission_id: (i, r) for i, r in enumerate(rebuilt)}
    theirs = {r["submission_id"]: (i, r) for i, r in enumerate(live_rows)}
    for sid in sorted(set(theirs) - set(mine)):
        out.append(f"{where}: submission {sid} is on the live board but the log does not put "
                   "it there")
    for sid in sorted(set(mine) - set(theirs)):
        out.append(f"{where}: submission {sid} is missing from the live board; the log puts it "
                   f"at rank {mine[sid][1].rank}")
    for sid in sorted(set(mine) & set(theirs)):
        (i, r), (j, live) = mine[sid], theirs[sid]
        for metric, v in r.values.items():
            lv = ((live.get("values") or {}).get(metric) or {}).get("value")
            if lv != v:
                out.append(f"{where}: submission {sid} shows {metric} = {lv} on the live board; "
                           f"the log says {v}")
        if live.get("rank") != r.rank or i != j:
            out.append(f"{where}: submission {sid} is at position {j + 1} (rank "
                       f"{live.get('rank')}) on the live board; the log puts it at position "
                       f"{i + 1} (rank {r.rank})")
    return out
