"""Session events that issue receipts in the transaction that changes a submission (issue 27).

Installed on every `leaderboard.server.db.Database` session factory, next to the standings'
hook (`leaderboard.server.boards.hook`), with the deployment's `Keyring`. ``after_flush`` notes
each submission whose Score rows or receipt-visible columns (`WATCHED`) changed, and each
benchmark whose ``private_revealed`` changed; ``before_commit`` issues their receipts
(`leaderboard.server.transparency.issue.Issuer`), so a scored, rescored, hidden, disqualified or
revealed submission and its receipt commit together, whoever the writer is (scoring job, judge
job, admin action). Bulk SQL ``update()`` of those columns bypasses the ORM; the one in the
server (`back_to_queue`) moves a submission between in-flight states, which no receipt shows.
"""
from __future__ import annotations

import logging

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session

from leaderboard.server.models import Benchmark
from leaderboard.server.models.changes import changed_submissions
from leaderboard.server.transparency.issue import Issuer, candidates_of_benchmark

log = logging.getLogger(__name__)

_SUBS = "lb_receipts_pending"
_BENCHES = "lb_receipts_benchmarks"
_KEYRING = "lb_keyring"
#: submission columns a receipt shows
WATCHED = ("status", "hidden", "is_public", "selected", "disqualified_reason", "team_id",
           "is_baseline", "baseline_kind", "method_name", "benchmark_id", "split", "file_sha256")


def _after_flush(session: Session, _ctx) -> None:
    if session.info.get(_KEYRING) is None:
        return
    session.info.setdefault(_SUBS, set()).update(changed_submissions(session, WATCHED))
    benches = session.info.setdefault(_BENCHES, set())
    for obj in session.dirty:
        if isinstance(obj, Benchmark) and \
                inspect(obj).attrs["private_revealed"].history.has_changes():
            benches.add(obj.id)


def _before_commit(session: Session) -> None:
    keyring = session.info.get(_KEYRING)
    if keyring is None:
        return
    session.flush()
    subs = session.info.pop(_SUBS, set())
    benches = session.info.pop(_BENCHES, set())
    for bid in sorted(benches):
        subs.update(candidates_of_benchmark(session, bid))
    subs.discard(None)
    if not subs:
        return
    issuer = Issuer(session, keyring.signer())
    for sid in sorted(subs):
        issuer.issue_for(sid)
    session.flush()
    if issuer.issued:
        log.info("receipts issued=%d first=%d", len(issuer.issued), issuer.issued[0])


def _after_rollback(session: Session) -> None:
    session.info.pop(_SUBS, None)
    session.info.pop(_BENCHES, None)


def install(factory, keyring) -> None:
    """Issue receipts on every commit of sessions made by ``factory``, signed by ``keyring``."""
    info = factory.kw.setdefault("info", {})
    info[_KEYRING] = keyring
    if not event.contains(factory, "after_flush", _after_flush):
        event.listen(factory, "after_flush", _after_flush)
        event.listen(factory, "before_commit", _before_commit)
        event.listen(factory, "after_rollback", _after_rollback)


__all__ = ["WATCHED", "install"]
