"""Quotas (issues 12, 21, 24 and 33): per team, benchmark, split and UTC day, and for the
submissions made to a challenge per team, phase and UTC day and per team over the phase (its
``max_submissions``).

Held-out splits are strict (``DAILY_QUOTA``, or the benchmark's own quota), other splits
generous (``DEV_DAILY_QUOTA``; None = unlimited). A challenge submission counts in its phase's
own counters only: per day against the phase's ``daily_quota`` (the benchmark's limit on that
split when it has none, ``phase_day_usage``), and over the phase against ``max_submissions``
(``phase_usage``); a submission made to no challenge counts in ``quota_usage`` only, so a
phase's caps never count a team's other uploads. The units are taken atomically in the
transaction that inserts the submission row, by a conditional ``UPDATE ... WHERE count < limit``
on a counter row: PostgreSQL re-checks the condition after waiting for a concurrent writer's row
lock, SQLite serialises writers, so concurrent uploads never exceed either. The unit is a
reservation: a file that fails validation and every platform failure give both back
(`refund_quota`), so only scored work (or a container that ran) counts.

Accounts an administrator marked as one person (issue 35, `leaderboard.server.services.persons`)
share the limits too: besides its team's counter, a submission by a linked account is checked
against the submissions of all the person's accounts that still count (same benchmark, split
and UTC day; same phase for the cap), whatever their teams. The person's row is locked first
(``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite already serialises writers), so two accounts
submitting at once cannot both take the last unit. Refunds need nothing more: a refunded
submission stops counting (``counts_toward_quota``).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import Benchmark, QuotaUsage, Submission, User, utcnow
from leaderboard.server.models.challenges import ChallengePhase, PhaseDayUsage, PhaseUsage
from leaderboard.server.models.identity import Person
from leaderboard.server.services.persons import person_account_ids


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


def day_limit(bench: Benchmark, split: str, default: QuotaRules | int,
              phase: ChallengePhase | None = None) -> int | None:
    """Today's limit on ``split`` (None = unlimited): for a submission made to a challenge
    ``phase``, the phase's daily quota, else the benchmark's; otherwise the benchmark's."""
    if phase is not None and phase.daily_quota is not None:
        return phase.daily_quota
    return quota_limit(bench, split, default)


def quota_status(session: Session, team_id: int, bench: Benchmark, *, split: str,
                 default: QuotaRules | int, now: datetime | None = None,
                 phase: ChallengePhase | None = None) -> QuotaStatus:
    """What ``team_id`` has used of today's quota on ``bench``'s ``split`` and when it resets
    (UTC): of its submissions made to challenge ``phase`` when one is given, else of those made
    to no challenge."""
    day = utc_day(now)
    if phase is not None:
        used = session.scalar(select(PhaseDayUsage.count).where(
            PhaseDayUsage.team_id == team_id, PhaseDayUsage.phase_id == phase.id,
            PhaseDayUsage.day == day)) or 0
    else:
        used = session.scalar(select(QuotaUsage.count).where(
            QuotaUsage.team_id == team_id, QuotaUsage.benchmark_id == bench.id,
            QuotaUsage.split == split, QuotaUsage.day == day)) or 0
    resets = datetime.combine(day + timedelta(days=1), time(0), tzinfo=timezone.utc)
    return QuotaStatus(day_limit(bench, split, default, phase), used, resets)


def _insert_ignore(session: Session, model, **values) -> None:
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:  # pragma: no cover - only the two supported backends
        raise RuntimeError(f"unsupported database {dialect!r}")
    session.execute(insert(model).values(**values).on_conflict_do_nothing())


def take_quota(session: Session, team_id: int, bench: Benchmark, *, split: str,
               default: QuotaRules | int, now: datetime | None = None,
               phase: ChallengePhase | None = None) -> bool:
    """Count one submission against today's quota on ``split`` (in challenge ``phase``'s daily
    counter when it is made to one); False (and nothing counted) if none is left. An unlimited
    split is counted too (the page shows what was used).

    Atomic: PostgreSQL re-checks ``count < limit`` after waiting for a concurrent writer's row
    lock; SQLite serialises writers. The caller's transaction holds the increment, so a rollback
    gives it back.
    """
    day = utc_day(now)
    limit = day_limit(bench, split, default, phase)
    if phase is not None:
        _insert_ignore(session, PhaseDayUsage, team_id=team_id, phase_id=phase.id, day=day,
                       count=0)
        cond = [PhaseDayUsage.team_id == team_id, PhaseDayUsage.phase_id == phase.id,
                PhaseDayUsage.day == day]
        if limit is not None:
            cond.append(PhaseDayUsage.count < limit)
        return session.execute(update(PhaseDayUsage).where(*cond).values(
            count=PhaseDayUsage.count + 1).returning(PhaseDayUsage.count)).first() is not None
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


