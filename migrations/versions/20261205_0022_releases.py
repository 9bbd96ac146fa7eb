"""Releases of a benchmark and re-runs on them (issue 37).

``benchmark.family`` / ``release`` / ``released_at``: a row is one release of a family; every
existing row becomes release 1 of its own family (``family = key``), so nothing it holds changes.
``submission.allow_rerun`` (default on) and ``rerun_of_id`` (the platform's re-run of another
submission, at most one per original, release and split); ``image_path`` (the image tarball
kept for re-runs). ``rerun_campaign``: a release's budget, pause switch, progress and the last
planning pass's skips (``skips_json``).

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-05 09:30:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Only ADD COLUMN and CREATE INDEX: on SQLite a batch "recreate" of these tables would drop
    # a table other rows reference, which foreign-key enforcement refuses.
    with op.batch_alter_table('benchmark', schema=None) as batch_op:
        batch_op.add_column(sa.Column('family', sa.String(length=64), server_default='',
                                      nullable=False))
        batch_op.add_column(sa.Column('release', sa.Integer(), server_default='1',
                                      nullable=False))
        batch_op.add_column(sa.Column('released_at', sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE benchmark SET family = key, released_at = created_at")
    op.create_index('ix_benchmark_family', 'benchmark', ['family'], unique=False)
    op.create_index('uq_benchmark_family', 'benchmark', ['family', 'release'], unique=True)

    with op.batch_alter_table('submission', schema=None) as batch_op:
        batch_op.add_column(sa.Column('allow_rerun', sa.Boolean(), server_default='1',
                                      nullable=False))
        batch_op.add_column(sa.Column(
            'rerun_of_id', sa.Integer(),
            sa.ForeignKey('submission.id', name='fk_submission_rerun_of_id_submission',
                          ondelete='SET NULL'), nullable=True))
        batch_op.add_column(sa.Column('image_path', sa.Text(), nullable=True))
    op.create_index('ix_submission_rerun_of_id', 'submission', ['rerun_of_id'], unique=False)
    op.create_index('uq_submission_rerun_of_id', 'submission',
                    ['rerun_of_id', 'benchmark_id', 'split'], unique=True)

    op.create_table('rerun_campaign',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('max_runs', sa.Integer(), nullable=True),
    sa.Column('max_gpu_seconds', sa.Integer(), nullable=True),
    sa.Column('paused', sa.Boolean(), server_default='0', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('note', sa.Text(), server_default='', nullable=False),
    sa.Column('skips_json', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmark.id'], name=op.f('fk_rerun_campaign_benchmark_id_benchmark'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['created_by'], ['user_account.id'], name=op.f('fk_rerun_campaign_created_by_user_account'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rerun_campaign')),
    sa.UniqueConstraint('benchmark_id', name=op.f('uq_rerun_campaign_benchmark_id'))
    )


def downgrade() -> None:
    op.drop_table('rerun_campaign')
    op.drop_index('uq_submission_rerun_of_id', table_name='submission')
    op.drop_index('ix_submission_rerun_of_id', table_name='submission')
    with op.batch_alter_table('submission', schema=None) as batch_op:
        batch_op.drop_constraint('fk_submission_rerun_of_id_submission', type_='foreignkey')
        batch_op.drop_column('image_path')
        batch_op.drop_column('rerun_of_id')
        batch_op.drop_column('allow_rerun')
    op.drop_index('uq_benchmark_family', table_name='benchmark')
    op.drop_index('ix_benchmark_family', table_name='benchmark')
    with op.batch_alter_table('benchmark', schema=None) as batch_op:
        batch_op.drop_column('released_at')
        batch_op.drop_column('release')
        batch_op.drop_column('family')
