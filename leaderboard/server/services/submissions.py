"""Accepting prediction files: storage, quotas, the submission row and its status transitions.

Status machine (the database is the truth; queues only carry work)::

    received -> queued -> scoring -> scored
                  ^          |   \\-> failed  (invalid file: refunded; only scored work counts)
                  |          |    \\-> failed  (platform error / too many attempts: refunded)
                  +----------+  transient error, or the reconciler re-queues a stuck one

Quotas are per team, benchmark, split and UTC day (held-out splits strict, ``DAILY_QUOTA``;
dev generous, ``DEV_DAILY_QUOTA``), and inside a challenge phase also per team over the phase
(``max_submissions``). Both are taken atomically in the same transaction that inserts the
submission row (a conditional ``UPDATE ... WHERE count < limit``), so concurrent uploads can
never exceed them. The unit is a reservation: a file that fails validation and every platform
failure give it back (`refund_quota`), so only scored work (or a container that ran) counts.
"""
from __future__ import annotations

import hashlib
import os
import re
import uuid
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import IO

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.models import Benchmark, QuotaUsage, Submission, User, utcnow
from leaderboard.server.models.challenges import PhaseUsage
from leaderboard.server.services import Forbidden, NotFound, ServiceError
from leaderboard.server.services.benchmarks import get_benchmark

CHUNK = 1024 * 1024
_URL_RE = re.compile(r"^https?://[^\s]{1,490}$")


@dataclass(frozen=True)
class StoredFile:
    path: Path
    sha256: str
    size: int


@dataclass(frozen=True)
class QuotaStatus:
    limit: int | None  # None = unlimited
    used: int
    resets_at: datetime

    @property
    def left(self) -> int | None:
        return None if self.limit is None else max(self.limit - self.used, 0)

    def as_dict(self) -> dict:
        return {"limit": self.limit, "used": self.used, "left": self.left,
                "resets_at": self.resets_at.isoformat()}


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


def utc_day(now: datetime | None = None) -> date:
    return (now or utcnow()).astimezone(timezone.utc).date()


@dataclass(frozen=True)
class QuotaRules:
    """The configured daily quotas (``DAILY_QUOTA``, ``DEV_DAILY_QUOTA``): ``held_out`` for
    held-out splits (strict; a benchmark's own ``daily_quota`` replaces it), ``other`` for the
    rest (generous; None = unlimited). An open challenge phase's ``daily_quota`` replaces
    either on the phase's split."""

    held_out: int
    other: int | None = None

    @classmethod
    def of(cls, value: "QuotaRules | int") -> "QuotaRules":
        """Rules from config-like input; a bare int is one limit for every split."""
        if isinstance(value, QuotaRules):
            return value
        return cls(int(value), int(value))

    @classmethod
    def from_config(cls, cfg) -> "QuotaRules":
        return cls(int(cfg["DAILY_QUOTA"]), cfg.get("DEV_DAILY_QUOTA"))


def quota_limit(bench: Benchmark, split: str, default: QuotaRules | int) -> int | None:
    """The benchmark's daily limit on ``split`` outside challenges (None = unlimited)."""
    rules = QuotaRules.of(default)
    if split in HELD_OUT_SPLITS:
        return bench.daily_quota if bench.daily_quota is not None else rules.held_out
    return rules.other


def _day_limit(session: Session, bench: Benchmark, split: str, default, now) -> int | None:
    """Today's limit on ``split``: an open challenge phase's daily quota (on the phase's split),
    else the benchmark's (issue 12)."""
    from leaderboard.server.services.challenges import covering, phase_at

    now = now or utcnow()
    ch = covering(session, bench.id, now)
    phase = phase_at(ch, now) if ch is not None else None
    if phase is not None and phase.split == split and phase.daily_quota is not None:
        return phase.daily_quota
    return quota_limit(bench, split, default)


def quota_status(session: Session, team_id: int, bench: Benchmark, *, split: str = "test",
                 default: QuotaRules | int, now: datetime | None = None) -> QuotaStatus:
    """What ``team_id`` has used of today's quota on ``bench``'s ``split`` and when it resets
    (UTC)."""
    day = utc_day(now)
    used = session.scalar(select(QuotaUsage.count).where(
        QuotaUsage.team_id == team_id, QuotaUsage.benchmark_id == bench.id,
        QuotaUsage.split == split, QuotaUsage.day == day)) or 0
    resets = datetime.combine(day + timedelta(days=1), time(0), tzinfo=timezone.utc)
    return QuotaStatus(_day_limit(session, bench, split, default, now), used, resets)


