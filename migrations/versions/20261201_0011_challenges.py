"""Challenges with phases (issue 12): challenges, their phases (split, part, UTC window,
per-phase quotas) and the number of final selections a team may mark.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('challenge',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('description_md', sa.Text(), nullable=False),
    sa.Column('max_selections', sa.Integer(), server_default='2', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finalized_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('results_json', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_challenge_benchmark_id_benchmark'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_challenge')),
    sa.UniqueConstraint('key', name=op.f('uq_challenge_key'))
    )
    with op.batch_alter_table('challenge', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_challenge_benchmark_id'), ['benchmark_id'], unique=False)

    op.create_table('challenge_phase',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('challenge_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('split', sa.String(length=64), nullable=False),
    sa.Column('part', sa.String(length=16), nullable=False),
    sa.Column('opens_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('closes_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('daily_quota', sa.Integer(), nullable=True),
    sa.Column('max_submissions', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['challenge_id'], ['challenge.id'], name=op.f('fk_challenge_phase_challenge_id_challenge'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_challenge_phase')),
    sa.UniqueConstraint('challenge_id', 'position', name=op.f('uq_challenge_phase_challenge_id'))
    )
    with op.batch_alter_table('challenge_phase', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_challenge_phase_challenge_id'), ['challenge_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('challenge_phase', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_challenge_phase_challenge_id'))
    op.drop_table('challenge_phase')
    with op.batch_alter_table('challenge', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_challenge_benchmark_id'))
    op.drop_table('challenge')
