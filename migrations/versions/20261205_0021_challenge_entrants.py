"""Challenges bind their entrants only (issue 33, item 4).

``challenge_entrant``: the teams that entered a challenge; only they submit to it.
``phase_day_usage``: a challenge submission's daily unit, counted per team, phase and UTC day,
so a phase's daily quota counts challenge submissions only (non-challenge uploads keep counting
in ``quota_usage``). The teams whose earlier submissions took a phase's cap (under the old rule
every submission during a phase did) are recorded as entrants of its challenge, so a running
challenge keeps its participants.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05 04:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('challenge_entrant',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('challenge_id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('entered_by', sa.Integer(), nullable=True),
    sa.Column('entered_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['challenge_id'], ['challenge.id'], name=op.f('fk_challenge_entrant_challenge_id_challenge'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['entered_by'], ['user_account.id'], name=op.f('fk_challenge_entrant_entered_by_user_account'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'], name=op.f('fk_challenge_entrant_team_id_team'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_challenge_entrant')),
    sa.UniqueConstraint('challenge_id', 'team_id', name=op.f('uq_challenge_entrant_challenge_id'))
    )
    op.create_index('ix_challenge_entrant_challenge_id', 'challenge_entrant', ['challenge_id'], unique=False)
    op.create_index('ix_challenge_entrant_team_id', 'challenge_entrant', ['team_id'], unique=False)
    op.create_table('phase_day_usage',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('phase_id', sa.Integer(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['phase_id'], ['challenge_phase.id'], name=op.f('fk_phase_day_usage_phase_id_challenge_phase'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'], name=op.f('fk_phase_day_usage_team_id_team'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_phase_day_usage')),
    sa.UniqueConstraint('team_id', 'phase_id', 'day', name=op.f('uq_phase_day_usage_team_id'))
    )
    # the teams already in a challenge (their submissions took a phase's cap) stay in it
    op.execute(
        "INSERT INTO challenge_entrant (challenge_id, team_id, entered_by, entered_at) "
        "SELECT p.challenge_id, s.team_id, NULL, MIN(s.created_at) FROM submission s "
        "JOIN challenge_phase p ON p.id = s.phase_id WHERE s.team_id IS NOT NULL "
        "GROUP BY p.challenge_id, s.team_id")


def downgrade() -> None:
    op.drop_table('phase_day_usage')
    op.drop_index('ix_challenge_entrant_team_id', table_name='challenge_entrant')
    op.drop_index('ix_challenge_entrant_challenge_id', table_name='challenge_entrant')
    op.drop_table('challenge_entrant')
