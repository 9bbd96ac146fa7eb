"""Build a split's degraded copies once (the ``admin`` queue's job, or inline without Redis).

``build_robustness_copies(build_id)``: decrypt the split's labels (they pick the stratified
subset), plan the copies (`leaderboard.builders.copies.plan_copies`: the cache key is the pack
digest x suite signatures), and either reuse a folder already built under that key (no file is
touched; the row says ``reused``) or build it, writing progress to the row about once a second.
A second row for the same key is folded into the first, so there is one row per key.
Failures are recorded on the row with the reason (the item and condition that failed) and
raised.
"""
from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from pathlib import Path

from flask import current_app
from sqlalchemy import select

from leaderboard.core.table import Table
from leaderboard.server import labels_crypto
from leaderboard.server.db import get_db
from leaderboard.server.jobs import lease
from leaderboard.server.jobs.queue import current_job_id, get_queue, redis_connection
from leaderboard.server.models import Benchmark, LabelSet, utcnow
from leaderboard.server.models.robustness import RobustnessBuild
from leaderboard.server.services import robustness as svc

log = logging.getLogger(__name__)

BUILD_QUEUE = "admin"
JOB_FUNC = "leaderboard.server.jobs.robustness.build_robustness_copies"
DEFAULT_TIMEOUT_S = 6 * 3600
#: the lease a running build holds (`leaderboard.server.jobs.lease`), keyed by its row id
LEASE_KIND = "robustness-build"


def enqueue_build(build_id: int) -> None:
    """Enqueue the build (or run it inline without ``REDIS_URL``); never raises for the queue."""
    cfg = current_app.config
    queue = get_queue(BUILD_QUEUE)
    if queue is None:
        try:
            build_robustness_copies(build_id)
        except Exception:
            log.exception("inline robustness build=%s raised", build_id)
        return
    try:
        queue.enqueue(JOB_FUNC, build_id, job_id=f"robustness-build-{build_id}",
                      job_timeout=int(cfg.get("ROBUSTNESS_BUILD_TIMEOUT_S", DEFAULT_TIMEOUT_S)),
                      result_ttl=cfg["JOB_RESULT_TTL_S"], failure_ttl=cfg["JOB_FAILURE_TTL_S"],
                      retry=None, description=f"build robustness copies {build_id}")
    except Exception:
        log.warning("enqueue robustness build=%s failed; request it again", build_id,
                    exc_info=True)


def build_robustness_copies(build_id: int) -> dict:
    # lazy: the builders need the [builders] extra (Pillow, ffmpeg), which a server may lack
    from leaderboard.builders.copies import build_copies, copies_dir, is_built, plan_copies

    cfg = current_app.config
    db = get_db()
    build_id = int(build_id)
    with db.scope() as session:
        row = session.get(RobustnessBuild, build_id)
        if row is None or row.status not in ("queued", "failed"):
            return {"build": build_id, "status": "skipped"}
        bench = session.get(Benchmark, row.benchmark_id)
        ls = session.scalar(select(LabelSet).where(LabelSet.benchmark_id == bench.id,
                                                   LabelSet.split == row.split))
        if ls is None:
            row.status, row.error = "failed", f"{bench.key} has no labels for {row.split!r}"
            return {"build": build_id, "status": "failed"}
        row.status, row.started_at = "building", utcnow()
        pack_path, split, ciphertext = bench.pack_path, row.split, ls.ciphertext
        root = svc.copies_root(cfg["DATA_DIR"], bench)
        config = svc.config_of(bench)
    # the heartbeat the reconciler reads (`admin_recovery`): a build whose lease lapses lost its
    # worker; a build folded into an older row of the same key holds that row's lease too
    conn, owner = redis_connection(), current_job_id()
    with ExitStack() as leases:
        leases.enter_context(lease.hold(conn, LEASE_KIND, build_id, owner))
        try:
            labels = Table.from_bytes(labels_crypto.decrypt(ciphertext, keys=cfg["LABEL_KEYS"]))
            plan = plan_copies(pack_path, split, labels=labels, config=config)
            if plan is None:
                raise ValueError(f"split {split!r} has no robustness plan")
            folder = copies_dir(root, plan)
            reused = is_built(folder)
            settled = _settle_key(build_id, plan.key, plan.n_files)
            if settled != build_id:
                leases.enter_context(lease.hold(conn, LEASE_KIND, settled, owner))
            build_id = settled
            if not reused:
                last = [0.0]

                def progress(done: int, total: int) -> None:
                    if time.monotonic() - last[0] >= 1.0 or done == total:
                        last[0] = time.monotonic()
                        with db.scope() as s:
                            r = s.get(RobustnessBuild, build_id)
                            r.done, r.total = done, total

                build_copies(plan, root, progress=progress)
        except Exception as exc:
            log.exception("robustness build=%s failed", build_id)
            with db.scope() as session:
                r = session.get(RobustnessBuild, build_id)
                r.status, r.error, r.finished_at = ("failed", f"{type(exc).__name__}: {exc}",
                                                    utcnow())
            raise
    with db.scope() as session:
        r = session.get(RobustnessBuild, build_id)
        r.status, r.reused, r.finished_at = "ready", reused, utcnow()
        r.done = r.total = plan.n_files
        r.path = str(Path(folder).relative_to(Path(cfg["DATA_DIR"])))
    log.info("robustness build=%s key=%s outcome=%s files=%s", build_id, plan.key,
             "reused" if reused else "built", plan.n_files)
    return {"build": build_id, "status": "ready", "reused": reused, "key": plan.key}


def _settle_key(build_id: int, key: str, total: int) -> int:
    """Give the row its cache key; when a row of that key exists, fold this one into it (the
    older row is the one kept, so its history stays) and return the kept row's id."""
    with get_db().scope() as session:
        row = session.get(RobustnessBuild, build_id)
        older = session.scalar(select(RobustnessBuild).where(
            RobustnessBuild.benchmark_id == row.benchmark_id,
            RobustnessBuild.split == row.split, RobustnessBuild.cache_key == key))
        if older is not None and older.id != row.id:
            older.status, older.error = "building", None
            older.pack_version, older.method_json = row.pack_version, row.method_json
            session.delete(row)
            older.total = total
            return older.id
        row.cache_key, row.total = key, total
        return row.id
