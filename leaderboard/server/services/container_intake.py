"""Accepting detector images (``docker save`` tarballs): checks, storage, inspection, the row.

Same shape as `leaderboard.server.services.submissions.create_submission` (fields, team, open
benchmark, quota), plus, for container runs:

- the data-use gate (`leaderboard.server.access.gate.can_access`, ``"container_run"``) for held-out
  splits, checked before a byte is stored: refused -> 403 with the gate's reason;
- the tarball is streamed to ``DATA_DIR/images/`` under its own cap (``MAX_IMAGE_MB``);
- it is inspected with `harness.inspect_tarball` before anything is loaded into Docker. A
  rejected tarball becomes a *failed* submission at once ("image rejected: why"), counted toward
  the quota (issue 13: the team's error, and a free retry would decompress its layers again),
  and the tarball is deleted.

The caller commits, then enqueues accepted ones (`leaderboard.server.jobs.containers.enqueue_container`).
"""
from __future__ import annotations

import os
from datetime import datetime
from typing import IO

from harness import ImageRejected, Limits, inspect_tarball
from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.access.gate import can_access, is_scoring_only, scoring_only_reason
from leaderboard.server.errors import Forbidden
from leaderboard.server.models import Submission, User, utcnow
from leaderboard.server.services.submissions import (
    StoredFile,
    check_request,
    mark_failed,
    store_upload,
    submission_row,
    take_quota_or_raise,
)

IMAGES_DIR = "images"
REJECTED_PREFIX = "image rejected"


def store_image(stream: IO[bytes], *, data_dir: str | os.PathLike, max_bytes: int) -> StoredFile:
    """Stream ``stream`` to ``DATA_DIR/images/<uuid>.tar`` (see `store_upload`).

    The name says ``.tar`` whatever the compression: inspection and loading detect gzip.
    """
    return store_upload(stream, data_dir=data_dir, max_bytes=max_bytes, folder=IMAGES_DIR,
                        suffix=".tar", too_large_hint="make the image smaller (a slimmer base, "
                                                      "no build caches)")


def check_container_access(session, user: User, bench, split: str) -> None:
    """Raise Forbidden (403) with the gate's reason if ``user`` may not run ``split``.

    A scoring-only benchmark (no media to mount) refuses container runs on every split."""
    if is_scoring_only(bench):
        raise Forbidden(f"container submissions are not accepted: {scoring_only_reason(bench)}")
    if split not in HELD_OUT_SPLITS:
        return
    decision = can_access(session, user, bench, "container_run")
    if not decision:
        raise Forbidden(f"you may not run a container on the {split} split of {bench.key}: "
                        f"{decision.reason}")


def create_container_submission(
        session, *, user: User, benchmark: str, split: str, stream: IO[bytes],
        data_dir: str | os.PathLike, max_bytes: int, default_quota: "QuotaRules | int", limits: Limits,
        method_name: str, description: str = "", paper_url: str = "", code_url: str = "",
        is_public: bool = True, challenge: str = "", now: datetime | None = None,
        allow_rerun: bool = True) -> Submission:
    """Check, store and inspect an image tarball; add the row (``kind="container"``).

    Returns the submission: "received" (the caller enqueues it on the ``gpu`` queue) or, for a
    tarball inspection rejects, already "failed" with ``failure_reason`` "image rejected: ..."
    (counted toward the quota, issue 13: a broken image is the team's error and a free retry
    would decompress its layers again; never enqueued). ``allow_rerun`` (default on): the team
    lets the platform re-run the image on the benchmark's later releases (issue 37; the tarball
    is then kept after a clean run). Raises ServiceError as `create_submission` does,
    and Forbidden when the data-use gate refuses a held-out split (nothing is stored).
    """
    now = now or utcnow()
    bench, fields, phase = check_request(
        session, user=user, benchmark=benchmark, split=split, default_quota=default_quota,
        now=now, method_name=method_name, description=description, paper_url=paper_url,
        code_url=code_url, challenge=challenge)
    check_container_access(session, user, bench, split)
    stored = store_image(stream, data_dir=data_dir, max_bytes=max_bytes)
    try:
        rejected: ImageRejected | None = None
        try:
            inspect_tarball(stored.path, limits)
        except ImageRejected as exc:
            rejected = exc
        take_quota_or_raise(session, user, bench, split=split, default_quota=default_quota,
                            now=now, phase=phase)
        sub = submission_row(bench, user, split=split, kind="container", fields=fields,
                             stored=stored, data_dir=data_dir, is_public=is_public, now=now)
        sub.phase_id = phase.id if phase is not None else None
        sub.allow_rerun = bool(allow_rerun)
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
    mark_failed(sub, f"{REJECTED_PREFIX}: {exc.message}",
                detail={"reason": exc.reason, "problems": [], "total_problems": 0}, now=now)
