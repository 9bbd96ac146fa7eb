"""Initial schema: accounts, teams, tokens, benchmarks, label sets, submissions, scores, quotas.

Revision ID: 0001
Revises: 
Create Date: 2026-11-29 11:51:41.236046
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table('benchmark',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('version', sa.String(length=64), nullable=False),
    sa.Column('pack_path', sa.Text(), nullable=False),
    sa.Column('meta_json', sa.JSON(), nullable=False),
    sa.Column('description_md', sa.Text(), nullable=False),
    sa.Column('agreement_md', sa.Text(), nullable=False),
    sa.Column('agreement_version', sa.String(length=64), nullable=False),
    sa.Column('submissions_open', sa.Boolean(), server_default='1', nullable=False),
    sa.Column('private_revealed', sa.Boolean(), server_default='0', nullable=False),
    sa.Column('daily_quota', sa.Integer(), nullable=True),
    sa.Column('official_judge', sa.String(length=80), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_benchmark')),
    sa.UniqueConstraint('key', name=op.f('uq_benchmark_key'))
    )
    op.create_table('team',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('invite_code', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_team')),
    sa.UniqueConstraint('invite_code', name=op.f('uq_team_invite_code')),
    sa.UniqueConstraint('name', name=op.f('uq_team_name'))
    )
    op.create_table('label_set',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('split', sa.String(length=64), nullable=False),
    sa.Column('ciphertext', sa.LargeBinary(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_label_set_benchmark_id_benchmark'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_label_set')),
    sa.UniqueConstraint('benchmark_id', 'split', name=op.f('uq_label_set_benchmark_id'))
    )
    op.create_table('quota_usage',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_quota_usage_benchmark_id_benchmark'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'], name=op.f('fk_quota_usage_team_id_team'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_quota_usage')),
    sa.UniqueConstraint('team_id', 'benchmark_id', 'day', name=op.f('uq_quota_usage_team_id'))
    )
    op.create_table('user_account',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('email', sa.String(length=254), nullable=False),
    sa.Column('display_name', sa.String(length=80), nullable=False),
    sa.Column('password_hash', sa.String(length=255), nullable=False),
    sa.Column('is_admin', sa.Boolean(), server_default='0', nullable=False),
    sa.Column('is_active', sa.Boolean(), server_default='1', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'], name=op.f('fk_user_account_team_id_team'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_user_account')),
    sa.UniqueConstraint('email', name=op.f('uq_user_account_email'))
    )
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_user_account_team_id'), ['team_id'], unique=False)

    op.create_table('api_token',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('prefix', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_api_token_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_token')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_token_token_hash'))
    )
    with op.batch_alter_table('api_token', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_token_user_id'), ['user_id'], unique=False)

    op.create_table('submission',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('split', sa.String(length=64), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=True),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('method_name', sa.String(length=120), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('paper_url', sa.String(length=500), nullable=False),
    sa.Column('code_url', sa.String(length=500), nullable=False),
    sa.Column('is_public', sa.Boolean(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('failure_reason', sa.Text(), nullable=True),
    sa.Column('failure_detail', sa.JSON(), nullable=True),
    sa.Column('file_path', sa.Text(), nullable=False),
    sa.Column('file_sha256', sa.String(length=64), nullable=False),
    sa.Column('file_size', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('queued_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('deadline_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
    sa.Column('job_id', sa.String(length=64), nullable=True),
    sa.Column('hidden', sa.Boolean(), server_default='0', nullable=False),
    sa.Column('disqualified_reason', sa.Text(), nullable=True),
    sa.Column('is_baseline', sa.Boolean(), server_default='0', nullable=False),
    sa.Column('baseline_kind', sa.String(length=32), nullable=True),
    sa.Column('selected', sa.Boolean(), server_default='0', nullable=False),
    sa.Column('counts_toward_quota', sa.Boolean(), server_default='1', nullable=False),
    sa.Column('notes_json', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_submission_benchmark_id_benchmark')),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'], name=op.f('fk_submission_team_id_team'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_submission_user_id_user_account'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_submission'))
    )
    with op.batch_alter_table('submission', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_submission_benchmark_id'), ['benchmark_id'], unique=False)
        batch_op.create_index('ix_submission_benchmark_split_status', ['benchmark_id', 'split', 'status'], unique=False)
        batch_op.create_index('ix_submission_status_deadline', ['status', 'deadline_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_submission_team_id'), ['team_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_submission_user_id'), ['user_id'], unique=False)

    op.create_table('score',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('submission_id', sa.Integer(), nullable=False),
    sa.Column('part', sa.String(length=16), nullable=False),
    sa.Column('task', sa.String(length=64), nullable=False),
    sa.Column('metric', sa.String(length=64), nullable=False),
    sa.Column('slice_key', sa.String(length=400), nullable=False),
    sa.Column('slice_json', sa.JSON(), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('ci_low', sa.Float(), nullable=True),
    sa.Column('ci_high', sa.Float(), nullable=True),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('judge', sa.String(length=80), nullable=True),
    sa.Column('metric_version', sa.String(length=16), nullable=False),
    sa.ForeignKeyConstraint(['submission_id'], ['submission.id'], name=op.f('fk_score_submission_id_submission'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_score'))
    )
    with op.batch_alter_table('score', schema=None) as batch_op:
        batch_op.create_index('ix_score_board', ['task', 'metric', 'slice_key', 'part'], unique=False)
        batch_op.create_index(batch_op.f('ix_score_submission_id'), ['submission_id'], unique=False)


def downgrade() -> None:

    with op.batch_alter_table('score', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_score_submission_id'))
        batch_op.drop_index('ix_score_board')

    op.drop_table('score')
    with op.batch_alter_table('submission', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_submission_user_id'))
        batch_op.drop_index(batch_op.f('ix_submission_team_id'))
        batch_op.drop_index('ix_submission_status_deadline')
        batch_op.drop_index('ix_submission_benchmark_split_status')
        batch_op.drop_index(batch_op.f('ix_submission_benchmark_id'))

    op.drop_table('submission')
    with op.batch_alter_table('api_token', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_token_user_id'))

    op.drop_table('api_token')
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_user_account_team_id'))

    op.drop_table('user_account')
    op.drop_table('quota_usage')
    op.drop_table('label_set')
    op.drop_table('team')
    op.drop_table('benchmark')

