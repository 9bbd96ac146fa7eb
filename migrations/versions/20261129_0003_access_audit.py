"""Access control: agreement versions, access requests, and the append-only audit log.

The audit table gets a trigger refusing UPDATE and DELETE (PostgreSQL: a plpgsql function
raising; SQLite: RAISE(ABORT) triggers). Statements are frozen here on purpose (a revision must
not change when application code does); `leaderboard.server.models.access` holds the same ones for
schemas built with ``create_all``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 12:30:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

MESSAGE = "audit_event is append-only"
PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION audit_event_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql"""
PG_TRIGGER = ("CREATE TRIGGER audit_event_append_only BEFORE UPDATE OR DELETE ON audit_event "
              "FOR EACH ROW EXECUTE FUNCTION audit_event_append_only()")
SQLITE_TRIGGERS = tuple(
    f"CREATE TRIGGER audit_event_no_{op_.lower()} BEFORE {op_} ON audit_event "
    f"BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END"
    for op_ in ("UPDATE", "DELETE"))


def upgrade() -> None:
    op.create_table('agreement',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('version', sa.String(length=64), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_agreement_benchmark_id_benchmark'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_agreement')),
    sa.UniqueConstraint('benchmark_id', 'version', name=op.f('uq_agreement_benchmark_id'))
    )
    op.create_table('access_request',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('agreement_version', sa.String(length=64), nullable=False),
    sa.Column('full_name', sa.String(length=200), nullable=False),
    sa.Column('affiliation', sa.String(length=300), nullable=False),
    sa.Column('intended_use', sa.Text(), nullable=False),
    sa.Column('accepted_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ip', sa.String(length=64), nullable=False),
    sa.Column('user_agent', sa.String(length=500), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('decided_by', sa.Integer(), nullable=True),
    sa.Column('decided_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_access_request_benchmark_id_benchmark'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['decided_by'], ['user_account.id'], name=op.f('fk_access_request_decided_by_user_account'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_access_request_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_access_request'))
    )
    op.create_index('ix_access_request_status', 'access_request', ['status'], unique=False)
    op.create_index('ix_access_request_user_benchmark', 'access_request', ['user_id', 'benchmark_id'], unique=False)
    op.create_table('audit_event',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('actor_id', sa.Integer(), nullable=True),
    sa.Column('actor_email', sa.String(length=254), nullable=False),
    sa.Column('action', sa.String(length=64), nullable=False),
    sa.Column('target', sa.String(length=300), nullable=False),
    sa.Column('detail', sa.JSON(), nullable=False),
    sa.Column('ip', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_event'))
    )
    op.create_index('ix_audit_event_action', 'audit_event', ['action'], unique=False)
    op.create_index('ix_audit_event_actor_id', 'audit_event', ['actor_id'], unique=False)
    op.create_index('ix_audit_event_at', 'audit_event', ['at'], unique=False)
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute(PG_FUNCTION)
        op.execute(PG_TRIGGER)
    elif dialect == "sqlite":
        for stmt in SQLITE_TRIGGERS:
            op.execute(stmt)


def downgrade() -> None:
    # Dropping the table drops its triggers; the PostgreSQL function goes separately.
    op.drop_index('ix_audit_event_at', table_name='audit_event')
    op.drop_index('ix_audit_event_actor_id', table_name='audit_event')
    op.drop_index('ix_audit_event_action', table_name='audit_event')
    op.drop_table('audit_event')
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS audit_event_append_only()")
    op.drop_index('ix_access_request_user_benchmark', table_name='access_request')
    op.drop_index('ix_access_request_status', table_name='access_request')
    op.drop_table('access_request')
    op.drop_table('agreement')
