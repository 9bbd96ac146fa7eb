"""Who may submit what, now: the agreement gate on held-out submissions, and the submit form's
menu of benchmarks, splits and phases with the reason behind every one that is missing.

A held-out (test) submission, predictions or container, needs the submitter's signed and
approved agreement for the benchmark's current version while the benchmark's
``agreement_gates_submissions`` is on (the default; admins switch it per benchmark). The
decision is the gate's (`gate.can_access(..., "test_submission")`); a refusal is a 403 whose
JSON carries ``sign_url`` (the data page where the agreement is signed). Dev splits are never
gated here: their labels are what the agreement protects, and scoring a dev file reveals
nothing the agreement holder could not compute offline.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.access.gate import can_access
from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.services import Forbidden, ServiceError


def sign_path(bench: Benchmark) -> str:
    """Where the benchmark's agreement is read and signed (the data page)."""
    return f"/data/{bench.key}"


class AgreementRequired(Forbidden):
    code = "agreement_required"


def check_submission_access(session: Session, user: User, bench: Benchmark, split: str, *,
                            now: datetime | None = None) -> None:
    """Raise `AgreementRequired` (403, with ``sign_url``) when ``user`` may not submit to
    ``split`` of ``bench`` for want of an approved agreement; return otherwise."""
    if split not in HELD_OUT_SPLITS:
        return
    decision = can_access(session, user, bench, "test_submission", now=now)
    if not decision:
        raise AgreementRequired(
            f"submissions to the held-out {split} split of {bench.key} need your signed and "
            f"approved data-use agreement: {decision.reason} (sign it at {sign_path(bench)})",
            extra={"sign_url": sign_path(bench)})


def refusal_at_job_start(session: Session, sub: Submission, bench: Benchmark, *, what: str,
                         now: datetime | None = None) -> str | None:
    """Why a submission accepted earlier may no longer be scored or run now, or None.

    Asked by the jobs when they start (issue 36): an agreement revoked (or expired, or a new
    version not yet signed) while the submission waited in the queue stops it, as it would
    have stopped the upload. ``what`` is the gate's action: ``"test_submission"`` for a
    predictions file (only held-out splits are gated), ``"container_run"`` for an image (the
    caller decides which splits need it). Baselines, which no team submits, are never refused.
    The reason is the gate's, e.g. "agreement revoked on 2026-12-05 14:03 UTC: <why>".
    """
    if sub.is_baseline or (what == "test_submission" and sub.split not in HELD_OUT_SPLITS):
        return None
    user = session.get(User, sub.user_id) if sub.user_id is not None else None
    decision = can_access(session, user, bench, what, now=now)
    return None if decision else decision.reason


@dataclass
class SplitChoice:
    """One split of one benchmark on the submit form: offered, or not and why."""

    split: str
    open: bool
    reason: str = ""
    #: today's quota on it ({"limit", "used", "left", "resets_at"}); limit None = unlimited
    quota: dict | None = None
    phase: str | None = None
    phase_left: int | None = None
    sign_url: str | None = None  # where to sign, when the agreement is what is missing


@dataclass
class BenchmarkChoice:
    key: str
    title: str
    splits: list[SplitChoice] = field(default_factory=list)
    reason: str = ""  # why nothing of the benchmark is open (closed, no team, ...)

    @property
    def open(self) -> bool:
        return any(s.open for s in self.splits)


def submit_menu(session: Session, user: User, benches: list[Benchmark], *, rules,
                now: datetime | None = None) -> list[BenchmarkChoice]:
    """What ``user`` may submit to right now, per benchmark and split, with the reason for every
    split that is not open: submissions closed, the running challenge's phase (its split only,
    or between phases), no agreement for a held-out split, today's quota or the phase cap used.

    ``rules`` are the quota rules (`leaderboard.server.services.quotas.QuotaRules`)."""
    from leaderboard.server.services import quotas
    from leaderboard.server.services.challenges import check_submission

    now = now or utcnow()
    out = []
    for bench in benches:
        choice = BenchmarkChoice(bench.key, bench.title or bench.key)
        out.append(choice)
        if not bench.submissions_open:
            choice.reason = f"submissions to {bench.key} are closed"
        for split in (bench.meta_json or {}).get("splits", []):
            sc = SplitChoice(split, False)
            choice.splits.append(sc)
            if choice.reason:
                sc.reason = choice.reason
                continue
            try:
                phase = check_submission(session, bench, split, user.team_id, now)
                check_submission_access(session, user, bench, split, now=now)
                if user.team_id is not None:
                    status = quotas.quota_status(session, user.team_id, bench, split=split,
                                                      default=rules, now=now)
                    sc.quota = status.as_dict()
                    if status.left == 0:
                        raise quotas.quota_error(bench, split, status)
                    if phase is not None:
                        sc.phase = phase.name
                        left = quotas.phase_left(session, user.team_id, phase)
                        sc.phase_left = left
                        if left == 0:
                            raise quotas.phase_cap_error(phase)
            except ServiceError as exc:
                sc.reason = exc.message
                sc.sign_url = exc.extra.get("sign_url")
                continue
            sc.open = True
    return out
