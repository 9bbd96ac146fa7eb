"""Container runs: one row per attempt at running a submission's detector image (issue 5).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 12:45:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('container_run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('submission_id', sa.Integer(), nullable=False),
    sa.Column('image_id', sa.String(length=80), nullable=False),
    sa.Column('image_size', sa.BigInteger(), nullable=True),
    sa.Column('limits_json', sa.JSON(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('duration_s', sa.Float(), nullable=True),
    sa.Column('peak_memory_bytes', sa.BigInteger(), nullable=True),
    sa.Column('gpu', sa.Integer(), nullable=True),
    sa.Column('exit_code', sa.Integer(), nullable=True),
    sa.Column('reason', sa.String(length=32), nullable=True),
    sa.Column('log_head', sa.Text(), nullable=False),
    sa.Column('log_tail', sa.Text(), nullable=False),
    sa.Column('log_cut', sa.Boolean(), server_default='0', nullable=False),
    sa.ForeignKeyConstraint(['submission_id'], ['submission.id'], name=op.f('fk_container_run_submission_id_submission'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_container_run'))
    )
    with op.batch_alter_table('container_run', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_container_run_image_id'), ['image_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_container_run_submission_id'), ['submission_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('container_run', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_container_run_submission_id'))
        batch_op.drop_index(batch_op.f('ix_container_run_image_id'))

    op.drop_table('container_run')
