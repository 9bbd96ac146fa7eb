"""Modality boards per modality, task kind and split (issue 33): ``modality_board`` gains
``kind`` and ``split`` (unique together with ``modality``); ``modality_standing`` gains
``is_baseline`` (baselines are reference rows placed among the teams) and ``n_items`` (the
items behind a row's mean).

Both tables hold derived data only, so they are recreated empty in the new shape (either way)
and ``db-upgrade`` refills them from the standings
(`leaderboard.server.boards.rebuild.fill_if_empty`).

Revision ID: 0020
Revises: 0018
Create Date: 2026-12-05 04:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0020'
down_revision = '0018'
branch_labels = None
depends_on = None

KEY = sa.String(length=512).with_variant(sa.String(length=512, collation="C"), "postgresql")


def _drop() -> None:
    op.drop_index('ix_modality_standing_key', table_name='modality_standing')
    op.drop_table('modality_standing')
    op.drop_table('modality_board')


def _create(*, kinds: bool) -> None:
    board_cols = [sa.Column('id', sa.Integer(), nullable=False),
                  sa.Column('modality', sa.String(length=64), nullable=False)]
    if kinds:
        board_cols += [sa.Column('kind', sa.String(length=32), nullable=False),
                       sa.Column('split', sa.String(length=64), nullable=False)]
    board_cols += [sa.Column('rows', sa.Integer(), server_default='0', nullable=False),
                   sa.Column('ranked', sa.Integer(), server_default='0', nullable=False),
                   sa.Column('columns_json', sa.JSON(), nullable=False),
                   sa.PrimaryKeyConstraint('id', name=op.f('pk_modality_board'))]
    if kinds:
        board_cols.append(sa.UniqueConstraint('modality', 'kind', 'split',
                                              name='uq_modality_board_key'))
    else:
        board_cols.append(sa.UniqueConstraint('modality',
                                              name=op.f('uq_modality_board_modality')))
    op.create_table('modality_board', *board_cols)
    cols = [sa.Column('id', sa.Integer(), nullable=False),
            sa.Column('board_id', sa.Integer(), nullable=False),
            sa.Column('grp', sa.String(length=40), nullable=False),
            sa.Column('team_id', sa.Integer(), nullable=True)]
    if kinds:
        cols.append(sa.Column('is_baseline', sa.Boolean(), server_default=sa.false(),
                              nullable=False))
    cols += [sa.Column('covered', sa.Integer(), nullable=False),
             sa.Column('ranked', sa.Boolean(), nullable=False),
             sa.Column('mean_score', sa.Float(), nullable=True)]
    if kinds:
        cols.append(sa.Column('n_items', sa.Integer(), server_default='0', nullable=False))
    cols += [sa.Column('sort_key', KEY, nullable=False),
             sa.Column('cells_json', sa.JSON(), nullable=False),
             sa.ForeignKeyConstraint(['board_id'], ['modality_board.id'],
                                     name=op.f('fk_modality_standing_board_id_modality_board'),
                                     ondelete='CASCADE'),
             sa.ForeignKeyConstraint(['team_id'], ['team.id'],
                                     name=op.f('fk_modality_standing_team_id_team'),
                                     ondelete='CASCADE'),
             sa.PrimaryKeyConstraint('id', name=op.f('pk_modality_standing')),
             sa.UniqueConstraint('board_id', 'grp', name='uq_modality_standing_board_grp')]
    op.create_table('modality_standing', *cols)
    op.create_index('ix_modality_standing_key', 'modality_standing',
                    ['board_id', 'sort_key', 'is_baseline'] if kinds
                    else ['board_id', 'sort_key'])


def upgrade() -> None:
    _drop()
    _create(kinds=True)


def downgrade() -> None:
    _drop()
    _create(kinds=False)
