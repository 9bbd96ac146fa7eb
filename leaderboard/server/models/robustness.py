"""The robustness track's rows (issue 26): budgets, builds of degraded copies, runs, records.

* `RobustnessBudget`: what an admin allows per benchmark (conditions, items per condition, the
  wall time of the degraded run); a plan over it is refused and a run over it stopped.
* `RobustnessBuild`: one build of a split's degraded copies (``cache_key``: the pack digest x
  suite signatures, `leaderboard.builders.copies`); the files live under
  ``DATA_DIR/robustness/<benchmark>/<cache_key>/``; ``done``/``total`` is the progress.
* `RobustnessRun`: the degraded run of one container submission and how it ended.
* `RobustnessScore`: its records, the condition as their slice (``degradation``, ``level``;
  summaries carry ``summary``). Kept apart from `Score`, so the clean boards, their standings
  and a rescore of the clean predictions never see or drop them.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.server.models.base import Base, Benchmark, Submission, utcnow

BUILD_STATUSES = ("queued", "building", "ready", "failed")
RUN_STATUSES = ("running", "ran", "scored", "over_budget", "failed", "skipped")


class RobustnessBudget(Base):
    __tablename__ = "robustness_budget"
    id: Mapped[int] = mapped_column(primary_key=True)
    benchmark_id: Mapped[int] = mapped_column(
        ForeignKey("benchmark.id", ondelete="CASCADE"), unique=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    max_conditions: Mapped[int] = mapped_column(Integer, default=25, server_default="25")
    max_items: Mapped[int] = mapped_column(Integer, default=200, server_default="200")
    wall_s: Mapped[float] = mapped_column(Float, default=3600.0, server_default="3600")
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    def as_dict(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "max_conditions": self.max_conditions,
                "max_items": self.max_items, "wall_s": self.wall_s}


class RobustnessBuild(Base):
    __tablename__ = "robustness_build"
    __table_args__ = (UniqueConstraint("benchmark_id", "split", "cache_key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    benchmark_id: Mapped[int] = mapped_column(
        ForeignKey("benchmark.id", ondelete="CASCADE"), index=True)
    split: Mapped[str] = mapped_column(String(64))
    pack_version: Mapped[str] = mapped_column(String(64))
    cache_key: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="queued")
    done: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    total: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    path: Mapped[str] = mapped_column(Text, default="")  # relative to DATA_DIR
    method_json: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    reused: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")

    benchmark: Mapped[Benchmark] = relationship()

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "split": self.split, "pack_version": self.pack_version,
                "cache_key": self.cache_key, "status": self.status, "done": self.done,
                "total": self.total, "reused": self.reused, "error": self.error,
                "method": self.method_json,
                "finished_at": self.finished_at.isoformat() if self.finished_at else None}


class RobustnessRun(Base):
    __tablename__ = "robustness_run"
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submission.id", ondelete="CASCADE"), unique=True)
    build_id: Mapped[int | None] = mapped_column(
        ForeignKey("robustness_build.id", ondelete="SET NULL"))
    status: Mapped[str] = mapped_column(String(16), default="running")
    reason: Mapped[str | None] = mapped_column(Text)
    conditions: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    items: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    clean_duration_s: Mapped[float | None] = mapped_column(Float)
    duration_s: Mapped[float | None] = mapped_column(Float)
    method_json: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    notes_json: Mapped[list[Any]] = mapped_column(JSON, default=list)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]

    submission: Mapped[Submission] = relationship()
    build: Mapped[RobustnessBuild | None] = relationship()

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "conditions": self.conditions,
                "items": self.items, "clean_duration_s": self.clean_duration_s,
                "duration_s": self.duration_s, "method": self.method_json,
                "notes": self.notes_json or []}


class RobustnessScore(Base):
    __tablename__ = "robustness_score"
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submission.id", ondelete="CASCADE"), index=True)
    task: Mapped[str] = mapped_column(String(64))
    metric: Mapped[str] = mapped_column(String(64))
    slice_key: Mapped[str] = mapped_column(String(400), default="")
    slice_json: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    value: Mapped[float | None] = mapped_column(Float)
    ci_low: Mapped[float | None] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float)
    n: Mapped[int] = mapped_column(Integer, default=0)
    metric_version: Mapped[str] = mapped_column(String(16), default="1")

    def as_record(self) -> dict[str, Any]:
        return {"task": self.task, "metric": self.metric, "slice": self.slice_json,
                "value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "n": self.n, "judge": None, "metric_version": self.metric_version}
