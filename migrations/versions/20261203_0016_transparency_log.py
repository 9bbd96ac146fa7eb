"""The transparency log (issue 27): signed receipts in an append-only Merkle-tree log.

``log_entry`` (one receipt per row, ``idx`` from 0 without gaps), ``log_node`` (the roots of the
tree's perfect subtrees, so that proofs read O(log n) rows), both append-only: triggers refuse
UPDATE, DELETE and TRUNCATE on PostgreSQL (UPDATE and DELETE on SQLite), and ``db-grant-app``
grants the application role SELECT and INSERT only. ``receipt_state`` keeps each logged
submission's last receipt index, state digest and commitment salt (mutable, never served).
Statements are frozen here on purpose (see revision 0003).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03 14:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None

MESSAGE = "the transparency log is append-only"
PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION transparency_log_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql"""
TABLES = ("log_entry", "log_node")


def _pg(table: str) -> tuple[str, str]:
    return (f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION transparency_log_append_only()",
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION transparency_log_append_only()")


def _sqlite(table: str) -> tuple[str, ...]:
    return tuple(f"CREATE TRIGGER {table}_no_{o.lower()} BEFORE {o} ON {table} "
                 f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END" for o in ("UPDATE", "DELETE"))


def upgrade() -> None:
    op.create_table('log_entry',
    sa.Column('idx', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('data', sa.Text(), nullable=False),
    sa.Column('event', sa.String(length=32), nullable=False),
    sa.Column('benchmark_key', sa.String(length=64), nullable=False),
    sa.Column('submission_id', sa.BigInteger(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('idx', name=op.f('pk_log_entry'))
    )
    op.create_index('ix_log_entry_submission_id', 'log_entry', ['submission_id'], unique=False)
    op.create_table('log_node',
    sa.Column('key', sa.BigInteger(), autoincrement=False, nullable=False),
    sa.Column('hash', sa.LargeBinary(length=32), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_log_node'))
    )
    op.create_table('receipt_state',
    sa.Column('submission_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('last_index', sa.BigInteger(), nullable=True),
    sa.Column('state_digest', sa.String(length=80), nullable=False),
    sa.Column('flags_json', sa.JSON(), nullable=False),
    sa.Column('salt', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['submission_id'], ['submission.id'], name=op.f('fk_receipt_state_submission_id_submission'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('submission_id', name=op.f('pk_receipt_state'))
    )
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute(PG_FUNCTION)
        for table in TABLES:
            for stmt in _pg(table):
                op.execute(stmt)
    elif dialect == "sqlite":
        for table in TABLES:
            for stmt in _sqlite(table):
                op.execute(stmt)


def downgrade() -> None:
    op.drop_table('receipt_state')
    op.drop_table('log_node')
    op.drop_index('ix_log_entry_submission_id', table_name='log_entry')
    op.drop_table('log_entry')
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS transparency_log_append_only()")
