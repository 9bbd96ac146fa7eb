"""Challenges with phases (issue 12): a benchmark may run a timed challenge, as on EvalAI,
Codabench and Kaggle (the TRIDENT challenge built on TriDF ran public-validation, then
private-test phases).

A `Challenge` belongs to one benchmark and has ordered `ChallengePhase` rows, each with UTC open
and close times, the split it takes submissions on, the part of that split it ranks, and its own
quotas. A challenge binds only its entrants (issue 33): a team enters it (`ChallengeEntrant`), and
its rules apply only to the submissions made to it, which record their phase
(``Submission.phase_id``); every other submission goes to the standing boards as if no
challenge ran. A challenge submission takes its units from the phase's own counters, per day
(`PhaseDayUsage`) and over the phase (`PhaseUsage`), so a cap counts only challenge
submissions and a refund gives the units back to that phase even after its dates were edited.
When the last
phase closes, the reconciler finishes the challenge
(`leaderboard.server.services.challenges.finish_due`): the private part is revealed and the
results are frozen into ``results_json``. Each phase's own board (the submissions made during
it) is frozen into ``board_json`` when that phase closes (issue 21).
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Date, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.server.models.base import Base, Benchmark, utcnow

#: what a phase ranks: the whole split, or its public or private part (held-out splits only)
PHASE_PARTS = ("all", "public", "private")


class Challenge(Base):
    __tablename__ = "challenge"
    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmark.id", ondelete="CASCADE"),
                                              index=True)
    title: Mapped[str] = mapped_column(String(200))
    description_md: Mapped[str] = mapped_column(Text, default="")
    #: final selections a team may mark per benchmark and split (Kaggle: 2)
    max_selections: Mapped[int] = mapped_column(Integer, default=2, server_default="2")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: set when the reconciler finished it (private part revealed, results frozen)
    finalized_at: Mapped[datetime | None]
    results_json: Mapped[dict[str, Any] | None] = mapped_column(JSON)

    benchmark: Mapped[Benchmark] = relationship()
    phases: Mapped[list[ChallengePhase]] = relationship(
        back_populates="challenge", cascade="all, delete-orphan", passive_deletes=True,
        order_by="ChallengePhase.position")


class ChallengePhase(Base):
    __tablename__ = "challenge_phase"
    __table_args__ = (UniqueConstraint("challenge_id", "position"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    challenge_id: Mapped[int] = mapped_column(ForeignKey("challenge.id", ondelete="CASCADE"),
                                              index=True)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(80))
    split: Mapped[str] = mapped_column(String(64))
    part: Mapped[str] = mapped_column(String(16), default="all")
    opens_at: Mapped[datetime]
    closes_at: Mapped[datetime]
    #: per team and UTC day while the phase is open (None = the benchmark's daily quota)
    daily_quota: Mapped[int | None] = mapped_column(Integer)
    #: per team over the whole phase (None = no cap); counts scored work only, like quotas
    max_submissions: Mapped[int | None] = mapped_column(Integer)
    #: set by the reconciler when the phase has closed: its board, frozen (issue 21)
    frozen_at: Mapped[datetime | None]
    board_json: Mapped[dict[str, Any] | None] = mapped_column(JSON)

    challenge: Mapped[Challenge] = relationship(back_populates="phases")


class PhaseUsage(Base):
    """Submissions counted against a team's cap over one phase (``max_submissions``); taken
    and refunded with the daily quota, in the same transaction (issue 24)."""

    __tablename__ = "phase_usage"
    __table_args__ = (UniqueConstraint("team_id", "phase_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("team.id", ondelete="CASCADE"))
    phase_id: Mapped[int] = mapped_column(ForeignKey("challenge_phase.id", ondelete="CASCADE"))
    count: Mapped[int] = mapped_column(Integer, default=0)


class PhaseDayUsage(Base):
    """Challenge submissions counted against a team's daily quota in one phase (UTC day): the
    phase's ``daily_quota``, or the benchmark's daily quota on the phase's split when it has
    none. Non-challenge submissions count in `leaderboard.server.models.QuotaUsage` instead."""

    __tablename__ = "phase_day_usage"
    __table_args__ = (UniqueConstraint("team_id", "phase_id", "day"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("team.id", ondelete="CASCADE"))
    phase_id: Mapped[int] = mapped_column(ForeignKey("challenge_phase.id", ondelete="CASCADE"))
    day: Mapped[date] = mapped_column(Date)
    count: Mapped[int] = mapped_column(Integer, default=0)


class ChallengeEntrant(Base):
    """A team that entered a challenge (a button on the challenge's page, ``POST
    /api/v1/challenges/<key>/enter`` or ``leaderboard submit --challenge``): only entrants
    submit to it."""

    __tablename__ = "challenge_entrant"
    __table_args__ = (UniqueConstraint("challenge_id", "team_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    challenge_id: Mapped[int] = mapped_column(ForeignKey("challenge.id", ondelete="CASCADE"),
                                              index=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("team.id", ondelete="CASCADE"), index=True)
    entered_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"))
    entered_at: Mapped[datetime] = mapped_column(default=utcnow)
