"""Accepting detector images (``docker save`` tarballs): checks, storage, inspection, the row.

Same shape as `leaderboard.services.submissions.create_submission` (fields, team, open
benchmark, quota), plus, for container runs:

- the data-use gate (`leaderboard.access.gate.can_access`, ``"container_run"``) for held-out
  splits, checked before a byte is stored: refused -> 403 with the gate's reason;
- the tarball is streamed to ``DATA_DIR/images/`` under its own cap (``MAX_IMAGE_MB``);
- it is inspected with `harness.inspect_tarball` before anything is loaded into Docker. A
  rejected tarball becomes a *failed* submission at once ("image rejected: why"), counted toward
  the quota like an invalid predictions file, and the tarball is deleted.

The caller commits, then enqueues accepted ones (`leaderboard.queue.enqueue_container`).
"""
from __future__ import annotations

import hashlib
import os
import uuid
from datetime import datetime
from pathlib import Path
from typing import IO

from harness import ImageRejected, Limits, inspect_tarball
from leaderboard.access.gate import can_access
from leaderboard.models import Submission, User, utcnow
from leaderboard.packs import HELD_OUT_SPLITS
from leaderboard.services import Forbidden, ServiceError
from leaderboard.services.benchmarks import get_benchmark
from leaderboard.services.submissions import (CHUNK, StoredFile, _check_fields, _quota_error,
                                              quota_status, take_quota)

IMAGES_DIR = "images"
REJECTED_PREFIX = "image rejected"


def store_image(stream: IO[bytes], *, data_dir: str | os.PathLike, max_bytes: int) -> StoredFile:
    """Stream ``stream`` to ``DATA_DIR/images/<uuid>.tar``, hashing it, stopping at ``max_bytes``.

    Raises ServiceError (413) naming the cap when larger, (400) when empty; nothing is kept then.
    The name says ``.tar`` whatever the compression: inspection and loading detect gzip.
    """
    folder = Path(data_dir) / IMAGES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uuid.uuid4().hex}.tar"
    digest, size = hashlib.sha256(), 0
    try:
        with open(path, "wb") as out:
            while chunk := stream.read(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise ServiceError(
                        f"the image tarball is larger than the {max_bytes // (1024 * 1024)} MB "
                        "limit; make the image smaller (a slimmer base, no build caches)",
                        status=413, code="too_large")
                digest.update(chunk)
                out.write(chunk)
        if size == 0:
            raise ServiceError("the uploaded file is empty", code="empty_file")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return StoredFile(path, digest.hexdigest(), size)


def check_container_access(session, user: User, bench, split: str) -> None:
    """Raise Forbidden (403) with the gate's reason if ``user`` may not run ``split``."""
    if split not in HELD_OUT_SPLITS:
        return
    decision = can_access(session, user, bench, "container_run")
    if not decision:
        raise Forbidden(f"you may not run a container on the {split} split of {bench.key}: "
                        f"{decision.reason}")


def create_container_submission(
        session, *, user: User, benchmark: str, split: str, stream: IO[bytes],
        data_dir: str | os.PathLike, max_bytes: int, default_quota: int, limits: Limits,
        method_name: str, description: str = "", paper_url: str = "", code_url: str = "",
        is_public: bool = True, now: datetime | None = None) -> Submission:
    """Check, store and inspect an image tarball; add the row (``kind="container"``).

    Returns the submission: "received" (the caller enqueues it on the ``gpu`` queue) or, for a
    tarball inspection rejects, already "failed" with ``failure_reason`` "image rejected: ..."
    (counted toward the quota; never enqueued). Raises ServiceError as `create_submission` does,
    and Forbidden when the data-use gate refuses a held-out split (nothing is stored).
    """
    now = now or utcnow()
    bench = get_benchmark(session, benchmark)
    method_name, description = (method_name or "").strip(), (description or "").strip()
    paper_url, code_url = (paper_url or "").strip(), (code_url or "").strip()
    problems = _check_fields(bench, split, method_name, paper_url, code_url, description)
    if problems:
        raise ServiceError("please correct these fields", problems)
    if user.team_id is None:
        raise Forbidden("join or create a team before submitting: quotas and boards are per team")
    if not bench.submissions_open:
        raise Forbidden(f"submissions to {bench.key} are closed")
    check_container_access(session, user, bench, split)
    status = quota_status(session, user.team_id, bench, default=default_quota, now=now)
    if status.left == 0:
        raise _quota_error(bench, status)
    stored = store_image(stream, data_dir=data_dir, max_bytes=max_bytes)
    try:
        rejected: ImageRejected | None = None
        try:
            inspect_tarball(stored.path, limits)
        except ImageRejected as exc:
            rejected = exc
        if not take_quota(session, user.team_id, bench, default=default_quota, now=now):
            raise _quota_error(bench, quota_status(session, user.team_id, bench,
                                                   default=default_quota, now=now))
        sub = Submission(benchmark_id=bench.id, split=split, team_id=user.team_id,
                         user_id=user.id, kind="container", method_name=method_name,
                         description=description, paper_url=paper_url, code_url=code_url,
                         is_public=bool(is_public), status="received",
                         file_path=str(stored.path.relative_to(Path(data_dir))),
                         file_sha256=stored.sha256, file_size=stored.size, created_at=now)
        if rejected is not None:
            _reject(sub, rejected, now=now)
            stored.path.unlink(missing_ok=True)
        session.add(sub)
        session.flush()
    except BaseException:
        stored.path.unlink(missing_ok=True)
        raise
    return sub


def _reject(sub: Submission, exc: ImageRejected, *, now: datetime) -> None:
    sub.status = "failed"
    sub.finished_at = now
    sub.failure_reason = f"{REJECTED_PREFIX}: {exc.message}"
    sub.failure_detail = {"reason": exc.reason, "problems": [], "total_problems": 0}
