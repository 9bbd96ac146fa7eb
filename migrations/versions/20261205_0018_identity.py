"""A known identity behind every account (issue 35): persons (accounts marked as one person),
the normalised address of every account, the signer's role and the benchmark's own request
fields on access requests, a submitted file's hash indexed (look-alike teams), TOTP second
factors with recovery codes, team captains (a flag on the account) and team invitations. Only
columns without foreign keys are added to existing tables: SQLite adds those in place, where a
foreign key would rebuild ``user_account``, whose drop cascades.

Existing accounts get their normalised address computed here; each existing team's captain is
its earliest member (the lowest account id), the closest reading of "who created it".

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05 03:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from leaderboard.server.address_keys import address_key

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('person',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=True),
    sa.Column('note', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_person'))
    )
    op.add_column('user_account', sa.Column('email_key', sa.String(length=254),
                                            server_default='', nullable=False))
    op.add_column('user_account', sa.Column('person_id', sa.Integer(), nullable=True))
    op.add_column('user_account', sa.Column('is_captain', sa.Boolean(), server_default='0',
                                            nullable=False))
    op.create_index(op.f('ix_user_account_email_key'), 'user_account', ['email_key'],
                    unique=False)
    op.create_index(op.f('ix_user_account_person_id'), 'user_account', ['person_id'],
                    unique=False)
    op.add_column('access_request', sa.Column('role', sa.String(length=200), server_default='',
                                              nullable=False))
    op.add_column('access_request', sa.Column('answers_json', sa.JSON(), nullable=True))
    op.create_index(op.f('ix_submission_file_sha256'), 'submission', ['file_sha256'],
                    unique=False)
    op.create_table('user_totp',
    sa.Column('user_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('secret_enc', sa.LargeBinary(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('enabled_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_step', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_user_totp_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', name=op.f('pk_user_totp'))
    )
    op.create_table('recovery_code',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_recovery_code_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_recovery_code')),
    sa.UniqueConstraint('code_hash', name=op.f('uq_recovery_code_code_hash'))
    )
    op.create_index(op.f('ix_recovery_code_user_id'), 'recovery_code', ['user_id'], unique=False)
    op.create_table('team_invitation',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('created_by', sa.Integer(), nullable=True),
    sa.Column('email', sa.String(length=254), nullable=True),
    sa.Column('email_key', sa.String(length=254), nullable=True),
    sa.Column('nonce_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('decided_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('decided_by', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['created_by'], ['user_account.id'], name=op.f('fk_team_invitation_created_by_user_account'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['decided_by'], ['user_account.id'], name=op.f('fk_team_invitation_decided_by_user_account'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'], name=op.f('fk_team_invitation_team_id_team'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_team_invitation')),
    sa.UniqueConstraint('nonce_hash', name=op.f('uq_team_invitation_nonce_hash'))
    )
    op.create_index(op.f('ix_team_invitation_email_key'), 'team_invitation', ['email_key'], unique=False)
    op.create_index(op.f('ix_team_invitation_team_id'), 'team_invitation', ['team_id'], unique=False)
    _backfill()


def _backfill() -> None:
    users = sa.table('user_account', sa.column('id'), sa.column('email'),
                     sa.column('email_key'), sa.column('team_id'),
                     sa.column('is_captain', sa.Boolean))
    bind = op.get_bind()
    for uid, email in bind.execute(sa.select(users.c.id, users.c.email)).all():
        bind.execute(sa.update(users).where(users.c.id == uid)
                     .values(email_key=address_key(email or "")))
    firsts = sa.select(sa.func.min(users.c.id)).where(users.c.team_id.is_not(None)) \
        .group_by(users.c.team_id)
    bind.execute(sa.update(users).where(users.c.id.in_(firsts)).values(is_captain=True))


def downgrade() -> None:
    op.drop_index(op.f('ix_team_invitation_team_id'), table_name='team_invitation')
    op.drop_index(op.f('ix_team_invitation_email_key'), table_name='team_invitation')
    op.drop_table('team_invitation')
    op.drop_index(op.f('ix_recovery_code_user_id'), table_name='recovery_code')
    op.drop_table('recovery_code')
    op.drop_table('user_totp')
    op.drop_index(op.f('ix_submission_file_sha256'), table_name='submission')
    with op.batch_alter_table('access_request', schema=None) as batch_op:
        batch_op.drop_column('answers_json')
        batch_op.drop_column('role')
    op.drop_index(op.f('ix_user_account_person_id'), table_name='user_account')
    op.drop_index(op.f('ix_user_account_email_key'), table_name='user_account')
    with op.batch_alter_table('user_account', schema=None) as batch_op:
        batch_op.drop_column('is_captain')
        batch_op.drop_column('person_id')
        batch_op.drop_column('email_key')
    op.drop_table('person')
