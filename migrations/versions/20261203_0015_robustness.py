"""The robustness track (issue 26): per-benchmark budgets, builds of degraded copies, the
degraded run of each container submission and its records.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03 13:37:58.446991
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('robustness_budget',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('enabled', sa.Boolean(), server_default='1', nullable=False),
    sa.Column('max_conditions', sa.Integer(), server_default='25', nullable=False),
    sa.Column('max_items', sa.Integer(), server_default='200', nullable=False),
    sa.Column('wall_s', sa.Float(), server_default='3600', nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_robustness_budget_benchmark_id_benchmark'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_robustness_budget')),
    sa.UniqueConstraint('benchmark_id', name=op.f('uq_robustness_budget_benchmark_id'))
    )
    op.create_table('robustness_build',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('split', sa.String(length=64), nullable=False),
    sa.Column('pack_version', sa.String(length=64), nullable=False),
    sa.Column('cache_key', sa.String(length=64), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('done', sa.Integer(), server_default='0', nullable=False),
    sa.Column('total', sa.Integer(), server_default='0', nullable=False),
    sa.Column('path', sa.Text(), nullable=False),
    sa.Column('method_json', sa.JSON(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('reused', sa.Boolean(), server_default='0', nullable=False),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_robustness_build_benchmark_id_benchmark'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_robustness_build')),
    sa.UniqueConstraint('benchmark_id', 'split', 'cache_key', name=op.f('uq_robustness_build_benchmark_id'))
    )
    with op.batch_alter_table('robustness_build', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_robustness_build_benchmark_id'), ['benchmark_id'], unique=False)

    op.create_table('robustness_run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('submission_id', sa.Integer(), nullable=False),
    sa.Column('build_id', sa.Integer(), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('conditions', sa.Integer(), server_default='0', nullable=False),
    sa.Column('items', sa.Integer(), server_default='0', nullable=False),
    sa.Column('clean_duration_s', sa.Float(), nullable=True),
    sa.Column('duration_s', sa.Float(), nullable=True),
    sa.Column('method_json', sa.JSON(), nullable=False),
    sa.Column('notes_json', sa.JSON(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['build_id'], ['robustness_build.id'], name=op.f('fk_robustness_run_build_id_robustness_build'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['submission_id'], ['submission.id'], name=op.f('fk_robustness_run_submission_id_submission'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_robustness_run')),
    sa.UniqueConstraint('submission_id', name=op.f('uq_robustness_run_submission_id'))
    )
    op.create_table('robustness_score',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('submission_id', sa.Integer(), nullable=False),
    sa.Column('task', sa.String(length=64), nullable=False),
    sa.Column('metric', sa.String(length=64), nullable=False),
    sa.Column('slice_key', sa.String(length=400), nullable=False),
    sa.Column('slice_json', sa.JSON(), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('ci_low', sa.Float(), nullable=True),
    sa.Column('ci_high', sa.Float(), nullable=True),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('metric_version', sa.String(length=16), nullable=False),
    sa.ForeignKeyConstraint(['submission_id'], ['submission.id'], name=op.f('fk_robustness_score_submission_id_submission'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_robustness_score'))
    )
    with op.batch_alter_table('robustness_score', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_robustness_score_submission_id'), ['submission_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('robustness_score', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_robustness_score_submission_id'))

    op.drop_table('robustness_score')
    op.drop_table('robustness_run')
    with op.batch_alter_table('robustness_build', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_robustness_build_benchmark_id'))

    op.drop_table('robustness_build')
    op.drop_table('robustness_budget')
