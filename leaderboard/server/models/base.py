"""The database schema (SQLAlchemy 2.x typed models).

The database is the source of truth for every submission and its status; queues only carry work.
Models hold no session and never commit: the request, command or job that owns the session does.
The schema changes only through Alembic revisions under ``migrations/``.
"""
from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship, validates
from sqlalchemy.types import TypeDecorator

from leaderboard.server.address_keys import address_key

#: submission statuses, in the order a healthy submission goes through them
STATUSES = ("received", "queued", "scoring", "scored", "failed")
#: statuses a submission can get stuck in when a worker dies (the reconciler looks at these)
IN_FLIGHT = ("received", "queued", "scoring")
PARTS = ("all", "public", "private")
KINDS = ("predictions", "container")


def utcnow() -> datetime:
    """Timezone-aware UTC now (a callable default: evaluated per row, not at import)."""
    return datetime.now(timezone.utc)


class TZDateTime(TypeDecorator):
    """A timezone-aware datetime on every backend (SQLite drops tzinfo; we put it back)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is not None and value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: use timezone-aware UTC times")
        return value

    def process_result_value(self, value, dialect):
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value


class Base(DeclarativeBase):
    # Named constraints so Alembic can alter/drop them on every backend (SQLite batch mode).
    metadata = MetaData(naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    })
    type_annotation_map = {datetime: TZDateTime(), dict[str, Any]: JSON, list[Any]: JSON}


class Team(Base):
    __tablename__ = "team"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80), unique=True)
    invite_code: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    members: Mapped[list[User]] = relationship(back_populates="team")

    @property
    def captain(self) -> User | None:
        """The member flagged ``is_captain`` (None for a team without one)."""
        return next((m for m in self.members if m.is_captain), None)


class User(Base):
    __tablename__ = "user_account"  # "user" is reserved in PostgreSQL
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(254), unique=True)
    display_name: Mapped[str] = mapped_column(String(80))
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    is_active: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    team_id: Mapped[int | None] = mapped_column(ForeignKey("team.id", ondelete="SET NULL"),
                                                index=True)
    #: the normalised address (`leaderboard.server.address_keys.address_key`), kept with
    #: ``email`` by `_keep_key`: look-alike accounts share it (issue 35)
    email_key: Mapped[str] = mapped_column(String(254), default="", server_default="",
                                           index=True)
    #: accounts an administrator marked as one person (`models.identity.Person`); quotas on
    #: held-out splits count across them. No foreign key: adding one would make SQLite rebuild
    #: this table (whose drop cascades), and person rows are never deleted
    person_id: Mapped[int | None] = mapped_column(Integer, index=True)
    #: the team's captain: invites, hands the role on, cannot leave while others stay (one per
    #: team, kept by `leaderboard.server.services.teams`; issue 35)
    is_captain: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    #: when the address was proven by following a verification link (issue 35); None = not
    #: yet, or changed since
    email_verified_at: Mapped[datetime | None]

    team: Mapped[Team | None] = relationship(back_populates="members")

    @validates("email")
    def _keep_key(self, _name: str, value: str) -> str:
        self.email_key = address_key(value or "")
        return value

    # Flask-Login protocol (kept here so the web layer needs no wrapper class)
    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def is_anonymous(self) -> bool:
        return False

    def get_id(self) -> str:
        """What Flask-Login keeps in the session and remember-me cookies: the key of this
        login's server-side session (`leaderboard.server.services.sessions` sets ``login_key``),
        never the user id, so that revoking that row ends both cookies."""
        key = getattr(self, "login_key", None)
        if not key:
            raise RuntimeError("log in through leaderboard.server.services.sessions.start")
        return key


class ApiToken(Base):
    __tablename__ = "api_token"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"),
                                         index=True)
    name: Mapped[str] = mapped_column(String(80))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 hex
    prefix: Mapped[str] = mapped_column(String(16))  # shown in lists so users can tell them apart
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]

    user: Mapped[User] = relationship()


def _family_default(context) -> str:
    """A row made without ``family`` (release 1 of a pack without ``release:``) is its own
    family."""
    return context.get_current_parameters()["key"]


class Benchmark(Base):
    """One release of a benchmark (issue 37).

    ``family`` is the benchmark's public name (the pack's ``key``); ``release`` its number (the
    pack's ``release:``, 1 for packs that do not say). Release 1's row has ``key == family`` (so
    every key stored before releases existed still names its row); release N >= 2 has key
    ``<family>-v<N>`` (`leaderboard.server.services.releases.release_key`). Each release keeps its
    own pack, labels, submissions and boards; importing a later release never changes an older
    one. ``released_at``: when the release was imported (the re-run campaign starts then).
    """

    __tablename__ = "benchmark"
    #: a unique index, not a constraint: SQLite adds it without rebuilding the table (0022)
    __table_args__ = (Index("uq_benchmark_family", "family", "release", unique=True),)
    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    family: Mapped[str] = mapped_column(String(64), index=True, default=_family_default,
                                        server_default="")
    release: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    released_at: Mapped[datetime | None]
    title: Mapped[str] = mapped_column(String(200))
    version: Mapped[str] = mapped_column(String(64))
    pack_path: Mapped[str] = mapped_column(Text)
    #: {"tasks": [{key, kind, modalities, headline, title, secondary}], "modalities": [...],
    #:  "splits": [...]}
    meta_json: Mapped[dict[str, Any]] = mapped_column(default=dict)
    description_md: Mapped[str] = mapped_column(Text, default="")
    agreement_md: Mapped[str] = mapped_column(Text, default="")
    agreement_version: Mapped[str] = mapped_column(String(64), default="")
    submissions_open: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    private_revealed: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    daily_quota: Mapped[int | None] = mapped_column(Integer)  # None = the configured default
    #: held-out submissions (uploads and containers) need the submitter's approved agreement
    agreement_gates_submissions: Mapped[bool] = mapped_column(Boolean, default=True,
                                                              server_default="1")
    official_judge: Mapped[str | None] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    label_sets: Mapped[list[LabelSet]] = relationship(back_populates="benchmark",
                                                      cascade="all, delete-orphan")


class LabelSet(Base):
    """Hidden labels of one split: Fernet ciphertext of the compiled label table."""

    __tablename__ = "label_set"
    __table_args__ = (UniqueConstraint("benchmark_id", "split"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmark.id", ondelete="CASCADE"))
    split: Mapped[str] = mapped_column(String(64))
    ciphertext: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    benchmark: Mapped[Benchmark] = relationship(back_populates="label_sets")


class Submission(Base):
    __tablename__ = "submission"
    __table_args__ = (Index("ix_submission_benchmark_split_status", "benchmark_id", "split",
                            "status"),
                      Index("ix_submission_status_deadline", "status", "deadline_at"),
                      # the admin overview: submissions per day, recent failures (issue 21)
                      Index("ix_submission_created_at", "created_at"),
                      Index("ix_submission_status_created", "status", "created_at"),
                      Index("uq_submission_rerun_of_id", "rerun_of_id", "benchmark_id", "split",
                            unique=True))
    id: Mapped[int] = mapped_column(primary_key=True)
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmark.id"), index=True)
    split: Mapped[str] = mapped_column(String(64))
    team_id: Mapped[int | None] = mapped_column(ForeignKey("team.id", ondelete="SET NULL"),
                                                index=True)
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), index=True)
    kind: Mapped[str] = mapped_column(String(16), default="predictions")
    method_name: Mapped[str] = mapped_column(String(120))
    description: Mapped[str] = mapped_column(Text, default="")
    paper_url: Mapped[str] = mapped_column(String(500), default="")
    code_url: Mapped[str] = mapped_column(String(500), default="")
    is_public: Mapped[bool] = mapped_column(Boolean, default=True)
    #: active_history: a change always knows the old value (`leaderboard.server.ops_counters`
    #: counts moves out of a finished status even when the row was expired before the change)
    status: Mapped[str] = mapped_column(String(16), default="received", active_history=True)
    failure_reason: Mapped[str | None] = mapped_column(Text)
    failure_detail: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    file_path: Mapped[str] = mapped_column(Text, default="")
    file_sha256: Mapped[str] = mapped_column(String(64), default="", index=True)
    file_size: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    queued_at: Mapped[datetime | None]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    deadline_at: Mapped[datetime | None]
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    job_id: Mapped[str | None] = mapped_column(String(64))
    hidden: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    #: the admin's reason for hiding it, shown to its team (None when not hidden)
    hidden_reason: Mapped[str | None] = mapped_column(Text)
    #: the challenge phase this submission was made to (None: not a challenge submission; the
    #: challenge's rules, caps and phase boards count only these); a refund gives its units back
    #: to this phase even if the phase's dates were edited since
    phase_id: Mapped[int | None] = mapped_column(
        ForeignKey("challenge_phase.id", ondelete="SET NULL"), index=True)
    disqualified_reason: Mapped[str | None] = mapped_column(Text)
    is_baseline: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    baseline_kind: Mapped[str | None] = mapped_column(String(32))
    selected: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    counts_toward_quota: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    #: ScoreResult notes and pending judge metrics (shown on the submission page)
    notes_json: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    #: issue 37: the team lets the platform re-run this container on the benchmark's later
    #: releases (a choice on the submit form, default on)
    allow_rerun: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    #: issue 37: this submission is the platform's re-run of that one on a later release (same
    #: team, method and image); at most one per (original, release): the unique constraint
    #: ``uq_submission_rerun_of_id`` makes a second insert fail, whatever died mid-job
    rerun_of_id: Mapped[int | None] = mapped_column(
        ForeignKey("submission.id", ondelete="SET NULL"), index=True)
    #: issue 37: the container's image tarball (relative to DATA_DIR), kept after a clean run
    #: that exited 0 when ``allow_rerun`` is on, so the platform can re-run the same image on a
    #: later release without asking the team for it again (`leaderboard.server.services.reruns`)
    image_path: Mapped[str | None] = mapped_column(Text)

    benchmark: Mapped[Benchmark] = relationship()
    team: Mapped[Team | None] = relationship()
    user: Mapped[User | None] = relationship()
    scores: Mapped[list[Score]] = relationship(back_populates="submission",
                                               cascade="all, delete-orphan",
                                               passive_deletes=True)


class Score(Base):
    """One metric record of one submission on one part ("all", "public", "private")."""

    __tablename__ = "score"
    __table_args__ = (Index("ix_score_board", "task", "metric", "slice_key", "part"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submission.id", ondelete="CASCADE"), index=True)
    part: Mapped[str] = mapped_column(String(16))
    task: Mapped[str] = mapped_column(String(64))
    metric: Mapped[str] = mapped_column(String(64))
    slice_key: Mapped[str] = mapped_column(String(400), default="")  # "" = overall
    slice_json: Mapped[dict[str, Any]] = mapped_column(default=dict)
    value: Mapped[float | None] = mapped_column(Float)  # None = n/a, ranks last
    ci_low: Mapped[float | None] = mapped_column(Float)
    ci_high: Mapped[float | None] = mapped_column(Float)
    n: Mapped[int] = mapped_column(Integer, default=0)
    judge: Mapped[str | None] = mapped_column(String(80))
    metric_version: Mapped[str] = mapped_column(String(16), default="1")

    submission: Mapped[Submission] = relationship(back_populates="scores")


class QuotaUsage(Base):
    """Submissions counted against a team's daily quota on one benchmark and split (UTC day)."""

    __tablename__ = "quota_usage"
    __table_args__ = (UniqueConstraint("team_id", "benchmark_id", "split", "day"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("team.id", ondelete="CASCADE"))
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmark.id", ondelete="CASCADE"))
    split: Mapped[str] = mapped_column(String(64), server_default="test")
    day: Mapped[date] = mapped_column(Date)
    count: Mapped[int] = mapped_column(Integer, default=0)


class Curve(Base):
    """ROC or PR points of one submission on one part, task and slice (the submission page plots).

    Written by the scoring job from ``ScoreResult.curves`` via `leaderboard.server.services.curves.store_curves`;
    curves cannot be recomputed later because the labels stay secret. ``points_json`` is
    ``{"x": [...], "y": [...]}`` in [0, 1] (ROC: FPR, TPR; PR: recall, precision).
    """

    __tablename__ = "curve"
    __table_args__ = (UniqueConstraint("submission_id", "part", "task", "slice_key", "kind"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submission.id", ondelete="CASCADE"), index=True)
    part: Mapped[str] = mapped_column(String(16))
    task: Mapped[str] = mapped_column(String(64))
    slice_key: Mapped[str] = mapped_column(String(400), default="")  # "" = overall
    kind: Mapped[str] = mapped_column(String(8))  # "roc" | "pr"
    points_json: Mapped[dict[str, Any]] = mapped_column(default=dict)
