"""What a challenge allows the submissions made to it (issue 33: a challenge binds its entrants
only): an entrant team, the open phase, its split, within the phase's quotas and cap; and the
teams' final selections, which close with the last phase for challenge submissions."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server.access import audit
from leaderboard.server.errors import Forbidden, ServiceError
from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.models.challenges import ChallengePhase
from leaderboard.server.services.challenges.entrants import is_entrant, page_path
from leaderboard.server.services.challenges.timeline import get_challenge, phase_at, window

#: final selections per team, benchmark and split when no challenge says otherwise
DEFAULT_MAX_SELECTIONS = 2


def check_submission(session: Session, bench: Benchmark, split: str, team_id: int | None,
                     now: datetime, *, challenge: str | None = None) -> ChallengePhase | None:
    """The rules of the challenge a submission is made to (``challenge``, its key); returns the
    phase it counts in. A submission made to no challenge (``challenge`` empty) is bound by none,
    whatever runs on the benchmark: None.

    NotFound for an unknown challenge; 400 naming the field when the challenge runs on another
    benchmark; Forbidden (403) when the team has not entered it (``not_entered``, with
    ``enter_url``), before it opens, between phases, after it ends, or on another split than
    the open phase's, each naming the phase and its dates."""
    if not challenge:
        return None
    ch = get_challenge(session, challenge)
    if ch.benchmark_id != bench.id:
        problems = ProblemList()
        problems.add(f"challenge {ch.key!r} runs on {ch.benchmark.key}, not {bench.key}",
                     field="challenge")
        raise ServiceError(f"challenge {ch.key!r} runs on {ch.benchmark.key}", problems)
    if not is_entrant(session, ch, team_id):
        raise Forbidden(f"your team has not entered challenge {ch.title!r}: enter it on its page "
                        f"({page_path(ch)}) or with `leaderboard submit --challenge {ch.key}`",
                        code="not_entered", extra={"enter_url": page_path(ch)})
    if not ch.phases or ch.finalized_at is not None or now >= window(ch)[1]:
        raise Forbidden(f"challenge {ch.title!r} has ended; submit without --challenge to the "
                        "standing board")
    phase = phase_at(ch, now)
    if phase is None:
        nxt = next((p for p in ch.phases if p.opens_at > now), None)
        started = now >= window(ch)[0]
        raise Forbidden(f"challenge {ch.title!r} " + ("is between phases; submissions reopen"
                                                      if started else "has not started; it opens")
                        + f" when {nxt.name!r} opens at {nxt.opens_at:%Y-%m-%d %H:%M} UTC "
                        f"(the {nxt.split} split)")
    if split != phase.split:
        raise Forbidden(f"phase {phase.name!r} of challenge {ch.title!r} takes submissions on "
                        f"the {phase.split} split only (until {phase.closes_at:%Y-%m-%d %H:%M}"
                        " UTC)")
    # the daily quota and the phase cap are taken atomically with the row:
    # leaderboard.server.services.quotas.take_quota_or_raise (issue 24)
    return phase


def selection_rules(session: Session, sub: Submission,
                    now: datetime | None = None) -> tuple[int, datetime | None]:
    """(how many a team may select, the deadline or None) for ``sub``: its challenge's, when
    it was made to one (the choice closes with the challenge), else the standing board's."""
    phase = session.get(ChallengePhase, sub.phase_id) if sub.phase_id is not None else None
    if phase is None:
        return DEFAULT_MAX_SELECTIONS, None
    return phase.challenge.max_selections, window(phase.challenge)[1]


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
