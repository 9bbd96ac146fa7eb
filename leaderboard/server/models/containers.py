"""Container-run records: one row per attempt at running a submission's detector image.

Imported by `leaderboard.server.models` so that Alembic and ``create_all`` see it. The row is
written as soon as the image is loaded (so a worker that dies mid-run leaves a trace, and other
jobs can see the image id is in use), then completed when the run ends. Logs are stored as the
harness captured them (head and tail up to ``HARNESS_LOG_BYTES``); what a team may read of them
is decided by the benchmark module's ``container_logs`` policy (`team_log`).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.core.benchmarks import get_benchmark
from leaderboard.server.models.base import Base, Submission, utcnow

#: log visibility policies a benchmark module may declare (``Benchmark.container_logs``)
LOG_POLICIES = ("tail", "hidden")


class ContainerRun(Base):
    """One run of a container submission: the pinned image, its limits and how it ended.

    ``reason`` is ``"ok"`` or a `harness.FAILURE_REASONS` key (``None`` while running);
    ``log_head``/``log_tail`` are the two ends of the log (the whole log is ``log_tail`` when
    nothing was cut) and ``log_cut`` says whether the middle was dropped.
    """

    __tablename__ = "container_run"
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submission.id", ondelete="CASCADE"), index=True)
    image_id: Mapped[str] = mapped_column(String(80), index=True)
    image_size: Mapped[int | None] = mapped_column(BigInteger)
    limits_json: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    duration_s: Mapped[float | None] = mapped_column(Float)
    peak_memory_bytes: Mapped[int | None] = mapped_column(BigInteger)
    gpu: Mapped[int | None] = mapped_column(Integer)
    exit_code: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[str | None] = mapped_column(String(32))
    log_head: Mapped[str] = mapped_column(Text, default="")
    log_tail: Mapped[str] = mapped_column(Text, default="")
    log_cut: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")

    submission: Mapped[Submission] = relationship()

    def team_log(self, *, privileged: bool = False) -> dict[str, Any]:
        """What the submitting team (or, ``privileged``, an admin) may read of the log.

        ``{"policy", "text", "cut"}``; ``text`` is None under the "hidden" policy (benchmarks
        whose inputs are secret: a log could carry them out). Admins always see head and tail.
        """
        bench = self.submission.benchmark
        policy = get_benchmark(bench.family or bench.key).container_logs  # a release: <family>-vN
        if policy not in LOG_POLICIES:
            raise ValueError(f"container_logs must be one of {LOG_POLICIES}, got {policy!r}")
        if privileged:
            text = (self.log_head + "\n[... cut ...]\n" + self.log_tail if self.log_cut
                    else self.log_tail)
            return {"policy": policy, "text": text, "cut": self.log_cut}
        if policy == "hidden":
            return {"policy": policy, "text": None, "cut": self.log_cut}
        return {"policy": policy, "text": self.log_tail, "cut": self.log_cut}

    def as_dict(self) -> dict[str, Any]:
        """The run's facts (no logs) for the API status document."""
        return {"image_id": self.image_id, "image_size": self.image_size,
                "limits": self.limits_json, "started_at": _iso(self.started_at),
                "finished_at": _iso(self.finished_at), "duration_s": self.duration_s,
                "peak_memory_bytes": self.peak_memory_bytes, "gpu": self.gpu,
                "exit_code": self.exit_code, "reason": self.reason}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# Every run of a submission, oldest first (a re-queued run after a dead worker adds a row).
Submission.container_runs = relationship(  # type: ignore[attr-defined]
    ContainerRun, order_by=ContainerRun.id, viewonly=True)


def container_status(sub: Submission, *, privileged: bool = False) -> dict[str, Any] | None:
    """The latest run of a container submission for its owners: facts plus the visible log
    (``None`` for predictions submissions; ``{"run": None}`` before the first run starts)."""
    if sub.kind != "container":
        return None
    runs = sub.container_runs  # type: ignore[attr-defined]
    if not runs:
        return {"run": None, "log": None}
    return {"run": runs[-1].as_dict(), "log": runs[-1].team_log(privileged=privileged)}
