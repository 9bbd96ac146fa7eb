"""Each scored submission's headline numbers: one per task, the task's headline metric overall,
on the part its board shows (public on a held-out split until the private part is revealed).

Used where a team looks at its own work (My submissions, the team page, the API status the CLI
prints), so that a row says what it scored without opening the submission page.
"""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.models import Benchmark, Score, Submission


def shown_part(bench: Benchmark, parts: set[str]) -> str:
    """The part a board shows for a submission that has ``parts``."""
    if "public" not in parts:
        return "all"
    return "private" if bench.private_revealed else "public"


def headlines(session: Session, subs: Iterable[Submission]) -> dict[int, list[dict]]:
    """{submission id: [{task, task_title, metric, title, fmt, higher_is_better, value, ci_low,
    ci_high, n, part}]} for the scored ones, tasks in the benchmark's order."""
    subs = [s for s in subs if s.status == "scored"]
    if not subs:
        return {}
    rows: dict[int, dict[tuple[str, str, str], Score]] = {}
    for sc in session.scalars(select(Score).where(
            Score.submission_id.in_([s.id for s in subs]), Score.slice_key == "")):
        rows.setdefault(sc.submission_id, {})[(sc.task, sc.metric, sc.part)] = sc
    out: dict[int, list[dict]] = {}
    for s in subs:
        meta = s.benchmark.meta_json or {}
        mine = rows.get(s.id, {})
        part = shown_part(s.benchmark, {k[2] for k in mine})
        lines = []
        for t in meta.get("tasks", []):
            sc = mine.get((t["key"], t["headline"], part))
            if sc is None:
                continue
            spec = meta.get("metrics", {}).get(t["headline"], {})
            lines.append({"task": t["key"], "task_title": t.get("title") or t["key"],
                          "metric": t["headline"], "title": spec.get("title") or t["headline"],
                          "fmt": spec.get("fmt", "num"),
                          "higher_is_better": spec.get("higher_is_better"),
                          "value": sc.value, "ci_low": sc.ci_low, "ci_high": sc.ci_high,
                          "n": sc.n, "part": part})
        out[s.id] = lines
    return out
