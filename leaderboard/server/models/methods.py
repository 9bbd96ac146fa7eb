"""Methods (issue 38, item 1): a team's named detector across its submissions.

A submission names its method by ``Submission.method_name``; the method is the row with that
(``team_id``, ``name``), which carries what a reader cites: a description, paper and code links
and the model-card fields (parameters, training data, input resolution, licence). Submissions
link to it by (team, name), not by a foreign key, so the submission table is not rebuilt and a
submission's method is what it was submitted as.

Every team submission has its method: `_methods_for_new_submissions` finds or creates it in the
flush that inserts the submission, whatever made the row (the upload, a container, a test
factory, a seed script), with ``INSERT .. ON CONFLICT DO NOTHING`` so two first submissions of
one method in two transactions both succeed. A new method starts from its first submission's
description and links; later submissions never change it (its team edits the method page).
Baselines and team-less submissions have no method.

``slug`` is unique per team: the name in lower-case ASCII words joined by "-", then "-2", "-3"..
when another of the team's methods already has it.
"""
from __future__ import annotations

import re
import unicodedata
from datetime import datetime

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint, event, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Mapped, Session, mapped_column

from leaderboard.server.models.base import Base, Submission, utcnow

#: the model-card fields a team edits, with their length limits
CARD_LIMITS = {"description": 5000, "paper_url": 500, "code_url": 500, "params": 80,
               "training_data": 1000, "input_resolution": 80, "licence": 120}


class Method(Base):
    __tablename__ = "method"
    __table_args__ = (UniqueConstraint("team_id", "name", name="uq_method_team_id_name"),
                      UniqueConstraint("team_id", "slug", name="uq_method_team_id_slug"))
    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("team.id", ondelete="CASCADE"), index=True)
    #: exactly ``Submission.method_name`` of its submissions
    name: Mapped[str] = mapped_column(String(120))
    slug: Mapped[str] = mapped_column(String(140))
    description: Mapped[str] = mapped_column(Text, default="", server_default="")
    paper_url: Mapped[str] = mapped_column(String(500), default="", server_default="")
    code_url: Mapped[str] = mapped_column(String(500), default="", server_default="")
    #: model card: free text as the team states it ("86M", "ViT-B/16 backbone, 86M")
    params: Mapped[str] = mapped_column(String(80), default="", server_default="")
    training_data: Mapped[str] = mapped_column(Text, default="", server_default="")
    input_resolution: Mapped[str] = mapped_column(String(80), default="", server_default="")
    licence: Mapped[str] = mapped_column(String(120), default="", server_default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


def slugify(name: str) -> str:
    """``name`` as lower-case ASCII words joined by "-" ("method" when nothing is left)."""
    ascii_ = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_.lower())
    return "-".join(words)[:100] or "method"


def ensure_method(connection, *, team_id: int, name: str, description: str = "",
                  paper_url: str = "", code_url: str = "") -> None:
    """Find or create the method (``team_id``, ``name``) on ``connection`` (in the caller's
    transaction). Safe against a concurrent creator: the insert does nothing on a conflict;
    a slug taken by another name gets the next free suffix."""
    table = Method.__table__
    insert = pg_insert if connection.dialect.name == "postgresql" else sqlite_insert
    base = slugify(name)
    now = utcnow()
    for n in range(1, 1000):
        exists = connection.execute(select(table.c.id).where(
            table.c.team_id == team_id, table.c.name == name)).first()
        if exists is not None:
            return
        slug = base if n == 1 else f"{base}-{n}"
        connection.execute(insert(table).values(
            team_id=team_id, name=name, slug=slug, description=description[:5000],
            paper_url=paper_url[:500], code_url=code_url[:500], params="", training_data="",
            input_resolution="", licence="", created_at=now, updated_at=now)
            .on_conflict_do_nothing())
    raise RuntimeError(f"no free slug for method {name!r} of team {team_id}")


@event.listens_for(Session, "after_flush")
def _methods_for_new_submissions(session: Session, _context) -> None:
    """The method of every team submission the flush inserted (see the module docstring)."""
    seen = set()
    for obj in session.new:
        if (not isinstance(obj, Submission) or obj.team_id is None or obj.is_baseline
                or not obj.method_name):
            continue
        key = (obj.team_id, obj.method_name)
        if key in seen:
            continue
        seen.add(key)
        ensure_method(session.connection(), team_id=obj.team_id, name=obj.method_name,
                      description=obj.description or "", paper_url=obj.paper_url or "",
                      code_url=obj.code_url or "")


__all__ = ["CARD_LIMITS", "Method", "ensure_method", "slugify"]
