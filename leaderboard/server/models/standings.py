"""Standings kept per board (issue 16): one row per submission on each board slice.

A *board slice* (`StandingBoard`) is one benchmark x split x task x slice key x part. Its rows
(`Standing`) are the submissions on the board there, each with the keys that order it, so a board
page is one indexed range read plus a count, never a scan of submissions or score rows:

* ``sort_key``: the row's place by the ranking rules (`leaderboard.server.boards.standings`),
  encoded as a fixed-width string that sorts bytewise (collation "C" on PostgreSQL);
* ``all_key``: ``sort_key`` after a disqualified flag ("all submissions" mode puts disqualified
  rows last); ``rep_key``: ``sort_key`` when the row represents its team in "team" mode, else
  NULL; ``pick_key``: the order on the pick part that chooses a team's representative.

The rows are derived data: `leaderboard.server.boards.ledger` maintains them in the transaction
that changes scores or a submission, and rebuilds them (``rebuild-standings``).
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.server.models.base import Base

#: bytewise ordering of the keys on every backend (SQLite's default is already binary)
KEY = String(512).with_variant(String(512, collation="C"), "postgresql")


class StandingBoard(Base):
    """One board slice and its aggregates: rows, metrics present, judged metrics, key order."""

    __tablename__ = "standing_board"
    __table_args__ = (UniqueConstraint("benchmark_id", "split", "task", "slice_key", "part",
                                       name="uq_standing_board_key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmark.id", ondelete="CASCADE"))
    split: Mapped[str] = mapped_column(String(64))
    task: Mapped[str] = mapped_column(String(64))
    slice_key: Mapped[str] = mapped_column(String(400))
    part: Mapped[str] = mapped_column(String(16))
    rows: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: competing rows ("all" mode's ranked rows), representatives ("team" mode's rows) and
    #: competing representatives: a page's totals without a count over the board
    ranked: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    reps: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    ranked_reps: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: {metric: number of rows with a shown value} (the board's columns are those > 0)
    metrics_json: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    #: {metric: rows whose shown record was made by a judge (not self-mapped)}
    judged_json: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    #: the ranking columns the keys were computed with, and the judge whose records count
    order_json: Mapped[list[Any]] = mapped_column(JSON, default=list)
    judge: Mapped[str | None] = mapped_column(String(80))


class Standing(Base):
    """One submission on one board slice (see the module docstring for the keys)."""

    __tablename__ = "standing"
    __table_args__ = (
        UniqueConstraint("board_id", "submission_id", name="uq_standing_board_submission"),
        # covering: team pages, their counts and the modality ranks read the index only
        Index("ix_standing_rep", "board_id", "rep_key", "competes", "is_baseline", "grp"),
        Index("ix_standing_all", "board_id", "all_key", "competes"),
        Index("ix_standing_group", "board_id", "grp"),
        Index("ix_standing_submission", "submission_id"),
        Index("ix_standing_baseline", "board_id", "is_baseline"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("standing_board.id", ondelete="CASCADE"))
    submission_id: Mapped[int] = mapped_column(ForeignKey("submission.id", ondelete="CASCADE"))
    #: "t:<team id>" (one row per team in team mode) or "s:<submission id>" (stands alone)
    grp: Mapped[str] = mapped_column(String(40))
    sort_key: Mapped[str] = mapped_column(KEY)
    all_key: Mapped[str] = mapped_column(KEY)
    rep_key: Mapped[str | None] = mapped_column(KEY)
    pick_key: Mapped[str] = mapped_column(KEY)
    selected: Mapped[bool] = mapped_column(Boolean, default=False)
    disqualified: Mapped[bool] = mapped_column(Boolean, default=False)
    is_baseline: Mapped[bool] = mapped_column(Boolean, default=False)
    competes: Mapped[bool] = mapped_column(Boolean, default=False)
    #: the shown part's records [[metric, value, ci_low, ci_high, n, judge], ...] and the pick
    #: part's [[metric, value, judge], ...], all judges kept (the filter is the board's judge)
    cells_json: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class ModalityBoard(Base):
    """One modality board: a modality x a board kind (`leaderboard.server.boards.normalise`) x a
    split, its columns (the task boards it reads, as
    `leaderboard.server.boards.modality_ledger.columns` resolved them) and its counters."""

    __tablename__ = "modality_board"
    __table_args__ = (UniqueConstraint("modality", "kind", "split",
                                       name="uq_modality_board_key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    modality: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(32))
    split: Mapped[str] = mapped_column(String(64))
    #: team rows, and those ranked (full coverage); baseline rows are not counted
    rows: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    ranked: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    columns_json: Mapped[list[Any]] = mapped_column(JSON, default=list)


class ModalityStanding(Base):
    """One team (or team-less submission, or baseline kind) on a modality board: its coverage,
    its mean normalised score, its items and, per column, its representative's headline cell.

    ``grp``: "t:<team>", "s:<submission>" or "b:<baseline kind>" (``is_baseline``: a reference
    row, placed by its mean among the teams, never given a rank). ``sort_key``: "0" + the
    mean's code + ``grp`` for a row with a result on every column (full coverage; equal means
    share a rank), else "1" + (columns not covered) + the mean's code + ``grp`` (listed below
    the full-coverage rows, most coverage first)."""

    __tablename__ = "modality_standing"
    __table_args__ = (
        UniqueConstraint("board_id", "grp", name="uq_modality_standing_board_grp"),
        Index("ix_modality_standing_key", "board_id", "sort_key", "is_baseline"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("modality_board.id", ondelete="CASCADE"))
    grp: Mapped[str] = mapped_column(String(40))
    team_id: Mapped[int | None] = mapped_column(ForeignKey("team.id", ondelete="CASCADE"))
    is_baseline: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    covered: Mapped[int] = mapped_column(Integer, default=0)
    ranked: Mapped[bool] = mapped_column(Boolean, default=False)
    mean_score: Mapped[float | None] = mapped_column(Float)
    #: items behind the mean (the covered cells' n summed)
    n_items: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    sort_key: Mapped[str] = mapped_column(KEY)
    #: {column key: [submission id, value, ci_low, ci_high, n, normalised]}
    cells_json: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
