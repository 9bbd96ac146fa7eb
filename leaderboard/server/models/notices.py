"""In-app notices (issue 21, item 8): a line a team (or one user) reads on its pages when
something happened to its work or its data access, until someone dismisses it.

Written by the service functions that make the change, in the same transaction
(`leaderboard.server.services.notices.post`): an agreement approved, denied or revoked (to the
user who signed), a submission scored, failed, hidden or disqualified (to its team), a new
release of a benchmark the team sent predictions files to (issue 37). ``subject``
names what the notice is about (``"submission:12"``, ``"benchmark:loki"``) so the web layer can
link to it; the service layer never builds URLs.
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.server.models.base import Base, utcnow

#: what a notice may be about (``kind``), in the words the pages use
NOTICE_KINDS = ("agreement.approved", "agreement.denied", "agreement.revoked",
                "submission.scored", "submission.failed", "submission.hidden",
                "submission.unhidden", "submission.disqualified", "submission.reinstated",
                "release.published")


class Notice(Base):
    __tablename__ = "notice"
    __table_args__ = (Index("ix_notice_team_dismissed", "team_id", "dismissed_at"),
                      Index("ix_notice_user_dismissed", "user_id", "dismissed_at"))
    id: Mapped[int] = mapped_column(primary_key=True)
    #: the one user it is for (agreements are personal); None = the whole team
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="CASCADE"))
    #: the team it is for (submissions); None = the user alone
    team_id: Mapped[int | None] = mapped_column(ForeignKey("team.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(Text)
    subject: Mapped[str] = mapped_column(String(120), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    dismissed_at: Mapped[datetime | None]
