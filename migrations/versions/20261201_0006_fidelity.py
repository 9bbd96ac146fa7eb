"""Scoring fidelity (issue 11): no schema change.

Pack source indices and scoring-only packs live in the pack files, not in the database; the
revision stays in the chain (a no-op) so databases already stamped with it upgrade unchanged.

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
    pass  # no schema change (see the module docstring)


def downgrade() -> None:
    pass
