"""The participant's loop (issues 21 and 24): per-split daily quotas, the phase cap as a
counter taken atomically with them, the admin's reason for hiding a submission, and the
per-benchmark switch that makes held-out submissions need an approved agreement.

Existing quota rows become the held-out split's (``test``): the conservative reading, and a
quota row only matters for its own UTC day. Existing phase submissions are counted into
``phase_usage`` and linked to their phase, so a cap already used stays used.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03 12:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('benchmark', schema=None) as batch_op:
        batch_op.add_column(sa.Column('agreement_gates_submissions', sa.Boolean(),
                                      server_default='1', nullable=False))
    with op.batch_alter_table('submission', schema=None) as batch_op:
        batch_op.add_column(sa.Column('hidden_reason', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('phase_id', sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f('ix_submission_phase_id'), ['phase_id'], unique=False)
        batch_op.create_foreign_key(batch_op.f('fk_submission_phase_id_challenge_phase'),
                                    'challenge_phase', ['phase_id'], ['id'], ondelete='SET NULL')
    with op.batch_alter_table('quota_usage', schema=None) as batch_op:
        batch_op.add_column(sa.Column('split', sa.String(length=64), server_default='test',
                                      nullable=False))
        batch_op.drop_constraint('uq_quota_usage_team_id', type_='unique')
        batch_op.create_unique_constraint(batch_op.f('uq_quota_usage_team_id'),
                                          ['team_id', 'benchmark_id', 'split', 'day'])
    op.create_table('phase_usage',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('phase_id', sa.Integer(), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['phase_id'], ['challenge_phase.id'], name=op.f('fk_phase_usage_phase_id_challenge_phase'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'], name=op.f('fk_phase_usage_team_id_team'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_phase_usage')),
    sa.UniqueConstraint('team_id', 'phase_id', name=op.f('uq_phase_usage_team_id'))
    )
    _backfill_phases()


def _backfill_phases() -> None:
    sub = sa.table('submission', sa.column('id'), sa.column('benchmark_id'), sa.column('split'),
                   sa.column('team_id'), sa.column('created_at'), sa.column('phase_id'),
                   sa.column('counts_toward_quota', sa.Boolean))
    phase = sa.table('challenge_phase', sa.column('id'), sa.column('challenge_id'),
                     sa.column('split'), sa.column('opens_at'), sa.column('closes_at'))
    ch = sa.table('challenge', sa.column('id'), sa.column('benchmark_id'))
    usage = sa.table('phase_usage', sa.column('team_id'), sa.column('phase_id'),
                     sa.column('count'))
    holding = (sa.select(phase.c.id).join(ch, ch.c.id == phase.c.challenge_id)
               .where(ch.c.benchmark_id == sub.c.benchmark_id, phase.c.split == sub.c.split,
                      phase.c.opens_at <= sub.c.created_at, sub.c.created_at < phase.c.closes_at)
               .limit(1).scalar_subquery())
    op.execute(sa.update(sub).where(sub.c.team_id.is_not(None)).values(phase_id=holding))
    counted = (sa.select(sub.c.team_id, sub.c.phase_id, sa.func.count())
               .where(sub.c.phase_id.is_not(None), sub.c.team_id.is_not(None),
                      sub.c.counts_toward_quota.is_(True))
               .group_by(sub.c.team_id, sub.c.phase_id))
    op.execute(sa.insert(usage).from_select(['team_id', 'phase_id', 'count'], counted))


def downgrade() -> None:
    op.drop_table('phase_usage')
    with op.batch_alter_table('quota_usage', schema=None) as batch_op:
        batch_op.drop_constraint('uq_quota_usage_team_id', type_='unique')
        batch_op.drop_column('split')
        batch_op.create_unique_constraint(batch_op.f('uq_quota_usage_team_id'),
                                          ['team_id', 'benchmark_id', 'day'])
    with op.batch_alter_table('submission', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_submission_phase_id_challenge_phase'),
                                 type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_submission_phase_id'))
        batch_op.drop_column('phase_id')
        batch_op.drop_column('hidden_reason')
    with op.batch_alter_table('benchmark', schema=None) as batch_op:
        batch_op.drop_column('agreement_gates_submissions')
