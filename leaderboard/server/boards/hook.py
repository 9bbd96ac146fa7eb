"""The session hook that keeps the standings in step with every commit (issue 16).

`install` listens on a session factory (`leaderboard.server.db.Database` installs it on its
own, the only kind of session the server makes). ``after_flush`` notes every submission whose
Score rows or board-relevant columns changed (`leaderboard.server.boards.ledger.TRACKED`) and
every benchmark whose judge or metric declarations changed; ``before_commit`` refreshes them in
the same transaction, then the modality boards of the teams whose rows changed
(`leaderboard.server.boards.modality_ledger`; a benchmark added, deleted or revealed rebuilds its
modalities' boards), so scores and standings commit together whoever the writer is. Bulk SQL
``update()``/``delete()`` statements bypass the ORM: a caller that changes those columns that way
calls `leaderboard.server.boards.ledger.refresh_submissions` itself (none in the server does).
"""
from __future__ import annotations

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session

from leaderboard.server.boards import modality_ledger
from leaderboard.server.boards.ledger import TOUCHED, TRACKED, refresh_submissions
from leaderboard.server.boards.rebuild import rekey_benchmark
from leaderboard.server.models import Benchmark
from leaderboard.server.models.changes import changed_submissions

_PENDING = "lb_standings_pending"
_BENCHES = "lb_standings_benchmarks"


def _after_flush(session: Session, _ctx) -> None:
    session.info.setdefault(_PENDING, set()).update(changed_submissions(session, TRACKED))
    benches = session.info.setdefault(_BENCHES, set())
    for obj in session.new:
        if isinstance(obj, Benchmark):  # a new column on its modalities' boards
            session.info.setdefault(TOUCHED, set()).add((obj.id, "*"))
    for obj in session.dirty:
        if isinstance(obj, Benchmark):
            state = inspect(obj)
            if any(state.attrs[a].history.has_changes() for a in ("official_judge",
                                                                    "meta_json")):
                benches.add(obj.id)
            elif state.attrs["private_revealed"].history.has_changes():
                # the modality boards read the part a board shows
                session.info.setdefault(TOUCHED, set()).add((obj.id, "*"))
    for obj in session.deleted:
        if isinstance(obj, Benchmark):  # its columns leave its modalities' boards
            session.info.setdefault(TOUCHED, set()).add((obj.id, "*"))


def _before_commit(session: Session) -> None:
    for _ in range(10):  # a refresh flushes; its own writes never add work, but be safe
        # commit() flushes only after this hook has run: flush first, or changes made since
        # the last flush would reach the database without their standings
        session.flush()
        benches = session.info.pop(_BENCHES, set())
        pending = session.info.pop(_PENDING, set())
        if not benches and not pending:
            touched = session.info.pop(TOUCHED, set())
            if touched:  # the modality boards, from the standings just written
                modality_ledger.refresh_groups(session, touched)
                continue
            return
        for bid in sorted(benches):
            rekey_benchmark(session, bid)
        refresh_submissions(session, {p for p in pending if p is not None})
        session.flush()


def _after_rollback(session: Session) -> None:
    session.info.pop(TOUCHED, None)
    session.info.pop(_PENDING, None)
    session.info.pop(_BENCHES, None)


def install(factory) -> None:
    """Keep standings in step with every commit of sessions made by ``factory``."""
    if not event.contains(factory, "after_flush", _after_flush):
        event.listen(factory, "after_flush", _after_flush)
        event.listen(factory, "before_commit", _before_commit)
        event.listen(factory, "after_rollback", _after_rollback)


__all__ = ["install"]
