"""Accepting prediction files: storage, quotas, the submission row and its status transitions.

Status machine (the database is the truth; queues only carry work)::

    received -> queued -> scoring -> scored
                  ^          |   \\-> failed  (invalid file: refunded; only scored work counts)
                  |          |    \\-> failed  (platform error / too many attempts: refunded)
                  +----------+  transient error, or the reconciler re-queues a stuck one

Quotas (per split and day, and per challenge phase) are taken in the same transaction that
inserts the submission row, and given back for invalid files and platform failures:
`leaderboard.server.services.quotas`.
"""
from __future__ import annotations

import hashlib
import os
import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from sqlalchemy import select
from sqlalchemy.orm import Session, object_session

from leaderboard.core.errors import ProblemList
from leaderboard.server.errors import Forbidden, NotFound, ServiceError
from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.models.challenges import ChallengePhase
from leaderboard.server.services import notices
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.services.eligibility import Allowance, check_split
from leaderboard.server.services.quotas import (  # noqa: F401  (callers import them from here)
    QuotaRules,
    QuotaStatus,
    phase_cap_error,
    phase_left,
    quota_error,
    quota_status,
    refund_quota,
    take_quota,
    take_quota_or_raise,
    utc_day,
)

CHUNK = 1024 * 1024
_URL_RE = re.compile(r"^https?://[^\s]{1,490}$")


@dataclass(frozen=True)
class StoredFile:
    path: Path
    sha256: str
    size: int


