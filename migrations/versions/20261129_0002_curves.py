"""Curves: stored ROC / PR points per submission, part, task and slice (submission page plots).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 12:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('curve',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('submission_id', sa.Integer(), nullable=False),
    sa.Column('part', sa.String(length=16), nullable=False),
    sa.Column('task', sa.String(length=64), nullable=False),
    sa.Column('slice_key', sa.String(length=400), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('points_json', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['submission_id'], ['submission.id'], name=op.f('fk_curve_submission_id_submission'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_curve')),
    sa.UniqueConstraint('submission_id', 'part', 'task', 'slice_key', 'kind', name=op.f('uq_curve_submission_id'))
    )
    with op.batch_alter_table('curve', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_curve_submission_id'), ['submission_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('curve', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_curve_submission_id'))

    op.drop_table('curve')
