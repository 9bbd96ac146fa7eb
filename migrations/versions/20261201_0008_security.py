"""Security (issue 13): session generations, remember tokens, audit role.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # placeholder in the chain: filled by the change that needs it


def downgrade() -> None:
    pass
