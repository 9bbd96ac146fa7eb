"""Exactly-once uploads (issue 17): idempotency keys, one per (user, key), naming the submission.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'upload_key',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('key', sa.String(length=128), nullable=False),
        sa.Column('submission_id', sa.Integer(), nullable=False),
        sa.Column('benchmark_id', sa.Integer(), nullable=False),
        sa.Column('split', sa.String(length=64), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('sha256', sa.String(length=64), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'],
                                name=op.f('fk_upload_key_benchmark_id_benchmark'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['submission_id'], ['submission.id'],
                                name=op.f('fk_upload_key_submission_id_submission'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['user_account.id'],
                                name=op.f('fk_upload_key_user_id_user_account'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_upload_key')),
        sa.UniqueConstraint('user_id', 'key', name=op.f('uq_upload_key_user_id')),
    )
    op.create_index(op.f('ix_upload_key_submission_id'), 'upload_key', ['submission_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_upload_key_submission_id'), table_name='upload_key')
    op.drop_table('upload_key')