def refund_quota(session: Session, sub: Submission) -> None:
    """Give back the quota a submission took (platform failures and invalid files do not
    count): its phase's daily unit and cap unit when it was made to a challenge, else the
    benchmark's daily unit."""
    if not sub.counts_toward_quota or sub.team_id is None:
        return
    sub.counts_toward_quota = False
    if sub.phase_id is None:
        session.execute(
            update(QuotaUsage)
            .where(QuotaUsage.team_id == sub.team_id, QuotaUsage.benchmark_id == sub.benchmark_id,
                   QuotaUsage.split == sub.split, QuotaUsage.day == utc_day(sub.created_at),
                   QuotaUsage.count > 0)
            .values(count=QuotaUsage.count - 1))
    else:
        session.execute(
            update(PhaseDayUsage)
            .where(PhaseDayUsage.team_id == sub.team_id, PhaseDayUsage.phase_id == sub.phase_id,
                   PhaseDayUsage.day == utc_day(sub.created_at), PhaseDayUsage.count > 0)
            .values(count=PhaseDayUsage.count - 1))
        session.execute(
            update(PhaseUsage)
            .where(PhaseUsage.team_id == sub.team_id, PhaseUsage.phase_id == sub.phase_id,
                   PhaseUsage.count > 0)
            .values(count=PhaseUsage.count - 1))


def take_quota_or_raise(session: Session, user: User, bench: Benchmark, *, split: str,
                        default_quota: QuotaRules | int, now: datetime,
                        phase: ChallengePhase | None = None) -> None:
    """Take one unit of the team's daily quota on ``split`` and, for a submission made to
    challenge ``phase`` (from `services.eligibility.check_split`), one of the phase's cap,
    atomically in the caller's transaction; raise 429 with what is left otherwise (the caller
    rolls back, which gives back whichever unit was taken). The submission records ``phase``
    (``phase_id``) so that a refund finds its units."""
    if not take_quota(session, user.team_id, bench, split=split, default=default_quota,
                      now=now, phase=phase):
        raise quota_error(bench, split, quota_status(session, user.team_id, bench, split=split,
                                                     default=default_quota, now=now,
                                                     phase=phase), phase)
    if phase is not None and not take_phase_unit(session, user.team_id, phase):
        raise phase_cap_error(phase)
    _check_person(session, user, bench, split=split, default=default_quota, now=now,
                  phase=phase)


def person_used(session: Session, ids: list[int], bench: Benchmark, *, split: str,
                now: datetime, phase=None, whole_phase: bool = False) -> int:
    """Submissions of the accounts ``ids`` that count, made to challenge ``phase`` (None: to
    no challenge, issue 33): today's on ``bench``'s ``split``, or (``whole_phase``) the phase's."""
    stmt = select(func.count(Submission.id)).where(
        Submission.user_id.in_(ids), Submission.counts_toward_quota.is_(True),
        Submission.phase_id == phase.id if phase is not None else Submission.phase_id.is_(None))
    if not whole_phase:
        day = utc_day(now)
        start = datetime.combine(day, time(0), tzinfo=timezone.utc)
        stmt = stmt.where(Submission.benchmark_id == bench.id, Submission.split == split,
                          Submission.created_at >= start,
                          Submission.created_at < start + timedelta(days=1))
    return session.scalar(stmt) or 0


def _check_person(session: Session, user: User, bench: Benchmark, *, split: str, default,
                  now: datetime, phase) -> None:
    """Raise 429 when the accounts marked as ``user``'s person used today's limit (or the
    phase's cap) together; nothing for an account not linked to others."""
    ids = person_account_ids(session, user)
    if ids is None:
        return
    session.execute(select(Person.id).where(Person.id == user.person_id).with_for_update())
    limit = day_limit(bench, split, default, phase)
    if limit is not None and person_used(session, ids, bench, split=split, now=now,
                                         phase=phase) >= limit:
        day = utc_day(now)
        resets = datetime.combine(day + timedelta(days=1), time(0), tzinfo=timezone.utc)
        raise ServiceError(
            f"the accounts marked as one person with yours have used all {limit} submissions "
            f"to {bench.key} {split} for today (UTC) together; the quota resets at "
            f"{resets:%Y-%m-%d %H:%M} UTC", status=429, code="quota_exceeded",
            extra={"quota": QuotaStatus(limit, limit, resets).as_dict(),
                   "linked_accounts": len(ids)})
    if phase is not None and phase.max_submissions is not None and person_used(
            session, ids, bench, split=split, now=now, phase=phase,
            whole_phase=True) >= phase.max_submissions:
        raise ServiceError(
            f"the accounts marked as one person with yours have used all "
            f"{phase.max_submissions} submissions of phase {phase.name!r} together",
            status=429, code="quota_exceeded",
            extra={"phase": {"name": phase.name, "max_submissions": phase.max_submissions,
                             "closes_at": phase.closes_at.isoformat()},
                   "linked_accounts": len(ids)})


def quota_error(bench: Benchmark, split: str, status: QuotaStatus,
                phase: ChallengePhase | None = None) -> ServiceError:
    where = f"phase {phase.name!r} ({bench.key} {split})" if phase is not None else \
        f"{bench.key} {split}"
    return ServiceError(
        f"your team has used all {status.limit} submissions to {where} for today "
        f"(UTC); the quota resets at {status.resets_at:%Y-%m-%d %H:%M} UTC",
        status=429, code="quota_exceeded", extra={"quota": status.as_dict()})


def phase_cap_error(phase) -> ServiceError:
    return ServiceError(f"your team has used all {phase.max_submissions} submissions of phase "
                        f"{phase.name!r} (only scored work counts)", status=429,
                        code="quota_exceeded", extra={"phase": {
                            "name": phase.name, "max_submissions": phase.max_submissions,
                            "closes_at": phase.closes_at.isoformat()}})
