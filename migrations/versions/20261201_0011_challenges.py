"""Challenges with phases (issue 12).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # placeholder in the chain: filled by the change that needs it


def downgrade() -> None:
    pass