def store_upload(stream: IO[bytes], *, data_dir: str | os.PathLike, max_bytes: int,
                 folder: str = "uploads", suffix: str = ".jsonl",
                 too_large_hint: str = "gzip it (the server reads .jsonl.gz) or contact the "
                                       "organisers") -> StoredFile:
    """Stream ``stream`` to ``DATA_DIR/<folder>/<uuid><suffix>`` computing sha256, stopping at
    ``max_bytes``.

    Raises ServiceError (413) naming the limit when the file is larger, (400) when it is empty;
    nothing is kept then.
    """
    target = Path(data_dir) / folder
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{uuid.uuid4().hex}{suffix}"
    digest, size = hashlib.sha256(), 0
    try:
        with open(path, "wb") as out:
            while chunk := stream.read(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise ServiceError(
                        f"the file is larger than the {max_bytes // (1024 * 1024)} MB limit; "
                        f"{too_large_hint}", status=413, code="too_large")
                digest.update(chunk)
                out.write(chunk)
        if size == 0:
            raise ServiceError("the uploaded file is empty", code="empty_file")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return StoredFile(path, digest.hexdigest(), size)


def mark_failed(sub: Submission, reason: str, *, detail: dict | None,
                now: datetime | None = None) -> None:
    """Finish ``sub`` as "failed": ``reason`` is the team-facing line, ``detail`` the structured
    failure the submission page lists (None for platform errors); its deadline is cleared."""
    sub.status = "failed"
    sub.finished_at = now or utcnow()
    sub.deadline_at = None
    sub.failure_reason = reason
    sub.failure_detail = detail
    session = object_session(sub)
    if session is not None:  # the team reads it on its pages (issue 21)
        notices.for_submission(session, sub, "submission.failed",
                               f"Submission #{sub.id} ({sub.method_name}) failed: {reason}")


def _check_fields(bench: Benchmark, split: str, method_name: str, paper_url: str,
                  code_url: str, description: str) -> ProblemList:
    problems = ProblemList()
    splits = bench.meta_json.get("splits", [])
    if split not in splits:
        problems.add(f"unknown split {split!r}; {bench.key} has {splits}", field="split")
    if not 1 <= len(method_name) <= 120:
        problems.add("required, at most 120 characters", field="method_name")
    for name, value in (("paper_url", paper_url), ("code_url", code_url)):
        if value and not _URL_RE.match(value):
            problems.add(f"must be an http(s) link, got {value[:80]!r}", field=name)
    if len(description) > 5000:
        problems.add("at most 5000 characters", field="description")
    return problems


def create_submission(session: Session, *, user: User, benchmark: str, split: str,
                      stream: IO[bytes], data_dir: str | os.PathLike, max_bytes: int,
                      default_quota: QuotaRules | int, method_name: str, description: str = "",
                      paper_url: str = "", code_url: str = "", is_public: bool = True,
                      challenge: str = "", now: datetime | None = None) -> Submission:
    """Check the request, store the file, take quota and add the row (status "received").
    ``challenge`` (a key) makes it a submission to that challenge: its rules, quotas and phase
    board apply, and it records the phase (issue 33); empty, no challenge binds it.

    Nothing is stored if any check fails: ServiceError names the field (400), the missing team
    (403), closed submissions (403), a held-out split without the agreement (403,
    ``agreement_required`` with ``sign_url``), the exhausted daily quota (429, with ``limit``,
    ``left`` and ``resets_at``) or the phase cap (429). The caller commits, then enqueues
    (`leaderboard.server.jobs.scoring.enqueue_scoring`).
    """
    now = now or utcnow()  # one instant for the quota day and created_at
    bench, fields, phase = check_request(
        session, user=user, benchmark=benchmark, split=split, default_quota=default_quota,
        now=now, method_name=method_name, description=description, paper_url=paper_url,
        code_url=code_url, challenge=challenge)
    stored = store_upload(stream, data_dir=data_dir, max_bytes=max_bytes)
    try:
        take_quota_or_raise(session, user, bench, split=split, default_quota=default_quota,
                            now=now, phase=phase)
        sub = submission_row(bench, user, split=split, kind="predictions", fields=fields,
                             stored=stored, data_dir=data_dir, is_public=is_public, now=now)
        sub.phase_id = phase.id if phase is not None else None
        session.add(sub)
        session.flush()
    except BaseException:
        stored.path.unlink(missing_ok=True)
        raise
    return sub


def check_request(session: Session, *, user: User, benchmark: str, split: str,
                  default_quota: QuotaRules | int, now: datetime, method_name: str,
                  description: str, paper_url: str, code_url: str,
                  challenge: str = "") -> tuple[Benchmark, dict, ChallengePhase | None]:
    """The checks every submission kind makes before reading its body: fields (400), a team
    (403), open submissions (403), then `services.eligibility.check_split`: the rules of the
    challenge it is made to, if any (403), the agreement for a held-out split (403), quota and
    phase cap left (429). Returns the benchmark, the cleaned fields and the challenge phase the
    submission counts in (None when it is made to no challenge)."""
    bench = get_benchmark(session, benchmark)
    fields = {"method_name": (method_name or "").strip(),
              "description": (description or "").strip(),
              "paper_url": (paper_url or "").strip(), "code_url": (code_url or "").strip()}
    problems = _check_fields(bench, split, fields["method_name"], fields["paper_url"],
                             fields["code_url"], fields["description"])
    if problems:
        raise ServiceError("please correct these fields", problems)
    # fail fast, before reading a large body; the quota units are taken atomically later
    allowed = check_target(session, user=user, bench=bench, split=split,
                           default_quota=default_quota, now=now, challenge=challenge)
    return bench, fields, allowed.phase


def check_target(session: Session, *, user: User, bench: Benchmark, split: str,
                 default_quota: QuotaRules | int, now: datetime,
                 challenge: str = "") -> Allowance:
    """Whether ``user`` may submit to ``split`` of ``bench`` (made to ``challenge`` when it
    names one) now: a team (403), open submissions (403), then
    `services.eligibility.check_split`. What the pre-flight check (``GET
    /api/v1/submissions/check``) and the upload gate ask before any byte of a body is read."""
    splits = (bench.meta_json or {}).get("splits", [])
    if split not in splits:
        problems = ProblemList()
        problems.add(f"unknown split {split!r}; {bench.key} has {splits}", field="split")
        raise ServiceError("please correct these fields", problems)
    if user.team_id is None:
        raise Forbidden("join or create a team before submitting: quotas and boards are per team")
    if not bench.submissions_open:
        raise Forbidden(f"submissions to {bench.key} are closed")
    return check_split(session, user, bench, split, default_quota=default_quota, now=now,
                       challenge=challenge)


def submission_row(bench: Benchmark, user: User, *, split: str, kind: str, fields: dict,
                   stored: StoredFile, data_dir: str | os.PathLike, is_public: bool,
                   now: datetime) -> Submission:
    """A new "received" submission row for a stored upload (not added to the session)."""
    return Submission(benchmark_id=bench.id, split=split, team_id=user.team_id, user_id=user.id,
                      kind=kind, is_public=bool(is_public), status="received",
                      file_path=str(stored.path.relative_to(Path(data_dir))),
                      file_sha256=stored.sha256, file_size=stored.size, created_at=now,
                      **fields)


def get_submission(session: Session, submission_id: int, user: User | None) -> Submission:
    """The submission if ``user`` may see it: its team, an admin, or anyone when it is public,
    scored and not hidden. Otherwise NotFound (never reveal that a private one exists)."""
    sub = session.get(Submission, submission_id)
    if sub is None or not can_see(sub, user):
        raise NotFound(f"no submission {submission_id}")
    return sub


def is_owner(sub: Submission, user: User | None) -> bool:
    if user is None:
        return False
    return user.is_admin or (sub.team_id is not None and sub.team_id == user.team_id)


def can_see(sub: Submission, user: User | None) -> bool:
    if is_owner(sub, user):
        return True
    return sub.is_public and sub.status == "scored" and not sub.hidden


def team_submissions(session: Session, team_id: int, *, limit: int = 200,
                     before: int | None = None) -> list[Submission]:
    """A team's submissions, newest first; ``before``: only those with a lower id (the next
    page of a keyset-paginated listing: pass the last id of the previous page)."""
    q = select(Submission).where(Submission.team_id == team_id)
    if before is not None:
        q = q.where(Submission.id < before)
    return list(session.scalars(q.order_by(Submission.id.desc()).limit(limit)))


def status_dict(sub: Submission, *, owner: bool) -> dict:
    """The JSON status of a submission; failure details only for its owners."""
    out = {
        "id": sub.id, "benchmark": sub.benchmark.key, "split": sub.split,
        "method_name": sub.method_name, "status": sub.status, "is_public": sub.is_public,
        "is_baseline": sub.is_baseline,
        "created_at": _iso(sub.created_at), "finished_at": _iso(sub.finished_at),
        "team": sub.team.name if sub.team else None,
    }
    if sub.kind == "container":  # issue 37: re-runs on later releases
        out["allow_rerun"] = sub.allow_rerun
        out["rerun_of"] = sub.rerun_of_id
    if owner:
        detail = sub.failure_detail or {}
        out.update({
            "queued_at": _iso(sub.queued_at), "started_at": _iso(sub.started_at),
            "attempts": sub.attempts, "file_sha256": sub.file_sha256,
            "file_size": sub.file_size, "failure_reason": sub.failure_reason,
            "problems": detail.get("problems", []),
            "total_problems": detail.get("total_problems", 0),
            "counts_toward_quota": sub.counts_toward_quota,
            "notes": (sub.notes_json or {}).get("notes", []),
            # a hidden or disqualified one has left the boards: its team is told why
            "hidden": sub.hidden, "hidden_reason": sub.hidden_reason if sub.hidden else None,
            "disqualified_reason": sub.disqualified_reason,
            "selectable": (sub.status == "scored" and not sub.is_baseline and not sub.hidden
                           and not sub.disqualified_reason),
        })
    return out


def failure_lines(sub: Submission) -> list[str]:
    """Human lines for a failed submission: the reason, then one line per problem."""
    if sub.status != "failed":
        return []
    lines = [sub.failure_reason or "failed"]
    detail = sub.failure_detail or {}
    for p in detail.get("problems", []):
        where = []
        if p.get("line") is not None:
            where.append(f"line {p['line']}")
        if p.get("field"):
            where.append(f"field '{p['field']}'")
        lines.append(f"{', '.join(where)}: {p['message']}" if where else p["message"])
    extra = detail.get("total_problems", 0) - len(detail.get("problems", []))
    if extra > 0:
        lines.append(f"... and {extra} more problems")
    return lines


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def create_baseline(session: Session, *, benchmark: str, split: str, kind: str,
                    source: str | os.PathLike, data_dir: str | os.PathLike) -> Submission:
    """A reference submission (random, all-fake, ...) owned by no team and outside any quota;
    boards mark it as a baseline. The caller commits, then enqueues."""
    bench = get_benchmark(session, benchmark)
    problems = _check_fields(bench, split, f"{kind} baseline", "", "", "")
    if problems:
        raise ServiceError("invalid baseline", problems)
    with open(source, "rb") as fh:
        stored = store_upload(fh, data_dir=data_dir, max_bytes=1 << 40)
    sub = Submission(benchmark_id=bench.id, split=split, kind="predictions",
                     method_name=f"Baseline: {kind}", description=f"The {kind} baseline "
                     "(leaderboard.core.baselines), for reference.", is_public=True,
                     status="received", is_baseline=True, baseline_kind=kind,
                     counts_toward_quota=False,
                     file_path=str(stored.path.relative_to(Path(data_dir))),
                     file_sha256=stored.sha256, file_size=stored.size)
    session.add(sub)
    session.flush()
    return sub
