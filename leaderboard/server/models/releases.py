"""Re-run campaigns of a benchmark release (issue 37).

When a release N >= 2 is published, the platform re-runs every container submission of the
family's earlier releases whose team allowed it (`Submission.allow_rerun`) against the new
release's held-out split, at the lowest priority. A `RerunCampaign` is that release's plan: the
admin's budget (a count of runs and/or GPU seconds; None = no limit), whether it is paused, and
when it started and ended. Each run is an ordinary `Submission` with ``rerun_of_id`` set, so it
gets its own record, score, receipt and failure reason, and the reconciler's rules for clean runs.
"""
from __future__ import annotations

from datetime import datetime

from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, Text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.server.models.base import Base, Benchmark, utcnow


class RerunCampaign(Base):
    __tablename__ = "rerun_campaign"
    id: Mapped[int] = mapped_column(primary_key=True)
    #: the release whose held-out split the re-runs score on (one campaign per release)
    benchmark_id: Mapped[int] = mapped_column(
        ForeignKey("benchmark.id", ondelete="CASCADE"), unique=True)
    #: at most this many runs queued (None: no limit)
    max_runs: Mapped[int | None] = mapped_column(Integer)
    #: at most this many GPU seconds spent, counted from the runs' wall time (None: no limit)
    max_gpu_seconds: Mapped[int | None] = mapped_column(Integer)
    paused: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"))
    #: set when every eligible submission has a run, or the budget stopped it (see ``note``)
    finished_at: Mapped[datetime | None]
    #: why it stopped or what it is waiting for, in words an admin reads
    note: Mapped[str] = mapped_column(Text, default="", server_default="")
    #: the submissions the last planning pass did not re-run, each ``{"submission_id", "team",
    #: "method_name", "reason"}`` (agreement, opted out, image not kept, over budget, ...)
    skips_json: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)

    benchmark: Mapped[Benchmark] = relationship()
