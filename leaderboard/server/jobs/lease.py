"""Heartbeats of running jobs: the process doing the work renews a short lease in Redis.

A scoring or judge job holds ``lb:lease:<kind>:<submission id>`` while it runs: set before it
claims the row, renewed every `RENEW_S` by a daemon thread of the work-horse, deleted when the
job ends. The reconciler reads the lease to tell a job that is running from one whose worker
died: a claimed submission without a lease for `TTL_S` is re-queued at once (issue 17), instead
of after ``SCORING_TIMEOUT_S`` + grace. Why a lease of our own rather than RQ's heartbeats alone:
RQ keeps a busy worker's key for ``job_monitoring_interval + 60`` s, so its registries cannot
tell a dead worker under a minute, and a ``FLUSHALL`` erases them while the horse runs on; the
lease thread writes its key again within `RENEW_S` of any flush or Redis restart.

The lease is evidence, not a lock: a job that lost it (Redis unreachable for longer than `TTL_S`)
may be re-queued while it still runs, and the storing step then refuses its result unless the row
is still its claim (the attempt number, see `leaderboard.server.jobs.scoring.store_scores`).
Without Redis (inline jobs) there is no lease and the reconciler keeps to the deadlines.
"""
from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import redis

log = logging.getLogger(__name__)

#: seconds a lease lives without renewal: the longest a dead job goes unnoticed
TTL_S = 15
#: seconds between renewals (three tries before the lease lapses)
RENEW_S = 5
_PREFIX = "lb:lease:"


_KEY = re.compile(r"^[A-Za-z0-9-]{1,80}$")


def _ident(key: int | str) -> str:
    """A submission or build id as it appears in a lease key (ValueError for anything else)."""
    if isinstance(key, int) or (isinstance(key, str) and key.isascii() and key.isdigit()):
        return str(int(key))
    if isinstance(key, str) and _KEY.match(key):
        return key  # a pack build's id (`leaderboard.server.jobs.builds.BUILD_ID`)
    raise ValueError(f"not a lease id: {key!r}")


def lease_key(kind: str, key: int | str) -> str:
    return f"{_PREFIX}{kind}:{_ident(key)}"


@contextmanager
def hold(conn: redis.Redis | None, kind: str, submission_id: int | str,
         owner: str) -> Iterator[None]:
    """Hold the lease of ``(kind, submission_id)`` for the block (nothing without Redis); the
    admin jobs hold theirs by build id (``robustness-build``, ``pack-build``).

    Redis trouble never fails the job: a renewal that fails is retried at the next tick, and
    the job goes on (the reconciler cannot act on what it cannot see either).
    """
    if conn is None:
        yield
        return
    key = lease_key(kind, submission_id)
    stop = threading.Event()

    def renew() -> bool:
        try:
            conn.set(key, owner, ex=TTL_S)
            return True
        except redis.exceptions.RedisError:
            log.warning("lease %s not renewed (Redis unreachable); retrying", key)
            return False

    def loop() -> None:
        while not stop.wait(RENEW_S):
            renew()

    renew()
    thread = threading.Thread(target=loop, name=f"lease-{kind}-{submission_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=RENEW_S)
        try:
            if conn.get(key) == owner.encode():
                conn.delete(key)
        except redis.exceptions.RedisError:
            pass  # it expires by itself within TTL_S


def held(conn: redis.Redis, kind: str, submission_ids: Iterable[int | str]) -> set:
    """The ids among ``submission_ids`` whose ``kind`` lease is held right now (one MGET)."""
    ids = [i if isinstance(i, str) and not i.isdigit() else int(i) for i in submission_ids]
    if not ids:
        return set()
    values = conn.mget([lease_key(kind, i) for i in ids])
    return {i for i, v in zip(ids, values, strict=True) if v is not None}
