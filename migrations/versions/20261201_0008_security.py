"""Security (issue 13): server-side login sessions; the audit log cannot be truncated.

* ``login_session``: one row per login (`leaderboard.server.models.sessions`); the session and
  remember-me cookies carry its key, so logout, a password change or a disabled account end them.
* PostgreSQL: a statement trigger refuses ``TRUNCATE audit_event`` (the row triggers of 0003 do
  not fire for it), for every role, the owner included. Together with the deploy guide's roles
  (the application connects as a role that owns nothing and holds only SELECT and INSERT on
  ``audit_event``: ``python -m leaderboard db-grant-app``), the application's role can neither
  truncate, alter, drop nor disable the triggers of the audit table.

Deploying this signs every browser out once: the cookies of earlier logins carry user ids, not
session keys.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

# frozen here on purpose (a revision must not change when application code does);
# leaderboard.server.models.access holds the same statement for schemas built with create_all
PG_TRUNCATE_TRIGGER = ("CREATE TRIGGER audit_event_no_truncate BEFORE TRUNCATE ON audit_event "
                       "FOR EACH STATEMENT EXECUTE FUNCTION audit_event_append_only()")


def upgrade() -> None:
    op.create_table('login_session',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('remember', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_seen_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ip', sa.String(length=64), nullable=False),
    sa.Column('user_agent', sa.String(length=300), nullable=False),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revoked_reason', sa.String(length=32), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_login_session_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_login_session')),
    sa.UniqueConstraint('key_hash', name=op.f('uq_login_session_key_hash'))
    )
    op.create_index('ix_login_session_user_revoked', 'login_session', ['user_id', 'revoked_at'], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_TRUNCATE_TRIGGER)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_event_no_truncate ON audit_event")
    op.drop_index('ix_login_session_user_revoked', table_name='login_session')
    op.drop_table('login_session')
