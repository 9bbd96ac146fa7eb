"""Incremental standings (issue 16): standings rows per board.

* ``standing_board``: one board slice (benchmark x split x task x slice key x part) with its
  counters (rows, metrics present, judged metrics) and the ranking columns its keys use;
* ``standing``: one submission on one slice, with keys that sort bytewise by the ranking rules
  (collation "C" on PostgreSQL) and the indexes a board page reads (``rep_key``: team mode,
  ``all_key``: all submissions).

Both are derived data. The tables start empty; ``python -m leaderboard db-upgrade`` fills them
from the score rows when they are empty and submissions are scored (or run
``rebuild-standings``).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None

KEY = sa.String(length=512).with_variant(sa.String(length=512, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table('standing_board',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('split', sa.String(length=64), nullable=False),
    sa.Column('task', sa.String(length=64), nullable=False),
    sa.Column('slice_key', sa.String(length=400), nullable=False),
    sa.Column('part', sa.String(length=16), nullable=False),
    sa.Column('rows', sa.Integer(), server_default='0', nullable=False),
    sa.Column('ranked', sa.Integer(), server_default='0', nullable=False),
    sa.Column('reps', sa.Integer(), server_default='0', nullable=False),
    sa.Column('ranked_reps', sa.Integer(), server_default='0', nullable=False),
    sa.Column('metrics_json', sa.JSON(), nullable=False),
    sa.Column('judged_json', sa.JSON(), nullable=False),
    sa.Column('order_json', sa.JSON(), nullable=False),
    sa.Column('judge', sa.String(length=80), nullable=True),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_standing_board_benchmark_id_benchmark'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_standing_board')),
    sa.UniqueConstraint('benchmark_id', 'split', 'task', 'slice_key', 'part', name='uq_standing_board_key')
    )
    op.create_table('standing',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('board_id', sa.Integer(), nullable=False),
    sa.Column('submission_id', sa.Integer(), nullable=False),
    sa.Column('grp', sa.String(length=40), nullable=False),
    sa.Column('sort_key', KEY, nullable=False),
    sa.Column('all_key', KEY, nullable=False),
    sa.Column('rep_key', KEY, nullable=True),
    sa.Column('pick_key', KEY, nullable=False),
    sa.Column('selected', sa.Boolean(), nullable=False),
    sa.Column('disqualified', sa.Boolean(), nullable=False),
    sa.Column('is_baseline', sa.Boolean(), nullable=False),
    sa.Column('competes', sa.Boolean(), nullable=False),
    sa.Column('cells_json', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['board_id'], ['standing_board.id'], name=op.f('fk_standing_board_id_standing_board'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['submission_id'], ['submission.id'], name=op.f('fk_standing_submission_id_submission'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_standing')),
    sa.UniqueConstraint('board_id', 'submission_id', name='uq_standing_board_submission')
    )
    op.create_index('ix_standing_rep', 'standing', ['board_id', 'rep_key', 'competes', 'is_baseline', 'grp'], unique=False)
    op.create_index('ix_standing_all', 'standing', ['board_id', 'all_key', 'competes'], unique=False)
    op.create_index('ix_standing_group', 'standing', ['board_id', 'grp'], unique=False)
    op.create_index('ix_standing_submission', 'standing', ['submission_id'], unique=False)
    op.create_index('ix_standing_baseline', 'standing', ['board_id', 'is_baseline'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_standing_baseline', table_name='standing')
    op.drop_index('ix_standing_submission', table_name='standing')
    op.drop_index('ix_standing_group', table_name='standing')
    op.drop_index('ix_standing_all', table_name='standing')
    op.drop_index('ix_standing_rep', table_name='standing')
    op.drop_table('standing')
    op.drop_table('standing_board')
