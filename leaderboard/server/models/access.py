"""Access-control models: agreement versions, access requests (signatures + decisions), audit log.

Imported by `leaderboard.server.models` so that Alembic and ``create_all`` see them.

The audit table is append-only: no code path updates or deletes a row, and the database refuses
it too (triggers on PostgreSQL, for UPDATE, DELETE and TRUNCATE, and on SQLite, which has no
TRUNCATE). The trigger is created by the Alembic revision and,
for schemas built with ``Base.metadata.create_all`` (tests), by the DDL listeners below. The audit
table has no foreign keys on purpose: ``ON DELETE SET NULL`` from a deleted user would be an
UPDATE, which the trigger refuses; ``actor_email`` keeps who it was.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    DDL,
    JSON,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    event,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.server.models.base import Base, Benchmark, User, utcnow

#: access request states; only "approved" (for the current agreement version, unexpired) grants
REQUEST_STATUSES = ("pending", "approved", "denied", "revoked")

#: message of the append-only refusal (tests look for it)
APPEND_ONLY_MESSAGE = "audit_event is append-only"


class Agreement(Base):
    """One version of a benchmark's data-use agreement (version = sha256 of the text).

    Kept for every version ever signed, so a signature always points at the exact text the user
    accepted even after the pack (and its agreement) changed.
    """

    __tablename__ = "agreement"
    __table_args__ = (UniqueConstraint("benchmark_id", "version"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmark.id", ondelete="CASCADE"))
    version: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AccessRequest(Base):
    """A signature of one agreement version by one user, and the admin's decision on it.

    Signing again (a new agreement version, or after a denial) adds a new row; the user's latest
    row for a benchmark is the one the gate reads.
    """

    __tablename__ = "access_request"
    __table_args__ = (Index("ix_access_request_user_benchmark", "user_id", "benchmark_id"),
                      Index("ix_access_request_status", "status"))
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmark.id", ondelete="CASCADE"))
    agreement_version: Mapped[str] = mapped_column(String(64))
    full_name: Mapped[str] = mapped_column(String(200))
    affiliation: Mapped[str] = mapped_column(String(300))
    #: the signer's role (student, researcher, engineer...: what a reviewer asks, issue 35)
    role: Mapped[str] = mapped_column(String(200), default="", server_default="")
    intended_use: Mapped[str] = mapped_column(Text)
    #: answers to the benchmark's own ``request_fields`` (key -> text), None when it has none
    answers_json: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    accepted_at: Mapped[datetime] = mapped_column(default=utcnow)
    ip: Mapped[str] = mapped_column(String(64), default="")
    user_agent: Mapped[str] = mapped_column(String(500), default="")
    status: Mapped[str] = mapped_column(String(16), default="pending")
    decided_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"))
    decided_at: Mapped[datetime | None]
    reason: Mapped[str | None] = mapped_column(Text)  # shown to the user on deny / revoke
    expires_at: Mapped[datetime | None]

    user: Mapped[User] = relationship(foreign_keys=[user_id])
    benchmark: Mapped[Benchmark] = relationship()
    decider: Mapped[User | None] = relationship(foreign_keys=[decided_by])


class AuditEvent(Base):
    """One append-only audit record: who did what to which target, when and from where."""

    __tablename__ = "audit_event"
    __table_args__ = (Index("ix_audit_event_at", "at"), Index("ix_audit_event_action", "action"),
                      Index("ix_audit_event_actor_id", "actor_id"))
    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utcnow)
    actor_id: Mapped[int | None] = mapped_column(Integer)  # no FK: see the module docstring
    actor_email: Mapped[str] = mapped_column(String(254), default="")
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(300), default="")
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
    ip: Mapped[str] = mapped_column(String(64), default="")


# The same statements as the Alembic revision (which keeps its own frozen copy).
PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION audit_event_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{APPEND_ONLY_MESSAGE}' USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql"""
PG_TRIGGER = ("CREATE TRIGGER audit_event_append_only BEFORE UPDATE OR DELETE ON audit_event "
              "FOR EACH ROW EXECUTE FUNCTION audit_event_append_only()")
# row triggers do not fire for TRUNCATE: a statement trigger refuses it (revision 0008)
PG_TRUNCATE_TRIGGER = ("CREATE TRIGGER audit_event_no_truncate BEFORE TRUNCATE ON audit_event "
                       "FOR EACH STATEMENT EXECUTE FUNCTION audit_event_append_only()")
SQLITE_TRIGGERS = tuple(
    f"CREATE TRIGGER audit_event_no_{op.lower()} BEFORE {op} ON audit_event "
    f"BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY_MESSAGE}'); END"
    for op in ("UPDATE", "DELETE"))

_table = AuditEvent.__table__
event.listen(_table, "after_create", DDL(PG_FUNCTION).execute_if(dialect="postgresql"))
event.listen(_table, "after_create", DDL(PG_TRIGGER).execute_if(dialect="postgresql"))
event.listen(_table, "after_create", DDL(PG_TRUNCATE_TRIGGER).execute_if(dialect="postgresql"))
for _stmt in SQLITE_TRIGGERS:
    event.listen(_table, "after_create", DDL(_stmt).execute_if(dialect="sqlite"))
