"""Admin pack builds from a server-side release folder, with progress (issue 8).

An admin starts a build from the benchmarks page (`leaderboard.server.web.admin_builds`):
`check_request` validates the form, `start_build` writes the "queued" status and hands the build
to the RQ ``admin`` queue (worker: ``python -m leaderboard worker --queues admin``; a queue of its
own, so a multi-hour VCT² build never holds up scoring), or, without ``REDIS_URL``, runs it in a
background thread of the web process so the request returns at once (development only: the build
dies with the process). `run_build` calls `leaderboard.builders.build`, writes its progress, and on
success imports the pack (`services.benchmarks.import_pack`), audits the end and invalidates the
benchmark's boards.

The status lives in ``DATA_DIR/builds/<build_id>.json``, not in the database, because the builder
reports progress many times a second and the file is rewritten atomically (temporary file +
``os.replace``), so a reader never sees half a file::

    {"id", "benchmark", "source", "out", "options": {dev_fraction, private_fraction, seed},
     "actor_id", "state": "queued" | "running" | "done" | "failed", "done", "total" (or null),
     "message", "error" (the SourceError / PackError text naming file and record, or null),
     "report": {"counts", "tasks", "notes"} (or null), "imported": {"key", "version"} (or null),
     "created_at", "updated_at", "finished_at"}
"""
from __future__ import annotations

import json
import logging
import math
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import redis
from flask import current_app

from leaderboard.builders import BENCHMARKS, check_paths
from leaderboard.core.errors import LeaderboardError
from leaderboard.server.access import audit
from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.db import get_db
from leaderboard.server.errors import ServiceError
from leaderboard.server.jobs import lease
from leaderboard.server.jobs.queue import current_job_id, get_queue, redis_connection
from leaderboard.server.jobs.reruns import after_import as advance_reruns
from leaderboard.server.models import User, utcnow
from leaderboard.server.services.benchmarks import check_pack_path
from leaderboard.server.services.release_import import import_release

log = logging.getLogger(__name__)

BUILD_QUEUE = "admin"
JOB_FUNC = "leaderboard.server.jobs.builds.run_build"
#: the lease a running build holds (`leaderboard.server.jobs.lease`), keyed by its build id
LEASE_KIND = "pack-build"
#: RQ job timeout of one build unless the config sets BUILD_TIMEOUT_S (VCT² takes hours)
DEFAULT_TIMEOUT_S = 6 * 3600
STATES = ("queued", "running", "done", "failed")
FINISHED = ("done", "failed")
BUILD_ID = re.compile(r"^[a-z0-9]+-\d{8}T\d{6}-[0-9a-f]{6}$")
#: progress writes at most this often (the builders call back once per file)
PROGRESS_EVERY_S = 0.5


