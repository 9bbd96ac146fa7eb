"""Modality boards kept in the scoring transaction (issue 25): ``modality_board`` (columns and
counters per modality) and ``modality_standing`` (one row per team: coverage, mean normalised
score, the key that orders the board, the headline cell of each column).

Rows are derived data: ``db-upgrade`` fills them from the standings
(`leaderboard.server.boards.rebuild.fill_if_empty`).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03 14:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None

KEY = sa.String(length=512).with_variant(sa.String(length=512, collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table('modality_board',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('modality', sa.String(length=64), nullable=False),
    sa.Column('rows', sa.Integer(), server_default='0', nullable=False),
    sa.Column('ranked', sa.Integer(), server_default='0', nullable=False),
    sa.Column('columns_json', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_modality_board')),
    sa.UniqueConstraint('modality', name=op.f('uq_modality_board_modality')))
    op.create_table('modality_standing',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('board_id', sa.Integer(), nullable=False),
    sa.Column('grp', sa.String(length=40), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=True),
    sa.Column('covered', sa.Integer(), nullable=False),
    sa.Column('ranked', sa.Boolean(), nullable=False),
    sa.Column('mean_score', sa.Float(), nullable=True),
    sa.Column('sort_key', KEY, nullable=False),
    sa.Column('cells_json', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['board_id'], ['modality_board.id'],
                            name=op.f('fk_modality_standing_board_id_modality_board'),
                            ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'],
                            name=op.f('fk_modality_standing_team_id_team'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_modality_standing')),
    sa.UniqueConstraint('board_id', 'grp', name='uq_modality_standing_board_grp'))
    op.create_index('ix_modality_standing_key', 'modality_standing', ['board_id', 'sort_key'])


def downgrade() -> None:
    op.drop_index('ix_modality_standing_key', table_name='modality_standing')
    op.drop_table('modality_standing')
    op.drop_table('modality_board')
