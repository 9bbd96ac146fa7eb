"""Idempotency keys of uploads (issue 17): one row per (user, key), naming the submission the
first request with that key created.

A client that did not hear the answer to an upload (a reset connection, a 503 after the commit, a
killed web worker) sends it again with the same key and gets the first submission back: never a
second row, never a second quota charge. The row is written in the transaction that inserts the
submission and takes the quota, and the unique constraint settles two requests racing with one
key. ``sha256`` and the target (benchmark, split, kind) let the server refuse a key reused for a
different upload. A platform failure (refunded) deletes the row, so that sending the same upload
again makes a new submission (`leaderboard.server.services.idempotency.release`).
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.server.models.base import Base, utcnow


class UploadKey(Base):
    __tablename__ = "upload_key"
    __table_args__ = (UniqueConstraint("user_id", "key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(128))
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submission.id", ondelete="CASCADE"), index=True)
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmark.id", ondelete="CASCADE"))
    split: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))
    #: sha256 of the uploaded bytes as received (the submission's own file may change later:
    #: a container run replaces the tarball by the predictions it wrote)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
