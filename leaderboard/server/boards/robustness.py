"""The robustness board of a benchmark x task x split (x modality), and a submission's curves.

Rows are the scored, public, not hidden submissions whose degraded run was scored (one row per
submission). Columns, each a value with its 95% CI and n (`leaderboard.core.robustness.scoring`:
one joint bootstrap over the subset's items per submission): the clean headline on the subset
(level 0), the headline per degradation (mean over its levels), the worst condition and the mean
drop from clean (the mean over conditions of each condition's drop, paired with the clean
predictions on that condition's own items: docs/robustness.md).

Ranking (the rule under the board, `RULE`): by the worst case, best first (the metric's own
direction); ties by the mean over degradations, then the earlier submission. Disqualified rows
are shown, unranked. Each of the top 100 ranked rows gets a 95% rank interval for the worst
case: the per-item outcomes of every condition (`services.robustness_outcomes`) are resampled
jointly, the same items for every row and condition, and the worst case recomputed per
resample (`core.rank_intervals.rank_intervals`).

Cached with the benchmark's boards (`boards.cache`): the scoring job calls `invalidate_boards`
after storing a degraded run's records, as do hiding, disqualifying and re-importing.
"""
from __future__ import annotations

import hashlib

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.rank_intervals import SEED, rank_intervals
from leaderboard.core.robustness.layout import CLEAN
from leaderboard.core.robustness.scoring import assigned_draws
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.boards.intervals import data_dir
from leaderboard.server.errors import NotFound
from leaderboard.server.models import Benchmark, Submission, Team
from leaderboard.server.models.robustness import RobustnessRun, RobustnessScore
from leaderboard.server.services import robustness_outcomes
from leaderboard.server.services.robustness import config_of

#: ranked rows that get a rank interval (as the other boards)
TOP = 100

RULE = ("Ranked by the worst condition's headline (best first, in the metric's direction); ties "
        "by the mean over degradations, then the earlier submission. Values are on a seeded, "
        "class-stratified subset of items (level 0 = the clean subset); each condition degrades "
        "its own part of it (no item twice in one run of the container), and its drop is paired "
        "with the submission's clean predictions on those same items. 95% CIs from 1,000 "
        "bootstrap resamples of the subset's items, shared by the clean value and every "
        "condition of a row. Disqualified rows are shown but not ranked. Rank interval (95%): "
        "from 1 + the number of submissions whose worst case is significantly better to the "
        "number of ranked submissions minus those significantly worse, \"significantly\" "
        "meaning in more than 97.5% of 1,000 joint bootstrap resamples of the subset's items "
        "(the same items for every submission and condition); only the top 100 rows get one.")


def task_and_split(bench: Benchmark, task: str | None, split: str | None) -> tuple[str, str]:
    """The board a request names, defaulting to the first task and the test split; NotFound
    naming the benchmark's tasks or splits otherwise."""
    meta = bench.meta_json or {}
    tasks = [t["key"] for t in meta.get("tasks", [])]
    splits = meta.get("splits", [])
    task = task or (tasks[0] if tasks else "")
    split = split or ("test" if "test" in splits else (splits[0] if splits else ""))
    if task not in tasks:
        raise NotFound(f"{bench.key} has no task {task!r}; tasks: {tasks}")
    if split not in splits:
        raise NotFound(f"{bench.key} has no split {split!r}; splits: {splits}")
    return task, split


def method(bench: Benchmark) -> dict | None:
    """The method statement under the board (suites, levels, items); None without a plan."""
    config = config_of(bench)
    return None if config is None else config.describe()


def _task(bench: Benchmark, task: str) -> dict:
    for t in (bench.meta_json or {}).get("tasks", []):
        if t["key"] == task:
            return t
    raise NotFound(f"{bench.key} has no task {task!r}")


def _metric(bench: Benchmark, name: str) -> dict:
    return (bench.meta_json or {}).get("metrics", {}).get(name, {"title": name, "fmt": "num",
                                                                   "higher_is_better": True})


