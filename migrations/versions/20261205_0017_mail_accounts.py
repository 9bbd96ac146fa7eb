"""Mail and verified accounts (issue 35): the outbox, digest lines, opt-outs, and when a user's
address was verified.

``user_account.email_verified_at`` is NULL for every existing account: none was ever verified,
so each proves its address on its next visit (the pages it blocks say how); admins made with
``create-admin`` are verified by the operator who made them.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 04:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('user_account') as batch:
        batch.add_column(sa.Column('email_verified_at', sa.DateTime(timezone=True),
                                   nullable=True))
    op.create_table('outbox',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('message_id', sa.String(length=255), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=True),
    sa.Column('to_addr', sa.String(length=254), nullable=False),
    sa.Column('subject', sa.String(length=200), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('headers', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_outbox_user_id_user_account'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_outbox')),
    sa.UniqueConstraint('message_id', name=op.f('uq_outbox_message_id'))
    )
    op.create_index('ix_outbox_status_next', 'outbox', ['status', 'next_attempt_at'], unique=False)
    op.create_index(op.f('ix_outbox_user_id'), 'outbox', ['user_id'], unique=False)
    op.create_table('mail_item',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('link', sa.String(length=300), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('outbox_id', sa.Integer(), nullable=True),
    sa.Column('key', sa.String(length=120), nullable=True),
    sa.ForeignKeyConstraint(['outbox_id'], ['outbox.id'], name=op.f('fk_mail_item_outbox_id_outbox'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_mail_item_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_mail_item')),
    sa.UniqueConstraint('user_id', 'key', name=op.f('uq_mail_item_user_id'))
    )
    op.create_index('ix_mail_item_waiting', 'mail_item', ['outbox_id', 'user_id'], unique=False)
    op.create_table('mail_optout',
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['user_account.id'], name=op.f('fk_mail_optout_user_id_user_account'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'kind', name=op.f('pk_mail_optout'))
    )


def downgrade() -> None:
    op.drop_table('mail_optout')
    op.drop_index('ix_mail_item_waiting', table_name='mail_item')
    op.drop_table('mail_item')
    op.drop_index(op.f('ix_outbox_user_id'), table_name='outbox')
    op.drop_index('ix_outbox_status_next', table_name='outbox')
    op.drop_table('outbox')
    with op.batch_alter_table('user_account') as batch:
        batch.drop_column('email_verified_at')
