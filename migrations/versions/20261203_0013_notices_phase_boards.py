"""Notices on the team's pages, each challenge phase's frozen board, and the two submission
indexes the admin overview reads (per day; recent failures) (issue 21).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03 14:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('notice',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('team_id', sa.Integer(), nullable=True),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('subject', sa.String(length=120), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('dismissed_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'], name=op.f('fk_notice_team_id_team'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_notice_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notice'))
    )
    with op.batch_alter_table('notice', schema=None) as batch_op:
        batch_op.create_index('ix_notice_team_dismissed', ['team_id', 'dismissed_at'], unique=False)
        batch_op.create_index('ix_notice_user_dismissed', ['user_id', 'dismissed_at'], unique=False)
    with op.batch_alter_table('challenge_phase', schema=None) as batch_op:
        batch_op.add_column(sa.Column('frozen_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('board_json', sa.JSON(), nullable=True))
    with op.batch_alter_table('submission', schema=None) as batch_op:
        batch_op.create_index('ix_submission_created_at', ['created_at'], unique=False)
        batch_op.create_index('ix_submission_status_created', ['status', 'created_at'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('submission', schema=None) as batch_op:
        batch_op.drop_index('ix_submission_status_created')
        batch_op.drop_index('ix_submission_created_at')
    with op.batch_alter_table('challenge_phase', schema=None) as batch_op:
        batch_op.drop_column('board_json')
        batch_op.drop_column('frozen_at')
    with op.batch_alter_table('notice', schema=None) as batch_op:
        batch_op.drop_index('ix_notice_user_dismissed')
        batch_op.drop_index('ix_notice_team_dismissed')
    op.drop_table('notice')
