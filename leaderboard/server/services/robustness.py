"""The robustness track's service functions: budgets, builds, runs and records (issue 26).

The plan comes from the server's copy of the pack (``benchmark.yaml``, key ``robustness``:
`leaderboard.core.robustness.config`); the copies are built by a job
(`leaderboard.server.jobs.robustness`) under ``DATA_DIR/robustness/<benchmark>/<cache key>/``.
A build is *current* when it is ready, of the benchmark's pack version, made with the plan the
pack states now, and its folder is there. Functions take a session and never commit.
"""
from __future__ import annotations

import math
import uuid
from pathlib import Path

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from leaderboard.core.packs import parse_meta
from leaderboard.core.robustness.config import RobustnessConfig, parse_config
from leaderboard.core.robustness.layout import MANIFEST
from leaderboard.server.access import audit
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.models.robustness import (
    RobustnessBudget,
    RobustnessBuild,
    RobustnessRun,
    RobustnessScore,
)
from leaderboard.server.numbers import ascii_int

#: limits an admin may set (``set_budget``)
BUDGET_BOUNDS = {"max_conditions": (1, 500), "max_items": (1, 100_000),
                 "wall_s": (1.0, 7 * 86400.0)}


def config_of(bench: Benchmark) -> RobustnessConfig | None:
    """The pack's robustness plan (None: the pack has none)."""
    text = (Path(bench.pack_path) / "benchmark.yaml").read_text(encoding="utf-8")
    meta = parse_meta(text)
    return parse_config(meta.extras.get("robustness"), modalities=meta.modalities,
                        splits=meta.splits)


def budget(session: Session, bench: Benchmark) -> RobustnessBudget:
    """The benchmark's budget row, or the defaults (an unsaved row) when no admin set one."""
    row = session.scalar(select(RobustnessBudget).where(
        RobustnessBudget.benchmark_id == bench.id))
    if row is None:
        row = RobustnessBudget(benchmark_id=bench.id, enabled=True, max_conditions=25,
                               max_items=200, wall_s=3600.0)
    return row


def set_budget(session: Session, bench: Benchmark, actor: User | None, *, enabled, max_conditions,
               max_items, wall_s, ip: str = "") -> RobustnessBudget:
    """Validate and store the benchmark's budget (audited). ServiceError names a bad field."""
    values = {"max_conditions": max_conditions, "max_items": max_items, "wall_s": wall_s}
    clean = {}
    for name, raw in values.items():
        lo, hi = BUDGET_BOUNDS[name]
        try:
            v = float(raw) if name == "wall_s" else ascii_int(str(raw).strip(" \t"),
                                                              signed=True)
        except (TypeError, ValueError):
            v = None
        if v is None:  # ints in ASCII digits only (int() also takes "٣" and "1_0")
            raise ServiceError(f"{name}: must be a number, got {raw!r}")
        if not (lo <= v <= hi) or (isinstance(v, float) and not math.isfinite(v)):
            raise ServiceError(f"{name}: must be between {lo:g} and {hi:g}, got {raw!r}")
        clean[name] = v
    row = session.scalar(select(RobustnessBudget).where(
        RobustnessBudget.benchmark_id == bench.id))
    if row is None:
        row = RobustnessBudget(benchmark_id=bench.id)
        session.add(row)
    row.enabled = bool(enabled)
    row.max_conditions, row.max_items, row.wall_s = (clean["max_conditions"], clean["max_items"],
                                                     clean["wall_s"])
    row.updated_at = utcnow()
    session.flush()
    audit.record(session, actor, "robustness.budget", bench.key, row.as_dict(), ip)
    return row


def over_budget(bud: RobustnessBudget, conditions: int, items: int) -> str | None:
    """Why a plan of ``conditions`` x ``items`` per condition is over the budget (None: fits)."""
    if conditions > bud.max_conditions:
        return (f"{conditions} conditions are over the benchmark's budget of "
                f"{bud.max_conditions}")
    if items > bud.max_items:
        return f"{items} items per condition are over the benchmark's budget of {bud.max_items}"
    return None


