"""The transparency log (issue 27): its entries, its Merkle tree's stored nodes, and each logged
submission's receipt state.

* `LogEntry`: one signed receipt per row, ``idx`` 0, 1, 2, ... with no gap (the appender holds
  the log's lock; ``idx`` is the primary key, so two appenders can never both take an index).
  ``data`` is the receipt's canonical JSON, the leaf's data byte for byte.
* `LogNode`: the roots of the tree's perfect subtrees (`leaderboard.core.transparency.merkle`),
  keyed by ``merkle.node_key(level, index)``; level 0 holds the leaf hashes. Written once when
  complete; proofs read O(log n) of them by primary key.
* Both tables are append-only: triggers refuse UPDATE, DELETE and TRUNCATE (PostgreSQL) or
  UPDATE and DELETE (SQLite), created here for ``create_all`` schemas and by revision 0016;
  `leaderboard.server.dbroles` grants the application role SELECT and INSERT only. No foreign
  keys: deleting a submission must not touch its receipts.
* `ReceiptState`: per logged submission, its last receipt's index, the digest of the state it
  recorded (a commit that changes nothing a receipt shows issues none), the flags that name the
  next event, and the salt of its records commitment (secret until nothing is sealed: it is
  never in a public receipt before the reveal). Mutable, and never served.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import DDL, JSON, BigInteger, ForeignKey, Index, LargeBinary, String, Text, event
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.server.models.base import Base, utcnow

#: message of the append-only refusal (tests look for it)
LOG_APPEND_ONLY_MESSAGE = "the transparency log is append-only"
LOG_TABLES = ("log_entry", "log_node")


class LogEntry(Base):
    __tablename__ = "log_entry"
    __table_args__ = (Index("ix_log_entry_submission_id", "submission_id"),)
    idx: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    data: Mapped[str] = mapped_column(Text)
    event: Mapped[str] = mapped_column(String(32))
    benchmark_key: Mapped[str] = mapped_column(String(64))
    submission_id: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LogNode(Base):
    __tablename__ = "log_node"
    key: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    hash: Mapped[bytes] = mapped_column(LargeBinary(32))


class ReceiptState(Base):
    __tablename__ = "receipt_state"
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submission.id", ondelete="CASCADE"), primary_key=True, autoincrement=False)
    last_index: Mapped[int | None] = mapped_column(BigInteger)
    state_digest: Mapped[str] = mapped_column(String(80), default="")
    flags_json: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    salt: Mapped[str] = mapped_column(String(64))


# The same statements as revision 0016 (which keeps its own frozen copy).
PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION transparency_log_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{LOG_APPEND_ONLY_MESSAGE}' USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql"""


def pg_triggers(table: str) -> tuple[str, str]:
    return (f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION transparency_log_append_only()",
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION transparency_log_append_only()")


def sqlite_triggers(table: str) -> tuple[str, ...]:
    return tuple(f"CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table} "
                 f"BEGIN SELECT RAISE(ABORT, '{LOG_APPEND_ONLY_MESSAGE}'); END"
                 for op in ("UPDATE", "DELETE"))


for _model in (LogEntry, LogNode):
    _table = _model.__table__
    event.listen(_table, "after_create", DDL(PG_FUNCTION).execute_if(dialect="postgresql"))
    for _stmt in pg_triggers(_table.name):
        event.listen(_table, "after_create", DDL(_stmt).execute_if(dialect="postgresql"))
    for _stmt in sqlite_triggers(_table.name):
        event.listen(_table, "after_create", DDL(_stmt).execute_if(dialect="sqlite"))
