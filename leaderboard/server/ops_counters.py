"""Submission counters for ``/metrics``, kept as events happen instead of read at every scrape.

``/metrics`` used to read every finished submission on each scrape (issue 16). It now answers from:

* **in-flight counts** (received, queued, scoring): an indexed query per scrape
  (``ix_submission_status_deadline`` leads with ``status``), bounded by the work waiting or
  running, not by the table;
* **finished counts** (scored, failed, per kind) and the **duration histogram** (per outcome):
  with Redis, one hash (`HASH_KEY`) that every process updates after each commit that moves a
  submission into or out of a finished status, so a scrape is a single ``HGETALL``; without
  Redis (the embedded setup: one host, SQLite, inline jobs), aggregates computed inside the
  database (`from_database`: one ``GROUP BY`` and one row of ``SUM(CASE ...)`` per outcome; no
  row reaches Python). A counter table would make the embedded scrape O(1) too, but needs a
  migration, and an embedded deployment is small by construction; this is the one place to
  change if that stops being true.

How the hash is kept:

* **Events.** A session listener (`install`) collects, at each flush, every ``Submission`` whose
  status changed (ORM history: old and new value), was added or deleted, and applies the deltas
  after the commit (rolled-back work never counts). Every move into or out of "scored" /
  "failed" is an ORM change (``store_result``, ``mark_failed``, ``request_rescore``, the
  reconciler); the bulk ``UPDATE``\\ s (claim, mark_queued, back_to_queue) move only between
  in-flight statuses, which are not counted here. Each move into a finished status with a start
  time is one histogram observation (``finished_at - started_at``): a rescored submission is
  observed again, so ``_count`` only grows (a Prometheus counter, ``rate()`` works).
* **Initialisation.** The hash counts only once `READY_KEY` exists (the increments are a Lua
  script that checks it). The first scrape that finds it missing (a new deployment, a Redis
  restart without persistence, a ``FLUSHALL``) fills the hash from the database under a Redis
  lock (`ensure_initialised`), once for the whole cluster; ``python -m leaderboard
  metrics-rebuild`` does the same on demand. Status changes committed in the milliseconds
  between that read and the write may be missed or counted twice; the rebuild command fixes
  any such drift.
* **Outages.** A Redis error after a commit never fails the commit: the deltas stay in the
  process and go out with the next commit's (lost only if the process dies before Redis comes
  back; then ``metrics-rebuild``).
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import timezone

import redis
from sqlalchemy import case, event, func, inspect, literal, select
from sqlalchemy.orm import Session

from leaderboard.server.models import IN_FLIGHT, Submission

log = logging.getLogger(__name__)

#: statuses counted by the hash (the others are in flight, counted by a bounded query)
FINISHED = ("scored", "failed")
#: upper bounds (seconds) of the scoring-duration histogram: the scoring timeout is 600 s
DURATION_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
HASH_KEY = "lb:metrics:submissions"
READY_KEY = "lb:metrics:submissions:ready"
LOCK_KEY = "lb:metrics:submissions:init"
#: how long an initialisation may hold the lock (it reads two aggregates)
LOCK_TTL_S = 120
_INFO_KEY = "lb_ops_counter_deltas"

# KEYS[1] hash, KEYS[2] ready marker; ARGV: field, increment, field, increment, ...
_APPLY = """
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
for i = 1, #ARGV, 2 do redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass
class Histogram:
    """Cumulative bucket counts (one per `DURATION_BUCKETS` bound, then +Inf), count, sum."""

    buckets: list[float] = field(default_factory=lambda: [0.0] * (len(DURATION_BUCKETS) + 1))
    count: float = 0.0
    total: float = 0.0


