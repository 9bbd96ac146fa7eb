"""Judge output cache rows (issue 6): one judge answer per (item, response, judge, kind).

Imported by `leaderboard.server.models` so that Alembic and ``create_all`` see it. Rows are
write-once: a judge's answer for a given response never changes (a new prompt, model or
threshold is a new judge identity, hence a new key), so rescoring reads them instead of asking
the judge again. `leaderboard.server.services.judge_cache.DbJudgeCache` is the only writer.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.server.models.base import Base, utcnow


class JudgeOutput(Base):
    """A cached judge answer. ``kind``: "artifacts" (TriDF mapping: a sorted key list),
    "rating" (LOKI: `Rating.as_dict()`), "causes" (SynCred: a sorted cause list).
    ``item_id`` is the pack item id, or a candidate-set tag for artifact mappings (a mapping
    depends only on the response and the item's modality; see `leaderboard.judges.caching`)."""

    __tablename__ = "judge_output"
    __table_args__ = (UniqueConstraint("item_id", "response_sha256", "judge", "kind"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[str] = mapped_column(String(200))
    response_sha256: Mapped[str] = mapped_column(String(64))
    judge: Mapped[str] = mapped_column(String(80))
    kind: Mapped[str] = mapped_column(String(16))
    value: Mapped[Any] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
