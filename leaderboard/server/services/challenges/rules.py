"""What a running challenge allows: a submission only on the open phase's split, within the
phase's quotas and cap; and the teams' final selections, which close with the last phase."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.server.access import audit
from leaderboard.server.errors import Forbidden, ServiceError
from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.models.challenges import ChallengePhase
from leaderboard.server.services.challenges.timeline import covering, phase_at, window

#: final selections per team, benchmark and split when no challenge says otherwise
DEFAULT_MAX_SELECTIONS = 2


def check_submission(session: Session, bench: Benchmark, split: str, team_id: int | None,
                     now: datetime) -> ChallengePhase | None:
    """Refuse a submission the benchmark's challenge does not allow now; returns the open
    phase (None outside every challenge). Forbidden names the phase and its dates."""
    ch = covering(session, bench.id, now)
    if ch is None:
        return None
    phase = phase_at(ch, now)
    if phase is None:
        nxt = next((p for p in ch.phases if p.opens_at > now), None)
        raise Forbidden(f"challenge {ch.title!r} is between phases; submissions reopen when "
                        f"{nxt.name!r} opens at {nxt.opens_at:%Y-%m-%d %H:%M} UTC")
    if split != phase.split:
        raise Forbidden(f"phase {phase.name!r} of challenge {ch.title!r} takes submissions on "
                        f"the {phase.split} split only (until {phase.closes_at:%Y-%m-%d %H:%M}"
                        " UTC)")
    # the phase cap (max_submissions) is taken atomically with the daily quota:
    # leaderboard.server.services.quotas, via submissions.take_quota_or_raise (issue 24)
    return phase


def phase_daily_quota(session: Session, bench: Benchmark, now: datetime) -> int | None:
    """The open phase's daily quota, which replaces the benchmark's while it is open."""
    ch = covering(session, bench.id, now)
    phase = phase_at(ch, now) if ch is not None else None
    return phase.daily_quota if phase is not None else None


def selection_rules(session: Session, sub: Submission,
                    now: datetime | None = None) -> tuple[int, datetime | None]:
    """(how many a team may select, the deadline or None) for ``sub``'s benchmark and split."""
    ch = covering(session, sub.benchmark_id, sub.created_at)
    if ch is None:
        return DEFAULT_MAX_SELECTIONS, None
    return ch.max_selections, window(ch)[1]


def set_selected(session: Session, user: User, sub: Submission, selected: bool, *,
                 now: datetime | None = None, ip: str = "") -> None:
    """Mark (or unmark) ``sub`` as one of its team's final selections. Forbidden for anyone
    outside the team; ServiceError when it is not scored, past the challenge's deadline, or
    over the number allowed. The caller commits and invalidates the benchmark's boards."""
    now = now or utcnow()
    if user.team_id is None or sub.team_id != user.team_id:
        raise Forbidden("only a member of the submission's team may select it")
    if sub.status != "scored" or sub.is_baseline:
        raise ServiceError(f"submission {sub.id} is {sub.status}; only scored submissions can "
                           "represent a team")
    if selected and (sub.hidden or sub.disqualified_reason):
        why = "hidden by an administrator" if sub.hidden else "disqualified"
        raise ServiceError(f"submission {sub.id} is {why}; it cannot represent your team",
                           status=409, code="conflict")
    limit, deadline = selection_rules(session, sub, now)
    if deadline is not None and now >= deadline:
        raise ServiceError(f"final selections closed at {deadline:%Y-%m-%d %H:%M} UTC with "
                           "the challenge", status=409, code="conflict")
    if selected and not sub.selected:
        chosen = session.scalar(select(func.count(Submission.id)).where(
            Submission.team_id == sub.team_id, Submission.benchmark_id == sub.benchmark_id,
            Submission.split == sub.split, Submission.selected.is_(True)))
        if chosen >= limit:
            raise ServiceError(f"your team has already selected {chosen} submission(s) on "
                               f"{sub.benchmark.key} {sub.split} (at most {limit}); unselect "
                               "one first", status=409, code="conflict")
    if sub.selected != selected:
        sub.selected = selected
        audit.record(session, user, "submission.select" if selected else "submission.unselect",
                     f"submission:{sub.id}", {"benchmark": sub.benchmark.key,
                                              "split": sub.split}, ip)
