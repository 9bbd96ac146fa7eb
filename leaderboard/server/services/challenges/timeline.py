"""Where a challenge stands in time: its window, the open phase, its state, and the plain
description the pages and the API show. Reads only."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.errors import NotFound
from leaderboard.server.models import Benchmark, utcnow
from leaderboard.server.models.challenges import Challenge, ChallengePhase


def get_challenge(session: Session, key: str) -> Challenge:
    ch = session.scalar(select(Challenge).where(Challenge.key == key))
    if ch is None:
        known = list(session.scalars(select(Challenge.key).order_by(Challenge.key).limit(20)))
        raise NotFound(f"no challenge {key!r}" + (f"; challenges: {known}" if known else
                                                   "; no challenge has been announced"))
    return ch


def get_phase(ch: Challenge, position: int) -> ChallengePhase:
    """Phase number ``position`` (0-based, as in URLs); NotFound names the phases there are."""
    for p in ch.phases:
        if p.position == position:
            return p
    raise NotFound(f"challenge {ch.key!r} has no phase {position}; its phases are "
                   + ", ".join(f"{p.position} ({p.name})" for p in ch.phases))


def list_challenges(session: Session, benchmark: Benchmark | None = None) -> list[Challenge]:
    q = select(Challenge).order_by(Challenge.created_at.desc(), Challenge.id.desc())
    if benchmark is not None:
        q = q.where(Challenge.benchmark_id == benchmark.id)
    return list(session.scalars(q))


def window(ch: Challenge) -> tuple[datetime, datetime]:
    """(first opening, last closing) of a challenge."""
    return (min(p.opens_at for p in ch.phases), max(p.closes_at for p in ch.phases))


def phase_at(ch: Challenge, when: datetime) -> ChallengePhase | None:
    """The phase open at ``when`` (opens_at <= when < closes_at), if any."""
    for p in ch.phases:
        if p.opens_at <= when < p.closes_at:
            return p
    return None


def phase_state(p: ChallengePhase, now: datetime) -> str:
    """"upcoming", "open" or "closed"."""
    if now < p.opens_at:
        return "upcoming"
    return "open" if now < p.closes_at else "closed"


def state(ch: Challenge, now: datetime | None = None) -> str:
    """"upcoming", "running" (a phase is open), "paused" (between phases), "ended" (closed,
    not yet finished by the reconciler) or "finished"."""
    now = now or utcnow()
    if ch.finalized_at is not None:
        return "finished"
    start, end = window(ch)
    if now < start:
        return "upcoming"
    if now >= end:
        return "ended"
    return "running" if phase_at(ch, now) is not None else "paused"


def covering(session: Session, benchmark_id: int, when: datetime) -> Challenge | None:
    """The challenge of the benchmark whose window holds ``when`` (windows never overlap)."""
    for ch in session.scalars(select(Challenge).where(Challenge.benchmark_id == benchmark_id)):
        if not ch.phases:
            continue
        start, end = window(ch)
        if start <= when < end:
            return ch
    return None


def board_phase(ch: Challenge, now: datetime | None = None) -> ChallengePhase | None:
    """The phase whose board a challenge's page shows first: the open one, else the latest that
    has opened, else the first."""
    now = now or utcnow()
    opened = [p for p in ch.phases if p.opens_at <= now]
    return phase_at(ch, now) or (opened[-1] if opened else (ch.phases[0] if ch.phases else None))


def describe(ch: Challenge, now: datetime | None = None) -> dict:
    """A challenge as the pages and the API show it (plain, JSON-ready)."""
    now = now or utcnow()
    current = phase_at(ch, now)
    start, end = window(ch)
    nxt = next((p for p in ch.phases if p.opens_at > now), None)
    return {"key": ch.key, "title": ch.title, "benchmark": ch.benchmark.key,
            "benchmark_title": ch.benchmark.title, "state": state(ch, now),
            "starts_at": start.isoformat(), "ends_at": end.isoformat(),
            "max_selections": ch.max_selections,
            "finalized_at": ch.finalized_at.isoformat() if ch.finalized_at else None,
            "current_phase": current.name if current else None,
            "next_phase": ({"name": nxt.name, "opens_at": nxt.opens_at.isoformat()}
                           if nxt else None),
            "phases": [{"position": p.position, "name": p.name, "split": p.split,
                        "part": p.part, "opens_at": p.opens_at.isoformat(),
                        "closes_at": p.closes_at.isoformat(), "daily_quota": p.daily_quota,
                        "max_submissions": p.max_submissions,
                        "frozen_at": p.frozen_at.isoformat() if p.frozen_at else None,
                        "state": phase_state(p, now)}
                       for p in ch.phases]}


def countdown_target(ch: Challenge, now: datetime | None = None) -> tuple[str, datetime] | None:
    """(what happens, when) for the countdown shown on pages: the next opening or closing."""
    now = now or utcnow()
    current = phase_at(ch, now)
    if current is not None:
        return f"{current.name} closes", current.closes_at
    nxt = next((p for p in ch.phases if p.opens_at > now), None)
    if nxt is not None:
        return f"{nxt.name} opens", nxt.opens_at
    return None
