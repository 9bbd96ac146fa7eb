"""Exactly-once uploads (issue 17): idempotency keys, job recovery.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # placeholder in the chain: filled by the change that needs it


def downgrade() -> None:
    pass
