"""Methods (issue 38, item 1): a team's named detector gets a stored identity.

``method``: one row per (team, method name) with its slug, description, paper and code links and
model-card fields; ``team.affiliation``; an index on ``submission (team_id, method_name)`` (a
method's submissions). Every existing team submission gets its method (its name unchanged):
the description and links come from the method's latest submission that has them.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05 10:00:00
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('method',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=120), nullable=False),
    sa.Column('slug', sa.String(length=140), nullable=False),
    sa.Column('description', sa.Text(), server_default='', nullable=False),
    sa.Column('paper_url', sa.String(length=500), server_default='', nullable=False),
    sa.Column('code_url', sa.String(length=500), server_default='', nullable=False),
    sa.Column('params', sa.String(length=80), server_default='', nullable=False),
    sa.Column('training_data', sa.Text(), server_default='', nullable=False),
    sa.Column('input_resolution', sa.String(length=80), server_default='', nullable=False),
    sa.Column('licence', sa.String(length=120), server_default='', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['team_id'], ['team.id'], name=op.f('fk_method_team_id_team'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_method')),
    sa.UniqueConstraint('team_id', 'name', name='uq_method_team_id_name'),
    sa.UniqueConstraint('team_id', 'slug', name='uq_method_team_id_slug')
    )
    op.create_index('ix_method_team_id', 'method', ['team_id'], unique=False)
    # a plain column: SQLite adds it without rebuilding the table
    op.add_column('team', sa.Column('affiliation', sa.String(length=300), server_default='',
                                    nullable=False))
    op.create_index('ix_submission_team_method', 'submission', ['team_id', 'method_name'],
                    unique=False)
    _fill_methods()


def _fill_methods() -> None:
    """One method per existing (team, method name), the slug made as `models.methods` makes it
    (the method first submitted gets the plain slug)
    (the slugify rule is copied, not imported: a migration keeps the rule of its day)."""
    import re
    import unicodedata
    from datetime import datetime, timezone

    def slugify(name: str) -> str:
        ascii_ = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
        return "-".join(re.findall(r"[a-z0-9]+", ascii_.lower()))[:100] or "method"

    conn = op.get_bind()
    rows = conn.execute(sa.text(
        "SELECT team_id, method_name, description, paper_url, code_url, created_at "
        "FROM submission WHERE team_id IS NOT NULL AND is_baseline = :f "
        "AND method_name <> '' ORDER BY created_at, id"),
        {"f": False}).all()
    methods: dict = {}
    for team_id, name, desc, paper, code, created in rows:
        m = methods.setdefault((team_id, name), {"description": "", "paper_url": "",
                                                 "code_url": "", "created_at": created})
        for key, value in (("description", desc), ("paper_url", paper), ("code_url", code)):
            if value:  # the latest submission that has it (rows come oldest first)
                m[key] = value
    taken: set = set()
    now = datetime.now(timezone.utc)
    table = sa.table('method', *(sa.column(c) for c in (
        'team_id', 'name', 'slug', 'description', 'paper_url', 'code_url', 'params',
        'training_data', 'input_resolution', 'licence', 'created_at', 'updated_at')))
    out = []
    for (team_id, name), m in methods.items():
        base, n = slugify(name), 1
        slug = base
        while (team_id, slug) in taken:
            n += 1
            slug = f"{base}-{n}"
        taken.add((team_id, slug))
        created = m["created_at"] or now
        if isinstance(created, str):  # SQLite hands back text
            created = datetime.fromisoformat(created)
        if created.tzinfo is None:
            created = created.replace(tzinfo=timezone.utc)
        out.append({"team_id": team_id, "name": name, "slug": slug,
                    "description": (m["description"] or "")[:5000],
                    "paper_url": (m["paper_url"] or "")[:500],
                    "code_url": (m["code_url"] or "")[:500], "params": "",
                    "training_data": "", "input_resolution": "", "licence": "",
                    "created_at": created, "updated_at": now})
    if out:
        op.bulk_insert(table, out)


def downgrade() -> None:
    op.drop_index('ix_submission_team_method', table_name='submission')
    # not batch mode: SQLite would rebuild `team`, and dropping it under foreign keys would
    # cascade to its members and submissions; ALTER TABLE DROP COLUMN needs SQLite 3.35
    op.execute('ALTER TABLE team DROP COLUMN affiliation')
    op.drop_index('ix_method_team_id', table_name='method')
    op.drop_table('method')
