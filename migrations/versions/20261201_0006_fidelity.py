"""Scoring fidelity (issue 11): pack source indices, scoring-only packs.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 12:00:00
"""
from __future__ import annotations

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # placeholder in the chain: filled by the change that needs it


def downgrade() -> None:
    pass
