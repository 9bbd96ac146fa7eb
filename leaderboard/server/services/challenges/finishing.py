"""What happens when time runs out, run by the reconciler (`leaderboard.server.jobs.reconcile`)
and, for a challenge whose last phase has closed, by an admin's "finish now" (the embedded
setup has no reconciler running on a timer):

* a phase that has closed gets its board frozen (``ChallengePhase.board_json``), once the
  submissions made during it have been scored (or failed);
* a challenge whose last phase has closed (and whose submissions have settled) is finished: the benchmark's private part is revealed,
  each phase's final ranking on its own part is frozen into ``Challenge.results_json``, and the
  event is audited (actor: the admin, or none for the reconciler).
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.server.access import audit
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import IN_FLIGHT, Submission, User, utcnow
from leaderboard.server.models.challenges import Challenge, ChallengePhase
from leaderboard.server.services.challenges.phase_boards import phase_results, shown_part
from leaderboard.server.services.challenges.timeline import window


def freeze(session: Session, ch: Challenge, *, now: datetime) -> dict:
    """The frozen results document of a challenge (stored in ``results_json``): each phase
    ranked on its own part (the private part is revealed by then)."""
    return {"challenge": ch.key, "benchmark": ch.benchmark.key, "frozen_at": now.isoformat(),
            "phases": [{"position": p.position, "name": p.name, "split": p.split,
                        "part": p.part, "opens_at": p.opens_at.isoformat(),
                        "closes_at": p.closes_at.isoformat(),
                        "tasks": phase_results(session, ch, p, part=p.part)}
                       for p in ch.phases]}


def in_flight(session: Session, ch: Challenge, phase: ChallengePhase) -> int:
    """Submissions made to the phase that are still being scored: a phase is frozen only
    once they have settled (a last-minute upload counts, as on Kaggle)."""
    return session.scalar(select(func.count(Submission.id)).where(
        Submission.phase_id == phase.id, Submission.status.in_(IN_FLIGHT))) or 0


def freeze_phase(session: Session, ch: Challenge, phase: ChallengePhase, *,
                 now: datetime) -> None:
    """Freeze a closed phase's board as it stands (the part shown at this moment)."""
    part = shown_part(phase, ch.benchmark)
    phase.board_json = {"part": part, "frozen_at": now.isoformat(),
                        "tasks": phase_results(session, ch, phase, part=part)}
    phase.frozen_at = now


def finish_challenge(session: Session, ch: Challenge, *, actor: User | None = None,
                     now: datetime | None = None, ip: str = "") -> bool:
    """Finish ``ch`` now that its last phase has closed (see the module docstring); True when
    the private part was revealed by it. ServiceError while a phase is still to close, while a
    submission of it is still being scored, or when it has already finished. The caller commits, then invalidates the benchmark's boards."""
    now = now or utcnow()
    if ch.finalized_at is not None:
        raise ServiceError(f"challenge {ch.key!r} finished on {ch.finalized_at:%Y-%m-%d %H:%M} "
                           "UTC", status=409, code="conflict")
    if not ch.phases or window(ch)[1] > now:
        end = window(ch)[1] if ch.phases else None
        raise ServiceError(f"challenge {ch.key!r} runs until "
                           f"{end:%Y-%m-%d %H:%M} UTC; it finishes when its last phase closes"
                           if end else f"challenge {ch.key!r} has no phase", status=409,
                           code="conflict")
    waiting = {p.name: n for p in ch.phases if (n := in_flight(session, ch, p))}
    if waiting:
        raise ServiceError(f"challenge {ch.key!r} has submissions still being scored ("
                           + ", ".join(f"{n} of phase {name!r}" for name, n in waiting.items())
                           + "); it finishes once they are scored or failed", status=409,
                           code="conflict")
    for p in ch.phases:
        if p.frozen_at is None:
            freeze_phase(session, ch, p, now=now)
    bench = ch.benchmark
    revealed = not bench.private_revealed
    bench.private_revealed = True
    ch.results_json = freeze(session, ch, now=now)
    ch.finalized_at = now
    audit.record(session, actor, "challenge.finish", f"challenge:{ch.key}",
                 {"benchmark": bench.key, "private_revealed": revealed,
                  "ended_at": window(ch)[1].isoformat(),
                  "by": "an administrator" if actor is not None else "the reconciler"}, ip)
    return revealed


def finish_due(session: Session, *, now: datetime | None = None) -> list[str]:
    """Freeze the board of every phase that has closed, and finish every challenge whose last
    phase has closed. Returns the benchmark keys whose boards changed (the caller commits, then
    invalidates them). Idempotent."""
    now = now or utcnow()
    changed = []
    for ch in session.scalars(select(Challenge).where(Challenge.finalized_at.is_(None))
                              .order_by(Challenge.id)):
        if not ch.phases:
            continue
        if window(ch)[1] <= now:
            if not any(in_flight(session, ch, p) for p in ch.phases):
                finish_challenge(session, ch, now=now)
                changed.append(ch.benchmark.key)
            continue  # else at a later pass, once the last uploads are scored
        for p in ch.phases:
            if p.closes_at <= now and p.frozen_at is None and not in_flight(session, ch, p):
                freeze_phase(session, ch, p, now=now)
    return changed