class BuildRequestError(ValueError):
    """The build form is invalid; ``errors`` lists one message per bad field."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


# -- the status file ----------------------------------------------------------------------------
def status_path(data_dir: str | os.PathLike, build_id: str) -> Path:
    """``DATA_DIR/builds/<build_id>.json``; ValueError for an id not made by `new_build_id`
    (the id comes from a URL and must never name another file)."""
    if not isinstance(build_id, str) or not BUILD_ID.match(build_id):
        raise ValueError(f"not a build id: {build_id!r}")
    return Path(data_dir) / "builds" / f"{build_id}.json"


def write_status(path: Path, status: dict[str, Any]) -> None:
    """Write ``status`` atomically: a temporary file in the same folder, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(status, fh, ensure_ascii=False, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_status(data_dir: str | os.PathLike, build_id: str) -> dict[str, Any] | None:
    """The build's status, or None when there is no such build (or the id is malformed)."""
    try:
        path = status_path(data_dir, build_id)
    except ValueError:
        return None
    try:
        status = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return _stale_as_failed(status)


#: a queued or running build whose status has not moved for this long has lost its worker
STALE_AFTER = timedelta(hours=2)


def _stale_as_failed(status: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """Report a build whose worker died (no update for `STALE_AFTER`) as failed, with why.

    Derived when read, so no reconciler is needed; the file keeps what the worker last wrote.
    Builders report progress at least every 100 files, so two silent hours mean no worker.
    """
    if status.get("state") not in ("queued", "running") or not status.get("updated_at"):
        return status
    try:
        updated = datetime.fromisoformat(status["updated_at"])
    except (TypeError, ValueError):
        return status
    if updated.tzinfo is None:
        updated = updated.replace(tzinfo=timezone.utc)
    silent = (now or utcnow()) - updated
    if silent < STALE_AFTER:
        return status
    return {**status, "state": "failed",
            "error": f"the build stopped: no progress for {int(silent.total_seconds() // 60)} "
                     "minutes (its worker probably died); start it again"}


def _update(path: Path, status: dict[str, Any], **changes) -> dict[str, Any]:
    status.update(changes, updated_at=utcnow().isoformat())
    write_status(path, status)
    return status


# -- the request --------------------------------------------------------------------------------
def new_build_id(key: str) -> str:
    return f"{key}-{utcnow().strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"


def _fraction(name: str, raw: Any, default: float, errors: list[str]) -> float:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        errors.append(f"{name} must be a number in [0, 1], got {raw!r}")
        return default
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        errors.append(f"{name} must be a number in [0, 1], got {raw!r}")
    return value


def check_request(*, key: Any, source: Any, out: Any = None, dev_fraction: Any = None,
                  private_fraction: Any = None, seed: Any = None, data_dir: str | os.PathLike,
                  build_id: str | None = None, roots: list[str] | None = None) -> dict[str, Any]:
    """Validate the build form (raw strings) into the request `start_build` takes.

    ``out`` empty -> ``DATA_DIR/built/<build_id>`` (``<key>-<UTC time>-<6 hex>``). Paths must be
    absolute (they are read by a worker whose working folder is not the admin's business).
    With ``roots`` (the admin pages pass ``PACK_ROOTS``) the release must lie under one of them
    (`services.benchmarks.check_pack_path`) and ``out`` under one of them or ``DATA_DIR/built``.
    Raises `BuildRequestError` listing every bad field."""
    errors: list[str] = []
    key = (key or "").strip() if isinstance(key, str) else key
    if key not in BENCHMARKS:
        errors.append(f"benchmark must be one of {list(BENCHMARKS)}, got {key!r}")
    source = (source or "").strip() if isinstance(source, str) else ""
    if not source:
        errors.append("give the server-side path of the authors' release folder")
    elif not os.path.isabs(source):
        errors.append(f"the release path must be absolute, got {source!r}")
    elif not Path(source).is_dir():
        errors.append(f"the release folder {source!r} does not exist on the server")
    dev = _fraction("dev_fraction", dev_fraction, 0.3, errors)
    private = _fraction("private_fraction", private_fraction, 0.5, errors)
    raw_seed = seed.strip() if isinstance(seed, str) else seed
    try:
        seed_value = 0 if raw_seed in (None, "") else int(raw_seed)
    except (TypeError, ValueError):
        errors.append(f"seed must be a whole number, got {seed!r}")
        seed_value = 0
    build_id = build_id or new_build_id(key if key in BENCHMARKS else "pack")
    out = (out or "").strip() if isinstance(out, str) else ""
    if not out:
        out = str(Path(data_dir) / "built" / build_id)
    elif not os.path.isabs(out):
        errors.append(f"the output folder must be an absolute path, got {out!r}")
    if not errors and roots is not None:
        try:
            check_pack_path(source, roots)
        except ServiceError as exc:
            errors.append(exc.message)
        writable = [*roots, str((Path(data_dir) / "built").resolve())]
        if not any(Path(out).resolve().is_relative_to(r) for r in writable):
            errors.append(f"the output folder must be inside one of {writable}, got {out!r}")
    if not errors:
        try:
            check_paths(Path(source), Path(out))
        except ValueError as exc:
            errors.append(str(exc).replace("--from ", "release ").replace("--out ", "output "))
    if errors:
        raise BuildRequestError(errors)
    return {"id": build_id, "benchmark": key, "source": source, "out": out,
            "options": {"dev_fraction": dev, "private_fraction": private, "seed": seed_value}}


# -- starting and running -----------------------------------------------------------------------
def start_build(request: dict[str, Any], *, actor_id: int | None) -> str:
    """Write the "queued" status of ``request`` (from `check_request`), then enqueue the build on
    the ``admin`` queue or start it in a background thread. Returns the build id."""
    app = current_app._get_current_object()
    cfg = app.config
    now = utcnow().isoformat()
    status = {**request, "actor_id": actor_id, "state": "queued", "done": 0, "total": None,
              "message": "waiting for a worker", "error": None, "report": None,
              "imported": None, "created_at": now, "updated_at": now, "finished_at": None}
    write_status(status_path(cfg["DATA_DIR"], request["id"]), status)
    queue = get_queue(BUILD_QUEUE)
    if queue is None:
        def target():
            with app.app_context():
                run_build(request["id"])
        threading.Thread(target=target, name=f"pack-build-{request['id']}", daemon=True).start()
        return request["id"]
    try:
        enqueue_job(queue, status, cfg)
    except redis.exceptions.RedisError as exc:
        # nothing will ever pick it up: say so on the page rather than leave it "queued"
        log.warning("enqueue build=%s failed", request["id"], exc_info=True)
        _update(status_path(cfg["DATA_DIR"], request["id"]), status, state="failed",
                error=f"could not reach the job queue: {exc}", finished_at=utcnow().isoformat())
    return request["id"]


def enqueue_job(queue, status: dict[str, Any], cfg) -> None:
    """Put the build of ``status`` on the ``admin`` queue (job ``build-<id>``); raises
    RedisError. Also the reconciler's re-queue of a queued build whose job was lost."""
    queue.enqueue(JOB_FUNC, status["id"], job_id=f"build-{status['id']}",
                  job_timeout=int(cfg.get("BUILD_TIMEOUT_S", DEFAULT_TIMEOUT_S)),
                  result_ttl=cfg["JOB_RESULT_TTL_S"], failure_ttl=cfg["JOB_FAILURE_TTL_S"],
                  description=f"build {status['benchmark']} pack {status['id']}")


def fail_dead_build(data_dir: str | os.PathLike, build_id: str, reason: str) -> bool:
    """The reconciler found the build's worker dead (`leaderboard.server.jobs.admin_recovery`):
    mark it failed with ``reason`` and remove its partial pack at ``out`` (what the builder's
    own failure path removes too). False when it is no longer queued or running."""
    path = status_path(data_dir, build_id)
    try:
        status = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    if status.get("state") not in ("queued", "running"):
        return False
    out = status.get("out")
    if status.get("state") == "running" and out and Path(out).is_dir():
        shutil.rmtree(out, ignore_errors=True)
    _update(path, status, state="failed", message="the build stopped", error=reason,
            finished_at=utcnow().isoformat())
    return True


def _progress_writer(path: Path, status: dict[str, Any]):
    last = [0.0]

    def progress(done: int, total: int | None, message: str) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_EVERY_S and not (total and done >= total):
            return
        last[0] = now
        _update(path, status, done=int(done), total=None if total is None else int(total),
                message=str(message)[:300])
    return progress


def run_build(build_id: str) -> dict[str, Any]:
    """The ``admin`` queue's job (inside an app context): build, import, audit, invalidate.

    Never raises for a bad release or pack: the status says "failed" with the error text (which
    names the file and record). Returns the final status."""
    cfg = current_app.config
    path = status_path(cfg["DATA_DIR"], build_id)
    status = read_status(cfg["DATA_DIR"], build_id)
    if status is None:
        raise ValueError(f"no build {build_id!r} under {path.parent}")
    if status["state"] in FINISHED:
        return status  # a re-delivered job: never build twice
    # the heartbeat the reconciler reads: a build whose lease lapses lost its worker
    with lease.hold(redis_connection(), LEASE_KIND, build_id, current_job_id()):
        return _run_build(build_id, cfg, path, status)


def _run_build(build_id: str, cfg, path: Path, status: dict[str, Any]) -> dict[str, Any]:
    # lazy: the builders need the [builders] extra (OpenCV, pyarrow), which a server may lack
    from leaderboard import builders

    _update(path, status, state="running", message="reading the release")
    opts = status["options"]
    outcome: dict[str, Any] = {}
    try:
        report = builders.build(status["benchmark"], status["source"], status["out"],
                                dev_fraction=opts["dev_fraction"],
                                private_fraction=opts["private_fraction"], seed=opts["seed"],
                                link_media=False, progress=_progress_writer(path, status))
        outcome["report"] = {"counts": report.counts, "tasks": report.tasks,
                             "notes": list(report.notes)}
        # builders report every 100 files or so: the bar ends full, at the items written
        n = sum(report.counts.values())
        _update(path, status, report=outcome["report"], done=n, total=n,
                message="importing the pack")
        with get_db().scope() as session:
            done = import_release(session, status["out"], data_dir=cfg["DATA_DIR"],
                                  label_keys=cfg["LABEL_KEYS"])
            bench = done.bench
            outcome["imported"] = {"key": bench.key, "version": bench.version}
            # a new release changes every page of its family (`Imported.invalidate_all`)
            everything = done.invalidate_all
            _audit_end(session, audit, User, status, "done", outcome)
            bench_id = bench.id
        invalidate_boards(None if everything else outcome["imported"]["key"])
        # a new release's re-run campaign (issue 37), on the committed release; its progress
        # is on the release's re-runs page
        queued = advance_reruns(bench_id, created_by=status.get("actor_id"))
        log.info("build=%s reruns_queued=%d", build_id, len(queued))
        state, message, error = "done", "built and imported", None
    except (LeaderboardError, ValueError, OSError) as exc:
        # SourceError / PackError text names the file, record and field
        state, message, error = "failed", "the build stopped", _error_text(exc)
        log.warning("build=%s failed: %s", build_id, error)
    except Exception as exc:
        log.exception("build=%s crashed", build_id)
        state, message = "failed", "the build crashed"
        error = f"internal error ({type(exc).__name__}); see the worker log"
    if state == "failed":
        try:
            with get_db().scope() as session:
                _audit_end(session, audit, User, status, "failed", {"error": error})
        except Exception:
            log.exception("build=%s: could not audit the failure", build_id)
    return _update(path, status, state=state, message=message, error=error,
                   imported=outcome.get("imported"), finished_at=utcnow().isoformat())


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename:
        return f"cannot read {exc.filename}: {exc.strerror or exc}"
    return str(exc)[:4000]


def _audit_end(session, audit, User, status: dict, outcome: str, detail: dict) -> None:
    actor = session.get(User, status["actor_id"]) if status.get("actor_id") else None
    audit.record(session, actor, "admin.pack.build", f"benchmark:{status['benchmark']}",
                 {"phase": "end", "build": status["id"], "outcome": outcome, **detail})