def _insert_ignore(session: Session, model, **values) -> None:
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:  # pragma: no cover - only the two supported backends
        raise RuntimeError(f"unsupported database {dialect!r}")
    session.execute(insert(model).values(**values).on_conflict_do_nothing())


def take_quota(session: Session, team_id: int, bench: Benchmark, *, split: str = "test",
               default: QuotaRules | int, now: datetime | None = None) -> bool:
    """Count one submission against today's quota on ``split``; False (and nothing counted)
    if none is left. An unlimited split is counted too (the page shows what was used).

    Atomic: PostgreSQL re-checks ``count < limit`` after waiting for a concurrent writer's row
    lock; SQLite serialises writers. The caller's transaction holds the increment, so a rollback
    gives it back.
    """
    day = utc_day(now)
    limit = _day_limit(session, bench, split, default, now)
    _insert_ignore(session, QuotaUsage, team_id=team_id, benchmark_id=bench.id, split=split,
                   day=day, count=0)
    cond = [QuotaUsage.team_id == team_id, QuotaUsage.benchmark_id == bench.id,
            QuotaUsage.split == split, QuotaUsage.day == day]
    if limit is not None:
        cond.append(QuotaUsage.count < limit)
    row = session.execute(update(QuotaUsage).where(*cond).values(count=QuotaUsage.count + 1)
                          .returning(QuotaUsage.count)).first()
    return row is not None


def phase_left(session: Session, team_id: int, phase) -> int | None:
    """Submissions ``team_id`` may still make in ``phase`` (None = the phase has no cap)."""
    if phase.max_submissions is None:
        return None
    used = session.scalar(select(PhaseUsage.count).where(
        PhaseUsage.team_id == team_id, PhaseUsage.phase_id == phase.id)) or 0
    return max(phase.max_submissions - used, 0)


def take_phase_unit(session: Session, team_id: int, phase) -> bool:
    """Count one submission against ``phase``'s cap (``max_submissions``); False (and nothing
    counted) when the cap is used. The same technique as `take_quota`, in the same
    transaction (issue 24: 20 parallel uploads against a cap of 5 accept exactly 5); a phase
    without a cap is counted too, so a cap set mid-phase sees what was already used."""
    _insert_ignore(session, PhaseUsage, team_id=team_id, phase_id=phase.id, count=0)
    cond = [PhaseUsage.team_id == team_id, PhaseUsage.phase_id == phase.id]
    if phase.max_submissions is not None:
        cond.append(PhaseUsage.count < phase.max_submissions)
    row = session.execute(update(PhaseUsage).where(*cond).values(count=PhaseUsage.count + 1)
                          .returning(PhaseUsage.count)).first()
    return row is not None


def mark_failed(sub: Submission, reason: str, *, detail: dict | None,
                now: datetime | None = None) -> None:
    """Finish ``sub`` as "failed": ``reason`` is the team-facing line, ``detail`` the structured
    failure the submission page lists (None for platform errors); its deadline is cleared."""
    sub.status = "failed"
    sub.finished_at = now or utcnow()
    sub.deadline_at = None
    sub.failure_reason = reason
    sub.failure_detail = detail


