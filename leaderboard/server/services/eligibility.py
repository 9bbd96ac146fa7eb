"""Who may submit what, now: the one place where a submission's checks meet (the challenge's
phase rules, the agreement gate of `leaderboard.server.access.submitting`, today's quota and the
phase cap), used by every submission kind before its body is read
(`services.submissions.check_request`) and by the submit form's menu of benchmarks, splits and
phases with the reason behind every one that is missing.

A challenge binds only the submissions made to it (issue 33): `check_split` applies its rules
when the submission names it (``challenge``), and the menu lists, beside the benchmark's splits,
the challenges the team has entered with their open phase, or why none takes a submission now.
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
from leaderboard.server.services.challenges.entrants import entered_ids
from leaderboard.server.services.challenges.rules import check_submission
from leaderboard.server.services.challenges.timeline import list_challenges, state


@dataclass
class Allowance:
    """What the checks found when they let a submission through."""

    phase: ChallengePhase | None = None  # the challenge phase it counts against, if any
    quota: quotas.QuotaStatus | None = None  # today's quota (None without a team)
    phase_left: int | None = None  # what is left of the phase cap (None = no cap)


def check_split(session: Session, user: User, bench: Benchmark, split: str, *,
                default_quota: quotas.QuotaRules | int, now: datetime, challenge: str = "",
                into: Allowance | None = None) -> Allowance:
    """Raise `ServiceError` for the first rule that refuses ``user`` a submission to ``split``
    of ``bench`` now, in this order: the rules of the challenge it is made to, if ``challenge``
    names one (an entrant, the open phase, its split: 403), the agreement for a held-out split
    (403, ``agreement_required`` with ``sign_url``), today's quota (429: the phase's for a
    challenge submission, else the benchmark's) and the phase cap (429). A user without a team
    has no quota to check. The quota units are only looked at here; they are taken atomically
    with the row (`quotas.take_quota_or_raise`). ``into`` receives what was found up to a
    refusal (the menu shows it beside the reason)."""
    out = into if into is not None else Allowance()
    out.phase = phase = check_submission(session, bench, split, user.team_id, now,
                                         challenge=(challenge or "").strip() or None)
    check_submission_access(session, user, bench, split, now=now)
    if user.team_id is None:
        return out
    out.quota = quotas.quota_status(session, user.team_id, bench, split=split,
                                    default=default_quota, now=now, phase=phase)
    if out.quota.left == 0:
        raise quotas.quota_error(bench, split, out.quota, phase)
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
    sign_url: str | None = None  # where to sign, when the agreement is what is missing


@dataclass
class ChallengeChoice:
    """A challenge the team has entered, as the submit form offers it: its open phase and split
    with what is left, or why it takes no submission now."""

    key: str
    title: str
    open: bool
    split: str | None = None  # the open (or next) phase's split
    phase: str | None = None
    reason: str = ""
    quota: dict | None = None  # the phase's daily quota (as SplitChoice.quota)
    phase_left: int | None = None
    sign_url: str | None = None


@dataclass
class BenchmarkChoice:
    key: str
    title: str
    splits: list[SplitChoice] = field(default_factory=list)
    reason: str = ""  # why nothing of the benchmark is open (closed, no team, ...)
    challenges: list[ChallengeChoice] = field(default_factory=list)

    @property
    def open(self) -> bool:
        return any(s.open for s in self.splits)


def submit_menu(session: Session, user: User, benches: list[Benchmark], *,
                rules: quotas.QuotaRules | int,
                now: datetime | None = None) -> list[BenchmarkChoice]:
    """What ``user`` may submit to right now, per benchmark and split, with the reason for every
    split that is not open: submissions closed, then `check_split`'s rules for a submission
    made to no challenge (the agreement, today's quota); and, per benchmark, the challenges the
    team has entered that have not ended, each with its open phase (`challenge_choice`).

    ``rules`` are the quota rules (`leaderboard.server.services.quotas.QuotaRules`)."""
    now = now or utcnow()
    entered = entered_ids(session, user.team_id)
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
        if entered:
            choice.challenges = [
                challenge_choice(session, user, bench, ch, rules=rules, now=now)
                for ch in list_challenges(session, bench)
                if ch.id in entered and state(ch, now) not in ("ended", "finished")]
    return out


def challenge_choice(session: Session, user: User, bench: Benchmark, ch, *,
                     rules: quotas.QuotaRules | int, now: datetime) -> ChallengeChoice:
    """Whether ``user``'s team may submit to challenge ``ch`` now (`check_split` on the open
    phase's split), or the reason it may not (not entered, not started, between phases, ...)."""
    choice = ChallengeChoice(ch.key, ch.title, False)
    split = next((p.split for p in ch.phases if p.opens_at <= now < p.closes_at), None)
    split = split or next((p.split for p in ch.phases if p.opens_at > now), None) or ""
    seen = Allowance()
    try:
        if not bench.submissions_open:
            raise ServiceError(f"submissions to {bench.key} are closed")
        check_split(session, user, bench, split, default_quota=rules, now=now,
                    challenge=ch.key, into=seen)
        choice.open = True
    except ServiceError as exc:
        choice.reason = exc.message
        choice.sign_url = exc.extra.get("sign_url")
    choice.split = split or None
    choice.phase = seen.phase.name if seen.phase is not None else None
    choice.quota = seen.quota.as_dict() if seen.quota is not None else None
    choice.phase_left = seen.phase_left
    return choice
