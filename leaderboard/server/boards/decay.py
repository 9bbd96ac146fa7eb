"""Decay across releases (issue 37, items 4b and 4c): each top detector's headline on every
release of a benchmark family, and one submission's history across releases.

A **line** is one detector followed across the family's releases (`leaderboard.server.services.
releases`): an original submission and its re-runs (``Submission.rerun_of_id``, followed back
to the original), together with any other submission of the same team and method name (a team
that submitted the same method again on a later release). Baselines are lines too, one per
baseline kind. On each release a line's point is its best row on that release's board in
"all submissions" mode (the first in the board's own order), so the numbers are exactly the
board's: headline value, 95% CI and n as the board shows them (on a test split, the board's
shown part), and the row's rank (None for baselines, which are reference rows). Hidden, private,
unscored and disqualified submissions are never rows of a board, so never points here.

Which lines: the `TOP_LINES` best on the latest release's board (board order), then lines
without a point there, best place on their latest release first.

Cached under the cross-benchmark scope (`leaderboard.server.boards.cache.CROSS`), which every
`invalidate_boards` clears: a family's releases are several benchmarks.
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.boards.board import board
from leaderboard.server.boards.cache import CROSS, get_cache
from leaderboard.server.boards.meta import benchmark_info, task_of
from leaderboard.server.errors import NotFound
from leaderboard.server.models import Benchmark, Submission
from leaderboard.server.services import releases

#: detectors drawn (the plot stays readable; the JSON/CSV carry the same lines)
TOP_LINES = 8

RULE = ("Each line is one detector across the benchmark's releases: an original submission "
        "and the platform's re-runs of it on later releases, or the same team and method name "
        "submitted again; baselines are lines of their own. On each release the point is the "
        "line's best row on that release's board (all submissions), with the board's value, "
        "95% interval, n and rank; hidden, private, unscored and disqualified submissions are "
        "never points. Only the best "
        f"{TOP_LINES} lines on the latest release are drawn.")


def _family_of(session: Session, key: str) -> tuple[Benchmark, list[Benchmark]]:
    bench = releases.resolve(session, key)
    if bench is None:
        known = list(session.scalars(select(Benchmark.key).order_by(Benchmark.key)))
        raise NotFound(f"no benchmark {key!r}; known: {known}")
    return bench, releases.releases_of(session, bench.family)


def release_list(session: Session, key: str) -> list[dict]:
    """The releases of ``key``'s family, oldest first: {release, key (the row's), public_key
    (stable link), released_at (ISO or None)}."""
    _bench, rels = _family_of(session, key)
    latest = rels[-1].release
    return [{"release": b.release, "key": b.key,
             "public_key": releases.public_key(b, latest=latest),
             "released_at": b.released_at.isoformat() if b.released_at else None}
            for b in rels]


def _lineage(session: Session, bench_ids: list[int]) -> dict[int, dict]:
    """{submission id: {root, team_id, method_name, is_baseline, baseline_kind, rerun_of}} for
    every submission of these releases, ``root`` its original (re-run links followed back)."""
    rows = session.execute(
        select(Submission.id, Submission.rerun_of_id, Submission.team_id, Submission.method_name,
               Submission.is_baseline, Submission.baseline_kind)
        .where(Submission.benchmark_id.in_(bench_ids))).all()
    parent = {r.id: r.rerun_of_id for r in rows}
    out = {}
    for r in rows:
        root, hops = r.id, 0
        while parent.get(root) is not None and hops < 100:  # a loop cannot be stored; bounded
            root, hops = parent[root], hops + 1
        out[r.id] = {"root": root, "team_id": r.team_id, "method_name": r.method_name,
                     "is_baseline": r.is_baseline, "baseline_kind": r.baseline_kind,
                     "rerun_of": r.rerun_of_id}
    return out


def line_key(sub: dict, lineage: dict[int, dict]) -> tuple:
    """The line a submission belongs to: its original's team and method (baselines: kind)."""
    root = lineage.get(sub["root"], sub)
    if root["is_baseline"]:
        return ("baseline", root["baseline_kind"] or root["method_name"])
    return ("team", root["team_id"], root["method_name"])


def decay_view(session: Session, *, benchmark_key: str, task: str, split: str) -> dict:
    """The decay plot's numbers for one task and split of ``benchmark_key``'s family (any
    release's key or the family's name). NotFound names a bad key, task or split.

    Returns {"family", "title", "task", "split", "metric", "column", "releases":
    [release_list row + "part"], "lines": [{"key", "label", "team", "method_name",
    "is_baseline", "original_id", "points": [{"release", "benchmark_key", "submission_id",
    "rerun_of_id", "value", "ci_low", "ci_high", "n", "rank", "of"}]}], "rule"}; a line's
    points in release order, only releases where it has a row."""
    bench, rels = _family_of(session, benchmark_key)
    info = benchmark_info(session, bench.key)
    task_of(info, task)  # NotFound for a bad task
    if split not in info["splits"]:
        raise NotFound(f"benchmark {bench.key!r} has no split {split!r}; "
                       f"splits: {info['splits']}")
    return get_cache().get_or_compute(
        CROSS, ("decay", bench.family, task, split),
        lambda: _compute(session, bench.family, rels, task, split))