def _visible(bench: Benchmark, split: str):
    return (Submission.benchmark_id == bench.id, Submission.split == split,
            Submission.status == "scored", Submission.hidden.is_(False),
            Submission.is_public.is_(True))


def _records(session: Session, bench: Benchmark, task: dict, split: str, ids=None):
    """submission id -> {slice tuple: RobustnessScore} of the task's headline."""
    q = (select(RobustnessScore).join(Submission, RobustnessScore.submission_id == Submission.id)
         .join(RobustnessRun, RobustnessRun.submission_id == Submission.id)
         .where(*_visible(bench, split), RobustnessRun.status == "scored",
                RobustnessScore.task == task["key"], RobustnessScore.metric == task["headline"]))
    if ids is not None:
        q = q.where(Submission.id.in_(ids))
    out: dict[int, dict] = {}
    for r in session.scalars(q):
        out.setdefault(r.submission_id, {})[tuple(sorted(r.slice_json.items()))] = r
    return out


def _cell(r: RobustnessScore | None) -> dict | None:
    if r is None:
        return None
    return {"value": r.value, "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n}


def _get(recs: dict, **slice_) -> RobustnessScore | None:
    return recs.get(tuple(sorted((k, str(v)) for k, v in slice_.items())))


def compute_board(session: Session, bench: Benchmark, task_key: str, split: str,
                  modality: str | None = None) -> dict:
    task = _task(bench, task_key)
    metric = _metric(bench, task["headline"])
    higher = bool(metric.get("higher_is_better", True))
    by_sub = _records(session, bench, task, split)
    modalities = sorted({dict(k).get("modality") for recs in by_sub.values() for k in recs
                         if dict(k).get("summary") == "clean"} - {None})
    if modality is None and modalities:
        modality = modalities[0]
    subs = {s.id: s for s in session.scalars(select(Submission).where(
        Submission.id.in_(list(by_sub))))} if by_sub else {}
    teams = {t.id: t.name for t in session.scalars(select(Team).where(
        Team.id.in_({s.team_id for s in subs.values() if s.team_id})))} if subs else {}
    degradations: list[str] = []
    rows = []
    for sid, recs in by_sub.items():
        worst = _get(recs, modality=modality, summary="worst")
        if worst is None:
            continue
        means = {}
        for key, r in recs.items():
            d = dict(key)
            if d.get("modality") == modality and d.get("summary") == "mean":
                means[d["degradation"]] = _cell(r)
                if d["degradation"] not in degradations:
                    degradations.append(d["degradation"])
        sub = subs[sid]
        vals = [m["value"] for m in means.values() if m["value"] is not None]
        rows.append({"submission_id": sid, "method": sub.method_name,
                     "team": teams.get(sub.team_id), "created_at": sub.created_at.isoformat(),
                     "disqualified_reason": sub.disqualified_reason,
                     "clean": _cell(_get(recs, modality=modality, summary="clean")),
                     "means": means, "worst": _cell(worst),
                     "drop": _cell(_get(recs, modality=modality, summary="drop")),
                     "_mean": sum(vals) / len(vals) if vals else None})

    def order(row):
        w, m = row["worst"]["value"], row["_mean"]
        sign = -1 if higher else 1
        return (bool(row["disqualified_reason"]), w is None, sign * (w or 0.0),
                m is None, sign * (m or 0.0), row["submission_id"])

    rows.sort(key=order)
    rank = 0
    for row in rows:
        row.pop("_mean")
        row["rank_interval"] = None
        if not row["disqualified_reason"]:
            rank += 1
            row["rank"] = rank
        else:
            row["rank"] = None
    if modality is not None:
        _intervals(rows, task_key, modality, higher)
    return {"benchmark": bench.key, "title": bench.title, "task": task_key,
            "task_title": task.get("title", task_key), "split": split, "modality": modality,
            "modalities": modalities, "metric": task["headline"],
            "metric_title": metric.get("title", task["headline"]),
            "fmt": metric.get("fmt", "num"), "higher_is_better": higher,
            "degradations": degradations, "rows": rows, "rule": RULE}


def _intervals(rows: list[dict], task_key: str, modality: str, higher: bool) -> None:
    """Each of the top `TOP` ranked rows gets its 95% rank interval for the worst case, from a
    joint bootstrap over the clean subset's items (one weight per item and resample, shared by
    every row and every condition, whose items are its part of the subset:
    `core.robustness.scoring.assigned_draws`); rows without stored outcomes, or scored on other
    items (another plan or assignment), get none."""
    ranked = [r for r in rows if r["rank"] is not None]
    base, considered, series = None, [], []
    for row in ranked[:TOP]:
        s = robustness_outcomes.read(data_dir(), row["submission_id"], task_key, modality)
        if s is None or CLEAN not in s:
            continue
        sig = [(k, o.fingerprint(), None if p is None else hashlib.sha256(p.tobytes()).digest())
               for k, (o, p) in s.items()]
        base = base or sig
        if sig == base and len(sig) > 1:
            considered.append(row)
            series.append(s)
    if len(considered) < 2:
        return
    clean = series[0][CLEAN][0]
    flat = [(o, p) for s in series for k, (o, p) in s.items() if k != CLEAN]
    _, draws = assigned_draws(clean, flat, seed=SEED)
    n_cond = len(flat) // len(considered)
    cube = draws.reshape(draws.shape[0], len(considered), n_cond)
    worst = cube.min(axis=2) if higher else cube.max(axis=2)
    for row, iv in zip(considered, rank_intervals(worst, [r["rank"] for r in considered],
                                                  higher_is_better=higher,
                                                  total=len(ranked))):
        row["rank_interval"] = iv.as_dict()


def board(session: Session, bench: Benchmark, task_key: str, split: str,
          modality: str | None = None) -> dict:
    """`compute_board`, cached under the benchmark's boards."""
    _task(bench, task_key)  # NotFound before anything is cached
    return get_cache().get_or_compute(
        bench.key, ("robustness", task_key, split, modality),
        lambda: compute_board(session, bench, task_key, split, modality))


def curves(session: Session, sub: Submission, *, others: int = 30) -> list[dict]:
    """Per task and modality of ``sub``'s degraded run: its curve per degradation (level 0 =
    the clean subset) and the same curves of up to ``others`` ranked submissions of its board
    (drawn faintly behind it)."""
    bench = sub.benchmark
    out = []
    for task in (bench.meta_json or {}).get("tasks", []):
        mine = session.scalars(select(RobustnessScore).where(
            RobustnessScore.submission_id == sub.id, RobustnessScore.task == task["key"],
            RobustnessScore.metric == task["headline"])).all()
        if not mine:
            continue
        recs = {tuple(sorted(r.slice_json.items())): r for r in mine}
        for modality in sorted({r.slice_json.get("modality") for r in mine} - {None}):
            series = _series(recs, modality)
            if not series:
                continue
            b = board(session, bench, task["key"], sub.split, modality)
            ids = [r["submission_id"] for r in b["rows"] if r["rank"] and
                   r["submission_id"] != sub.id][:others]
            faint = []
            for recs_o in _records(session, bench, task, sub.split, ids).values():
                faint.extend(_series(recs_o, modality))
            out.append({"task": task["key"], "modality": modality, "metric": task["headline"],
                        "metric_info": _metric(bench, task["headline"]), "series": series,
                        "faint": faint})
    return out


def _series(recs: dict, modality: str) -> list[dict]:
    clean = _get(recs, modality=modality, summary="clean")
    if clean is None:
        return []
    levels: dict[str, dict[int, float | None]] = {}
    for key, r in recs.items():
        d = dict(key)
        if (d.get("modality") == modality and "level" in d and "summary" not in d
                and d.get("degradation") != "clean"):
            levels.setdefault(d["degradation"], {})[int(d["level"])] = r.value
    return [{"label": deg, "x": [0] + sorted(lv), "y": [clean.value] + [lv[k] for k in sorted(lv)]}
            for deg, lv in levels.items()]
