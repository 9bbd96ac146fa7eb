"""Who may submit what, now: the one place where a submission's checks meet (the challenge's
phase rules, the agreement gate of `leaderboard.server.access.submitting`, today's quota and the
phase cap), used by every submission kind before its body is read
(`services.submissions.check_request`) and by the submit form's menu of benchmarks, splits and
phases with the reason behind every one that is missing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from leaderboard.server.access.submitting import check_submission_access
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import Benchmark, User, utcnow
from leaderboard.server.models.challenges import ChallengePhase
from leaderboard.server.services import quotas
from leaderboard.server.services.challenges.rules import check_submission


@dataclass
class Allowance:
    """What the checks found when they let a submission through."""

    phase: ChallengePhase | None = None  # the challenge phase it counts against, if any
    quota: quotas.QuotaStatus | None = None  # today's quota (None without a team)
    phase_left: int | None = None  # what is left of the phase cap (None = no cap)


def check_split(session: Session, user: User, bench: Benchmark, split: str, *,
                default_quota: quotas.QuotaRules | int, now: datetime,
                into: Allowance | None = None) -> Allowance:
    """Raise `ServiceError` for the first rule that refuses ``user`` a submission to ``split``
    of ``bench`` now, in this order: the running challenge's phase (403), the agreement for a
    held-out split (403, ``agreement_required`` with ``sign_url``), today's quota (429) and the
    phase cap (429). A user without a team has no quota to check. Both quota units are only
    looked at here; they are taken atomically with the row (`quotas.take_quota_or_raise`).
    ``into`` receives what was found up to a refusal (the menu shows it beside the reason)."""
    out = into if into is not None else Allowance()
    out.phase = phase = check_submission(session, bench, split, user.team_id, now)
    check_submission_access(session, user, bench, split, now=now)
    if user.team_id is None:
        return out
    out.quota = quotas.quota_status(session, user.team_id, bench, split=split,
                                    default=default_quota, now=now)
    if out.quota.left == 0:
        raise quotas.quota_error(bench, split, out.quota)
    if phase is not None:
        out.phase_left = quotas.phase_left(session, user.team_id, phase)
        if out.phase_left == 0:
            raise quotas.phase_cap_error(phase)
    return out


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


def submit_menu(session: Session, user: User, benches: list[Benchmark], *,
                rules: quotas.QuotaRules | int,
                now: datetime | None = None) -> list[BenchmarkChoice]:
    """What ``user`` may submit to right now, per benchmark and split, with the reason for every
    split that is not open: submissions closed, then `check_split`'s rules (the running
    challenge's phase, the agreement, today's quota or the phase cap).

    ``rules`` are the quota rules (`leaderboard.server.services.quotas.QuotaRules`)."""
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
            seen = Allowance()
            try:
                check_split(session, user, bench, split, default_quota=rules, now=now, into=seen)
                sc.open = True
            except ServiceError as exc:
                sc.reason = exc.message
                sc.sign_url = exc.extra.get("sign_url")
            sc.quota = seen.quota.as_dict() if seen.quota is not None else None
            sc.phase = seen.phase.name if seen.phase is not None else None
            sc.phase_left = seen.phase_left
    return out