def _compute(session: Session, family: str, rels: list[Benchmark], task: str,
             split: str) -> dict:
    lineage = _lineage(session, [b.id for b in rels])
    listed = {r["release"]: r for r in release_list(session, rels[-1].key)}
    out_releases, lines, order = [], {}, {}
    column = metric = None
    for pos, b in enumerate(rels):
        info = benchmark_info(session, b.key)
        if split not in info["splits"] or not any(t["key"] == task for t in info["tasks"]):
            continue
        page = board(session, benchmark_key=b.key, task=task, split=split, mode="all",
                     per_page=None)
        metric = page["primary"]
        column = next((c for c in page["columns"] if c["metric"] == metric), column)
        out_releases.append({**listed[b.release], "part": page["part"]})
        for place, r in enumerate(page["rows"]):
            if r["rank"] is None and not r["is_baseline"]:
                continue  # disqualified: a row that does not compete
            sub = lineage.get(r["submission_id"])
            if sub is None:
                continue
            key = line_key(sub, lineage)
            line = lines.get(key)
            if line is None:
                root = lineage.get(sub["root"], sub)
                line = lines[key] = {
                    "key": "/".join(str(k) for k in key), "team": dict(r["team"]),
                    "method_name": root["method_name"], "is_baseline": bool(root["is_baseline"]),
                    "original_id": sub["root"], "points": []}
            if line["points"] and line["points"][-1]["release"] == b.release:
                continue  # the line's best row on this release came first
            v = r["values"].get(metric) or {}
            line["points"].append({
                "release": b.release, "benchmark_key": b.key,
                "submission_id": r["submission_id"], "rerun_of_id": sub["rerun_of"],
                "value": v.get("value"), "ci_low": v.get("ci_low"), "ci_high": v.get("ci_high"),
                "n": v.get("n"), "rank": r["rank"], "of": page["ranked"]})
            order[key] = (-pos, place)  # the latest release it is on, then its place there
    for line in lines.values():
        line["label"] = f"{line['team']['name']} · {line['method_name']}"
    ranked = sorted(lines, key=lambda k: order[k])[:TOP_LINES]
    title = rels[-1].title
    return {"family": family, "title": title, "task": task, "split": split, "metric": metric,
            "column": column, "releases": out_releases, "lines": [lines[k] for k in ranked],
            "rule": RULE}


def decay_csv_rows(view: dict):
    """The CSV rows of a decay view: a header, then one row per point."""
    yield ["line", "team_id", "team", "method_name", "baseline", "original_id", "release",
           "benchmark_key", "released_at", "submission_id", "rerun_of_id", view["metric"],
           "ci_low", "ci_high", "n", "rank", "of"]
    dates = {r["release"]: r["released_at"] for r in view["releases"]}
    for line in view["lines"]:
        for p in line["points"]:
            yield [line["label"], line["team"]["id"], line["team"]["name"], line["method_name"],
                   int(line["is_baseline"]), line["original_id"], p["release"],
                   p["benchmark_key"], dates.get(p["release"]) or "", p["submission_id"],
                   p["rerun_of_id"], p["value"], p["ci_low"], p["ci_high"], p["n"], p["rank"],
                   p["of"]]


def submission_releases(session: Session, submission: Submission) -> list[dict]:
    """One submission's history across its family's releases (issue 37, 4c): its original and
    every re-run of it, per task of the board they are on: {"task", "points": [{"release",
    "benchmark_key", "split", "submission_id", "rerun_of_id", "value", "ci_low", "ci_high",
    "n", "rank", "of", "released_at"}]} in release order. A member that is not a row of its
    board (hidden, private, not scored) has no point; [] when the family has one release."""
    bench = submission.benchmark
    rels = releases.releases_of(session, bench.family)
    if len(rels) < 2:
        return []
    root, hops = submission.id, 0
    parent = submission.rerun_of_id
    while parent is not None and hops < 100:  # a re-run's original: usually one step
        root, hops = parent, hops + 1
        parent = session.scalar(select(Submission.rerun_of_id).where(Submission.id == parent))
    return get_cache().get_or_compute(
        CROSS, ("decay_submission", bench.family, root),
        lambda: _history(session, rels, _lineage(session, [b.id for b in rels]), root))


def _history(session: Session, rels: list[Benchmark], lineage: dict, root: int) -> list[dict]:
    members = {sid for sid, s in lineage.items() if s["root"] == root}
    placed: dict[int, set[str]] = {}  # release row id -> the splits its members are on
    for bid, split in session.execute(select(Submission.benchmark_id, Submission.split)
                                      .where(Submission.id.in_(members))):
        placed.setdefault(bid, set()).add(split)
    listed = {r["release"]: r for r in release_list(session, rels[-1].key)}
    by_task: dict[str, dict] = {}
    for b in rels:
        info = benchmark_info(session, b.key)
        for split in sorted(placed.get(b.id, ())):
            for t in info["tasks"]:
                page = board(session, benchmark_key=b.key, task=t["key"], split=split,
                             mode="all", per_page=None)
                # the best of the members on this board (the board's order)
                row = next((r for r in page["rows"] if r["submission_id"] in members), None)
                if row is None:
                    continue
                v = row["values"].get(page["primary"]) or {}
                entry = by_task.setdefault(t["key"], {
                    "task": t["key"], "title": t.get("title") or t["key"],
                    "metric": page["primary"],
                    "column": next((c for c in page["columns"]
                                    if c["metric"] == page["primary"]), None),
                    "points": []})
                entry["points"].append({
                    "release": b.release, "benchmark_key": b.key, "split": split,
                    "released_at": listed[b.release]["released_at"],
                    "submission_id": row["submission_id"],
                    "rerun_of_id": lineage[row["submission_id"]]["rerun_of"],
                    "value": v.get("value"), "ci_low": v.get("ci_low"),
                    "ci_high": v.get("ci_high"), "n": v.get("n"), "rank": row["rank"],
                    "of": page["ranked"]})
    return list(by_task.values())
