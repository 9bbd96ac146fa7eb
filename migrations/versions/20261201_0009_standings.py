"""Incremental standings (issue 16): standings rows per board.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # placeholder in the chain: filled by the change that needs it


def downgrade() -> None:
    pass
