"""Rank intervals (issue 14): per-item outcome store.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # placeholder in the chain: filled by the change that needs it


def downgrade() -> None:
    pass