@dataclass
class Snapshot:
    """Finished submissions: counts per (status, kind) and the duration histogram per outcome."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    durations: dict[str, Histogram] = field(
        default_factory=lambda: {o: Histogram() for o in FINISHED})


# -- field names in the hash ---------------------------------------------------------------

def _count_field(status: str, kind: str) -> str:
    return f"n|{status}|{kind}"


def _hist_fields(outcome: str, seconds: float) -> dict[str, float]:
    """The increments that observe one duration of ``outcome``."""
    out = {f"h|{outcome}|count": 1.0, f"h|{outcome}|sum": seconds}
    for i, bound in enumerate(DURATION_BUCKETS):
        if seconds <= bound:
            out[f"h|{outcome}|b|{i}"] = 1.0
    out[f"h|{outcome}|b|{len(DURATION_BUCKETS)}"] = 1.0  # +Inf
    return out


def _snapshot_fields(snap: Snapshot) -> dict[str, float]:
    out = {_count_field(s, k): float(n) for (s, k), n in snap.counts.items()}
    for outcome, h in snap.durations.items():
        out[f"h|{outcome}|count"] = h.count
        out[f"h|{outcome}|sum"] = h.total
        for i, v in enumerate(h.buckets):
            out[f"h|{outcome}|b|{i}"] = v
    return out


def _parse(raw: dict[bytes, bytes]) -> Snapshot:
    snap = Snapshot()
    for k, v in raw.items():
        parts, value = k.decode().split("|"), float(v)
        if parts[0] == "n" and len(parts) == 3:
            snap.counts[(parts[1], parts[2])] = int(round(value))
        elif parts[0] == "h" and parts[1] in snap.durations:
            h = snap.durations[parts[1]]
            if parts[2] == "count":
                h.count = value
            elif parts[2] == "sum":
                h.total = value
            elif parts[2] == "b" and 0 <= int(parts[3]) < len(h.buckets):
                h.buckets[int(parts[3])] = value
    return snap


# -- the database side -------------------------------------------------------------------------

def _seconds(session: Session):
    """SQL for ``finished_at - started_at`` in seconds on this backend (NULL when either is)."""
    if session.get_bind().dialect.name == "sqlite":
        return (func.julianday(Submission.finished_at)
                - func.julianday(Submission.started_at)) * 86400.0
    return func.extract("epoch", Submission.finished_at - Submission.started_at)


def in_flight(session: Session) -> dict[tuple[str, str], int]:
    """Submissions received, queued or scoring, per (status, kind): an index range scan."""
    return {(s, k): n for s, k, n in session.execute(
        select(Submission.status, Submission.kind, func.count())
        .where(Submission.status.in_(IN_FLIGHT))
        .group_by(Submission.status, Submission.kind))}


def _can_materialize(session: Session) -> bool:
    """``WITH x AS MATERIALIZED``: SQLite >= 3.35, PostgreSQL >= 12."""
    dialect = session.get_bind().dialect
    if dialect.name == "sqlite":
        import sqlite3
        return sqlite3.sqlite_version_info >= (3, 35, 0)
    return dialect.name == "postgresql" and (dialect.server_version_info or (0,)) >= (12,)


def from_database(session: Session) -> Snapshot:
    """The finished counts and histograms, aggregated inside the database: one scan of the
    finished rows, each row's duration computed once (a materialized CTE) and put in its
    bucket; a few dozen rows reach Python, never the submissions."""
    rows = select(Submission.status.label("status"), Submission.kind.label("kind"),
                  _seconds(session).label("d")).where(Submission.status.in_(FINISHED))
    x = rows.cte("finished_durations")
    if _can_materialize(session):  # else the planner may inline it: correct, slower
        x = x.prefix_with("MATERIALIZED")
    bucket = case((x.c.d.is_(None), -1),
                  *[(x.c.d <= b, i) for i, b in enumerate(DURATION_BUCKETS)],
                  else_=len(DURATION_BUCKETS)).label("bucket")
    total = func.sum(case((x.c.d < 0, literal(0.0)), else_=x.c.d))
    snap = Snapshot()
    for status, kind, b, n, secs in session.execute(
            select(x.c.status, x.c.kind, bucket, func.count(), total)
            .group_by(x.c.status, x.c.kind, bucket)):
        snap.counts[(status, kind)] = snap.counts.get((status, kind), 0) + n
        if b < 0 or status not in snap.durations:
            continue  # never started (failed before it ran): counted, not timed
        h = snap.durations[status]
        h.count += n
        h.total += float(secs or 0.0)
        for i in range(b, len(h.buckets)):  # cumulative: every bound at or above its own
            h.buckets[i] += n
    return snap


# -- the Redis side ----------------------------------------------------------------------------

def read(conn: redis.Redis) -> Snapshot | None:
    """The counters, or None when they are not initialised (raises RedisError)."""
    pipe = conn.pipeline(transaction=True)
    pipe.exists(READY_KEY)
    pipe.hgetall(HASH_KEY)
    ready, raw = pipe.execute()
    return _parse(raw) if ready else None


def rebuild(conn: redis.Redis, db, *, wait: bool = False) -> Snapshot | None:
    """Fill the counters from the database under the cluster-wide lock; returns what was
    written, or None when another process holds the lock (``wait``: wait for it instead)."""
    token = uuid.uuid4().hex
    lock = conn.set(LOCK_KEY, token, nx=True, ex=LOCK_TTL_S)
    while not lock and wait:
        threading.Event().wait(0.2)
        lock = conn.set(LOCK_KEY, token, nx=True, ex=LOCK_TTL_S)
    if not lock:
        return None
    try:
        with db.scope() as session:
            snap = from_database(session)
        pipe = conn.pipeline(transaction=True)
        pipe.delete(HASH_KEY)
        fields = _snapshot_fields(snap)
        if fields:
            pipe.hset(HASH_KEY, mapping=fields)
        pipe.set(READY_KEY, "1")
        pipe.execute()
        log.info("metrics counters initialised from the database: %s",
                 " ".join(f"{s}/{k}={n}" for (s, k), n in sorted(snap.counts.items())) or "empty")
        return snap
    finally:
        conn.eval(_RELEASE, 1, LOCK_KEY, token)


def ensure_initialised(conn: redis.Redis, db) -> Snapshot | None:
    """The counters, initialising them first when missing. None when another process is
    initialising them right now (the caller reads the database for this once)."""
    snap = read(conn)
    if snap is not None:
        return snap
    return rebuild(conn, db)


# -- the event listener ------------------------------------------------------------------------

def _status_change(obj) -> tuple[str | None, str | None]:
    """(old status, new status) of a flushed, already persistent Submission."""
    hist = inspect(obj).attrs.status.history
    if not hist.has_changes():
        return obj.status, obj.status
    old = hist.deleted[0] if hist.deleted else None
    return old, (hist.added[0] if hist.added else None)


def _duration(obj) -> float | None:
    start, end = obj.started_at, obj.finished_at
    if start is None or end is None:
        return None
    if (start.tzinfo is None) != (end.tzinfo is None):
        start, end = start.replace(tzinfo=timezone.utc), end.replace(tzinfo=timezone.utc)
    return max((end - start).total_seconds(), 0.0)


def deltas_of_flush(session: Session) -> Counter:
    """The hash increments the pending flush of ``session`` implies (see the module docstring)."""
    out: Counter = Counter()
    for obj in session.new:
        if isinstance(obj, Submission) and obj.status in FINISHED:
            out[_count_field(obj.status, obj.kind or "predictions")] += 1
    for obj in session.dirty:
        if not isinstance(obj, Submission):
            continue
        old, new = _status_change(obj)
        if old == new:
            continue
        kind = obj.kind or "predictions"
        if old in FINISHED:
            out[_count_field(old, kind)] -= 1
        if new in FINISHED:
            out[_count_field(new, kind)] += 1
            seconds = _duration(obj)
            if seconds is not None:
                out.update(_hist_fields(new, seconds))
    for obj in session.deleted:
        if isinstance(obj, Submission):
            committed = inspect(obj).committed_state.get("status", obj.status)
            if committed in FINISHED:
                out[_count_field(committed, obj.kind or "predictions")] -= 1
    return out


class _Publisher:
    """Applies the deltas of committed transactions to the hash; keeps them across outages.

    After a failure it leaves Redis alone for `RETRY_S` (the deltas wait in memory), so an
    outage costs one connection timeout per `RETRY_S`, not one per commit."""

    RETRY_S = 5.0

    def __init__(self, conn: redis.Redis):
        self.conn = conn
        self._pending: Counter = Counter()
        self._lock = threading.Lock()
        self._quiet_until = 0.0

    def publish(self, deltas: Counter) -> None:
        with self._lock:
            self._pending.update(deltas)
            args = [x for k, v in self._pending.items() if v for x in (k, repr(float(v)))]
            if not args:
                self._pending.clear()
                return
            if time.monotonic() < self._quiet_until:
                return
            try:
                self.conn.eval(_APPLY, 2, HASH_KEY, READY_KEY, *args)
            except redis.exceptions.RedisError:
                self._quiet_until = time.monotonic() + self.RETRY_S
                log.warning("metrics counters not updated (Redis unreachable); %d deltas kept "
                            "for a later commit", len(args) // 2)
                return
            self._pending.clear()


def install(db, conn: redis.Redis | None) -> None:
    """Keep the counters of ``conn`` up to date from every session of ``db`` (nothing without
    Redis: the scrape then aggregates in the database)."""
    if conn is None:
        return
    publisher = _Publisher(conn)
    factory = db.Session

    @event.listens_for(factory, "after_flush")
    def _collect(session, _ctx):
        deltas = deltas_of_flush(session)
        if deltas:
            session.info.setdefault(_INFO_KEY, Counter()).update(deltas)

    @event.listens_for(factory, "after_commit")
    def _publish(session):
        deltas = session.info.pop(_INFO_KEY, None)
        if deltas:
            publisher.publish(deltas)

    @event.listens_for(factory, "after_rollback")
    def _forget(session):
        session.info.pop(_INFO_KEY, None)
