"""What a flush changed, as the session hooks read it (standings, issue 16; receipts, issue 27).

Both hooks run ``after_flush`` and want the same thing first: the submissions whose Score rows
were added, changed or deleted, or whose own columns among ``watched`` changed (or that are new).
"""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import inspect
from sqlalchemy.orm import Session

from leaderboard.server.models.base import Score, Submission


def changed_submissions(session: Session, watched: Iterable[str]) -> set[int]:
    """Ids of the submissions this flush touched: new ones, those whose Score rows were added,
    changed or deleted, and those whose columns in ``watched`` changed."""
    ids: set[int] = set()
    for obj in session.new:
        if isinstance(obj, Score):
            ids.add(obj.submission_id)
        elif isinstance(obj, Submission):
            ids.add(obj.id)
    for obj in session.dirty:
        if isinstance(obj, Score):
            ids.add(obj.submission_id)
        elif isinstance(obj, Submission):
            state = inspect(obj)
            if any(state.attrs[a].history.has_changes() for a in watched):
                ids.add(obj.id)
    for obj in session.deleted:
        if isinstance(obj, Score):
            ids.add(obj.submission_id)
    return ids
