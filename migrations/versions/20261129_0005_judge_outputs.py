"""Judge output cache: one row per (item, response sha256, judge identity, kind).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29 13:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('judge_output',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.String(length=200), nullable=False),
    sa.Column('response_sha256', sa.String(length=64), nullable=False),
    sa.Column('judge', sa.String(length=80), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('value', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_judge_output')),
    sa.UniqueConstraint('item_id', 'response_sha256', 'judge', 'kind',
                        name=op.f('uq_judge_output_item_id'))
    )


def downgrade() -> None:
    op.drop_table('judge_output')
