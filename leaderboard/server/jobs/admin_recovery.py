"""Admin jobs whose worker died: robustness copy builds and pack builds (issue 36, item 7).

Both run on the ``admin`` queue and hold a lease while they run (`leaderboard.server.jobs.lease`:
``robustness-build:<row id>``, ``pack-build:<build id>``). Each reconciler pass
(`leaderboard.server.jobs.reconcile`) looks at every build still "queued" or running
("building" for a robustness build's row, "running" in a pack build's status file):

- its lease is held, or its job waits in the ``admin`` queue (waiting, deferred, a retry not
  overdue): alive, nothing to do;
- otherwise the pass notes when it first saw it so (``lb:lease-missing:<kind>:<id>`` in Redis)
  and acts once that is `DEAD_AFTER_S` ago, on a later pass: one missing lease is not evidence
  enough, since a Redis that restarted empty has lost every lease until its job renews it
  (within ``lease.RENEW_S``). A Redis flush erases the notes too, which only restarts the clock.

Acting means: a build that never started (its job lost to a flush, or a worker killed between
dequeue and start) is enqueued again; a build cut while running is marked failed with the reason
("its worker stopped ...; request it again") and its partial files are removed (a robustness
build's ``.<key>.tmp-*`` folder beside its copies, a pack build's half-written output folder).
A build is never restarted by itself after a death: a build that kills its worker (memory,
a huge release) would otherwise do so forever. Without Redis (inline builds, in the web
process) nothing here runs; a pack build's status then reads as failed after two silent hours
(`leaderboard.server.jobs.builds.read_status`).
"""
from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import redis
from flask import current_app
from sqlalchemy import select

from leaderboard.server.db import get_db
from leaderboard.server.jobs import builds, lease, queue, robustness
from leaderboard.server.models import Benchmark, utcnow
from leaderboard.server.models.robustness import RobustnessBuild
from leaderboard.server.services.robustness import copies_root

log = logging.getLogger(__name__)

ADMIN_QUEUE = builds.BUILD_QUEUE
#: seconds a lease must have been missing (seen so on two passes) before a build counts as dead
DEAD_AFTER_S = lease.TTL_S
_MISSING = "lb:lease-missing:"


@dataclass
class AdminRecovery:
    """What one pass did: ``"robustness-build:<id>"`` / ``"pack-build:<id>"`` entries."""

    failed: list[str] = field(default_factory=list)
    requeued: list[str] = field(default_factory=list)


class _Clock:
    """When a pass first saw each lease missing (kept in Redis so that any reconciler, and the
    next pass after a restart of this one, shares it)."""

    def __init__(self, conn: redis.Redis, now: datetime):
        self.conn, self.now = conn, now.timestamp()

    def _key(self, kind: str, ident) -> str:
        return _MISSING + lease.lease_key(kind, ident).removeprefix("lb:lease:")

    def missing_for(self, kind: str, ident) -> float:
        key = self._key(kind, ident)
        self.conn.set(key, repr(self.now), nx=True, ex=24 * 3600)
        first = self.conn.get(key)
        return self.now - float(first) if first is not None else 0.0

    def alive(self, kind: str, ident) -> None:
        self.conn.delete(self._key(kind, ident))


def recover_admin_jobs(*, now: datetime | None = None) -> AdminRecovery:
    """One pass over the builds in flight (inside an app context). Never raises for Redis."""
    out = AdminRecovery()
    conn = queue.redis_connection()
    if conn is None:
        return out
    now = now or utcnow()
    try:
        view = queue.queue_view(ADMIN_QUEUE, conn)
        clock = _Clock(conn, now)
        grace_s = current_app.config["RECOVERY_GRACE_S"]
        _robustness_builds(conn, view, clock, now, grace_s, out)
        _pack_builds(conn, view, clock, now, grace_s, out)
    except redis.exceptions.RedisError as exc:
        log.warning("reconcile admin jobs: Redis is not answering (%s); next pass",
                    type(exc).__name__)
    return out


def _robustness_builds(conn, view, clock: _Clock, now, grace_s, out: AdminRecovery) -> None:
    kind, db = robustness.LEASE_KIND, get_db()
    with db.scope() as session:
        rows = session.execute(select(RobustnessBuild.id, RobustnessBuild.status)
                               .where(RobustnessBuild.status.in_(("queued", "building")))
                               .order_by(RobustnessBuild.id)).all()
    alive = lease.held(conn, kind, [r.id for r in rows])
    for build_id, status in rows:
        if build_id in alive or view.holds(f"robustness-build-{build_id}", now=now,
                                           grace_s=grace_s):
            clock.alive(kind, build_id)
            continue
        if clock.missing_for(kind, build_id) < DEAD_AFTER_S:
            continue
        with db.scope() as session:
            row = session.get(RobustnessBuild, build_id)
            if row is None or row.status != status:
                continue  # it moved on since we looked
            if status == "building":
                row.status, row.finished_at = "failed", utcnow()
                row.error = ("the build stopped: its worker stopped during the build (no "
                             f"heartbeat for {int(DEAD_AFTER_S)} s); request it again")
                bench = session.get(Benchmark, row.benchmark_id)
                root, key = copies_root(current_app.config["DATA_DIR"], bench), row.cache_key
        clock.alive(kind, build_id)
        if status == "queued":
            robustness.enqueue_build(build_id)
            out.requeued.append(f"{kind}:{build_id}")
            log.info("reconcile robustness build=%s outcome=requeued", build_id)
            continue
        removed = _remove_partial_copies(root, key)
        out.failed.append(f"{kind}:{build_id}")
        log.warning("reconcile robustness build=%s outcome=failed partial_removed=%s", build_id,
                    removed)


def _remove_partial_copies(root: Path, key: str) -> int:
    """Remove the temporary folders a build of ``key`` writes before its rename
    (`leaderboard.builders.copies.build_copies`); the finished ``root/<key>`` is never touched."""
    if not key or not root.is_dir():
        return 0
    removed = 0
    for tmp in root.glob(f".{key}.tmp-*"):
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
            removed += 1
    return removed


def _pack_builds(conn, view, clock: _Clock, now, grace_s, out: AdminRecovery) -> None:
    cfg = current_app.config
    kind, folder = builds.LEASE_KIND, Path(cfg["DATA_DIR"]) / "builds"
    pending = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            status = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if status.get("state") in ("queued", "running") and builds.BUILD_ID.match(path.stem):
            pending.append((path.stem, status))
    alive = lease.held(conn, kind, [b for b, _ in pending])
    for build_id, status in pending:
        if build_id in alive or view.holds(f"build-{build_id}", now=now, grace_s=grace_s):
            clock.alive(kind, build_id)
            continue
        if clock.missing_for(kind, build_id) < DEAD_AFTER_S:
            continue
        clock.alive(kind, build_id)
        if status["state"] == "queued":
            builds.enqueue_job(queue.get_queue(ADMIN_QUEUE), status, cfg)
            out.requeued.append(f"{kind}:{build_id}")
            log.info("reconcile pack build=%s outcome=requeued", build_id)
        elif builds.fail_dead_build(cfg["DATA_DIR"], build_id,
                                    "the build stopped: its worker stopped during the build (no "
                                    f"heartbeat for {int(DEAD_AFTER_S)} s); start it again"):
            out.failed.append(f"{kind}:{build_id}")
            log.warning("reconcile pack build=%s outcome=failed (partial output removed)",
                        build_id)