def refund_quota(session: Session, sub: Submission) -> None:
    """Give back the quota a submission took, daily and its phase's (platform failures and
    invalid files do not count)."""
    if not sub.counts_toward_quota or sub.team_id is None:
        return
    sub.counts_toward_quota = False
    session.execute(
        update(QuotaUsage)
        .where(QuotaUsage.team_id == sub.team_id, QuotaUsage.benchmark_id == sub.benchmark_id,
               QuotaUsage.split == sub.split, QuotaUsage.day == utc_day(sub.created_at),
               QuotaUsage.count > 0)
        .values(count=QuotaUsage.count - 1))
    if sub.phase_id is not None:
        session.execute(
            update(PhaseUsage)
            .where(PhaseUsage.team_id == sub.team_id, PhaseUsage.phase_id == sub.phase_id,
                   PhaseUsage.count > 0)
            .values(count=PhaseUsage.count - 1))


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
                      now: datetime | None = None) -> Submission:
    """Check the request, store the file, take quota and add the row (status "received").

    Nothing is stored if any check fails: ServiceError names the field (400), the missing team
    (403), closed submissions (403), a held-out split without the agreement (403,
    ``agreement_required`` with ``sign_url``), the exhausted daily quota (429, with ``limit``,
    ``left`` and ``resets_at``) or the phase cap (429). The caller commits, then enqueues (`leaderboard.server.jobs.scoring.enqueue_scoring`).
    """
    now = now or utcnow()  # one instant for the quota day and created_at
    bench, fields = check_request(session, user=user, benchmark=benchmark, split=split,
                                  default_quota=default_quota, now=now, method_name=method_name,
                                  description=description, paper_url=paper_url,
                                  code_url=code_url)
    stored = store_upload(stream, data_dir=data_dir, max_bytes=max_bytes)
    try:
        phase = take_quota_or_raise(session, user, bench, split=split,
                                    default_quota=default_quota, now=now)
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
                  default_quota: QuotaRules | int, now: datetime, method_name: str, description: str,
                  paper_url: str, code_url: str) -> tuple[Benchmark, dict]:
    """The checks every submission kind makes before reading its body: fields (400), a team
    (403), open submissions (403), the running challenge's rules (403), the agreement for a
    held-out split (403, `leaderboard.server.access.submitting`), quota and phase cap left
    (429). Returns the benchmark and the cleaned fields."""
    bench = get_benchmark(session, benchmark)
    fields = {"method_name": (method_name or "").strip(),
              "description": (description or "").strip(),
              "paper_url": (paper_url or "").strip(), "code_url": (code_url or "").strip()}
    problems = _check_fields(bench, split, fields["method_name"], fields["paper_url"],
                             fields["code_url"], fields["description"])
    if problems:
        raise ServiceError("please correct these fields", problems)
    if user.team_id is None:
        raise Forbidden("join or create a team before submitting: quotas and boards are per team")
    if not bench.submissions_open:
        raise Forbidden(f"submissions to {bench.key} are closed")
    from leaderboard.server.access.submitting import check_submission_access
    from leaderboard.server.services.challenges import check_submission
    phase = check_submission(session, bench, split, user.team_id, now)  # the challenge's rules
    check_submission_access(session, user, bench, split, now=now)
    # fail fast, before reading a large body; both are taken atomically later
    status = quota_status(session, user.team_id, bench, split=split, default=default_quota,
                          now=now)
    if status.left == 0:
        raise quota_error(bench, split, status)
    if phase is not None and phase_left(session, user.team_id, phase) == 0:
        raise phase_cap_error(phase)
    return bench, fields


def take_quota_or_raise(session: Session, user: User, bench: Benchmark, *, split: str,
                        default_quota: QuotaRules | int, now: datetime):
    """Take one unit of the team's daily quota on ``split`` and, inside a challenge phase, one
    of the phase's cap, atomically in the caller's transaction; raise 429 with what is left
    otherwise (the caller rolls back, which gives back whichever unit was taken). Returns the
    open phase (None outside challenges): the submission records it (``phase_id``)."""
    from leaderboard.server.services.challenges import covering, phase_at

    if not take_quota(session, user.team_id, bench, split=split, default=default_quota,
                      now=now):
        raise quota_error(bench, split, quota_status(session, user.team_id, bench, split=split,
                                                     default=default_quota, now=now))
    ch = covering(session, bench.id, now)
    phase = phase_at(ch, now) if ch is not None else None
    if phase is not None and phase.split == split and not take_phase_unit(
            session, user.team_id, phase):
        raise phase_cap_error(phase)
    return phase if phase is not None and phase.split == split else None


def submission_row(bench: Benchmark, user: User, *, split: str, kind: str, fields: dict,
                   stored: StoredFile, data_dir: str | os.PathLike, is_public: bool,
                   now: datetime) -> Submission:
    """A new "received" submission row for a stored upload (not added to the session)."""
    return Submission(benchmark_id=bench.id, split=split, team_id=user.team_id, user_id=user.id,
                      kind=kind, is_public=bool(is_public), status="received",
                      file_path=str(stored.path.relative_to(Path(data_dir))),
                      file_sha256=stored.sha256, file_size=stored.size, created_at=now,
                      **fields)


def quota_error(bench: Benchmark, split: str, status: QuotaStatus) -> ServiceError:
    return ServiceError(
        f"your team has used all {status.limit} submissions to {bench.key} {split} for today "
        f"(UTC); the quota resets at {status.resets_at:%Y-%m-%d %H:%M} UTC",
        status=429, code="quota_exceeded", extra={"quota": status.as_dict()})


def phase_cap_error(phase) -> ServiceError:
    return ServiceError(f"your team has used all {phase.max_submissions} submissions of phase "
                        f"{phase.name!r} (only scored work counts)", status=429,
                        code="quota_exceeded", extra={"phase": {
                            "name": phase.name, "max_submissions": phase.max_submissions,
                            "closes_at": phase.closes_at.isoformat()}})


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