def copies_root(data_dir: str, bench: Benchmark) -> Path:
    return Path(data_dir) / "robustness" / bench.key


def request_build(session: Session, bench: Benchmark, split: str, actor: User | None = None,
                  ip: str = "") -> RobustnessBuild:
    """A queued build row for ``split`` (the job computes its cache key); the caller commits and
    enqueues. ServiceError when the pack has no plan for that split."""
    config = config_of(bench)
    if config is None:
        raise ServiceError(f"{bench.key} has no robustness plan (benchmark.yaml, 'robustness')")
    if split not in config.splits:
        raise ServiceError(f"split {split!r} has no robustness plan; planned: "
                           f"{list(config.splits)}")
    row = RobustnessBuild(benchmark_id=bench.id, split=split, pack_version=bench.version,
                          cache_key=f"pending-{uuid.uuid4().hex[:12]}", status="queued",
                          method_json=config.describe())
    session.add(row)
    session.flush()
    audit.record(session, actor, "robustness.build", f"{bench.key}:{split}", {"build": row.id}, ip)
    return row


def builds(session: Session, bench: Benchmark) -> list[RobustnessBuild]:
    return list(session.scalars(select(RobustnessBuild).where(
        RobustnessBuild.benchmark_id == bench.id).order_by(RobustnessBuild.id.desc())))


def current_build(session: Session, bench: Benchmark, split: str, *, data_dir: str
                  ) -> RobustnessBuild | None:
    """The newest ready build of ``split`` that matches the pack and plan of today."""
    config = config_of(bench)
    if config is None or split not in config.splits:
        return None
    method = config.describe()
    for row in session.scalars(select(RobustnessBuild).where(
            RobustnessBuild.benchmark_id == bench.id, RobustnessBuild.split == split,
            RobustnessBuild.status == "ready").order_by(RobustnessBuild.finished_at.desc(),
                                                        RobustnessBuild.id.desc())):
        if (row.pack_version == bench.version and row.method_json == method
                and (Path(data_dir) / row.path / MANIFEST).is_file()):
            return row
    return None


def run_of(session: Session, submission_id: int) -> RobustnessRun | None:
    return session.scalar(select(RobustnessRun).where(
        RobustnessRun.submission_id == submission_id))


def records_of(session: Session, submission_id: int) -> list[RobustnessScore]:
    return list(session.scalars(select(RobustnessScore).where(
        RobustnessScore.submission_id == submission_id).order_by(RobustnessScore.id)))


def store_records(session: Session, submission_id: int, records) -> int:
    """Replace the submission's robustness records with ``records`` (`MetricRecord` list)."""
    session.execute(delete(RobustnessScore).where(RobustnessScore.submission_id == submission_id))
    rows = [RobustnessScore(submission_id=submission_id, task=r.task, metric=r.metric,
                            slice_key=r.slice_key, slice_json=dict(r.slice), value=r.value,
                            ci_low=r.ci_low, ci_high=r.ci_high, n=r.n,
                            metric_version=r.metric_version) for r in records]
    session.add_all(rows)
    return len(rows)


def submission_robustness(session: Session, sub: Submission) -> dict | None:
    """What the submission page shows: the run (status, method) and its records; None when the
    submission never had a degraded run."""
    run = run_of(session, sub.id)
    if run is None:
        return None
    return {"run": run.as_dict(), "records": [r.as_record() for r in records_of(session, sub.id)]}


def get_build(session: Session, bench: Benchmark, build_id: int) -> RobustnessBuild:
    row = session.get(RobustnessBuild, build_id)
    if row is None or row.benchmark_id != bench.id:
        raise NotFound(f"no robustness build {build_id} of {bench.key}")
    return row
