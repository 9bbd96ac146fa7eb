"""Creating, editing and deleting challenges and their phases: validated (every bad field named
as ``phases[i].field``), audited (one event per change, with the old and new values), never
committed here.

What may change once time has moved on (the submissions already made were judged by the rules
in force, so those rules stay): a *closed* phase never changes; an *open* phase keeps its split,
part and opening, and its closing may move but not into the past; a phase that has not opened
may change in every field, but not open in the past. A finished challenge never changes (its
results are on record). Phases stay in time order without overlap, and a challenge's window
never overlaps another challenge of the benchmark.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.access import audit
from leaderboard.server.access.admins import require_admin
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import Benchmark, User, utcnow
from leaderboard.server.models.challenges import PHASE_PARTS, Challenge, ChallengePhase
from leaderboard.server.numbers import ascii_int
from leaderboard.server.services.challenges.rules import DEFAULT_MAX_SELECTIONS
from leaderboard.server.services.challenges.timeline import list_challenges, phase_state, window

_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")
#: the fields of a phase an admin sets
PHASE_FIELDS = ("name", "split", "part", "opens_at", "closes_at", "daily_quota",
                "max_submissions")
#: fields an open phase may still change
OPEN_PHASE_MUTABLE = ("name", "closes_at", "daily_quota", "max_submissions")


def _opt_int(problems: ProblemList, field: str, value) -> int | None:
    if value in (None, ""):
        return None
    n = value if isinstance(value, int) and not isinstance(value, bool) else (
        ascii_int(value.strip(" \t"), signed=True) if isinstance(value, str) else None)
    if n is None:  # ASCII digits only (int() also takes "٣", "1_0" and Unicode spaces)
        problems.add(f"must be a whole number, got {str(value)[:40]!r}", field=field)
        return None
    if n < 0:
        problems.add(f"must be >= 0, got {n}", field=field)
    elif n > 2**31 - 1:  # the database's integer columns (PostgreSQL refuses more)
        problems.add(f"must be at most {2**31 - 1}, got {n}", field=field)
        return None
    return n


def _when(problems: ProblemList, field: str, value) -> datetime | None:
    if isinstance(value, datetime):
        parsed = value
    else:
        try:
            parsed = datetime.fromisoformat(str(value or "").strip())
        except ValueError:
            problems.add("required: a UTC date and time such as 2027-01-31T23:59" if not value
                         else f"must be a UTC date and time such as 2027-01-31T23:59, got "
                              f"{str(value)[:40]!r}", field=field)
            return None
    if parsed.tzinfo is None:  # the forms say UTC; naive input is taken as UTC
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


def _fmt(t: datetime) -> str:
    return f"{t:%Y-%m-%d %H:%M} UTC"


def _phase_row(problems: ProblemList, benchmark: Benchmark, where: str,
               ph: dict[str, Any]) -> dict[str, Any]:
    """One phase's fields, checked; bad ones are named ``{where}.field``."""
    splits = (benchmark.meta_json or {}).get("splits", [])
    name = (ph.get("name") or "").strip()
    split, part = ph.get("split") or "", ph.get("part") or "all"
    if not 1 <= len(name) <= 80:
        problems.add("required, at most 80 characters", field=f"{where}.name")
    if split not in splits:
        problems.add(f"unknown split {split!r}; {benchmark.key} has {splits}",
                     field=f"{where}.split")
    elif part not in PHASE_PARTS:
        problems.add(f"must be one of {list(PHASE_PARTS)}, got {part!r}", field=f"{where}.part")
    elif (split in HELD_OUT_SPLITS) == (part == "all"):
        problems.add("a held-out split ranks its public or private part; another split "
                     "ranks all of it", field=f"{where}.part")
    opens = _when(problems, f"{where}.opens_at", ph.get("opens_at"))
    closes = _when(problems, f"{where}.closes_at", ph.get("closes_at"))
    if opens and closes and closes <= opens:
        problems.add(f"the end ({_fmt(closes)}) must be after the start ({_fmt(opens)})",
                     field=f"{where}.closes_at")
    return dict(name=name, split=split, part=part, opens_at=opens, closes_at=closes,
                daily_quota=_opt_int(problems, f"{where}.daily_quota", ph.get("daily_quota")),
                max_submissions=_opt_int(problems, f"{where}.max_submissions",
                                         ph.get("max_submissions")))


def _check_schedule(problems: ProblemList, session: Session, benchmark: Benchmark,
                    rows: list[dict], *, names: list[str], exclude: int | None = None) -> None:
    """Phases in time order without overlap; the window clear of the benchmark's other
    challenges (``exclude``: the challenge being edited)."""
    if not rows:
        problems.add("a challenge needs at least one phase", field="phases")
    if problems:
        return
    for i in range(1, len(rows)):
        if rows[i]["opens_at"] < rows[i - 1]["closes_at"]:
            problems.add(f"overlaps phase {rows[i - 1]['name']!r}, which closes at "
                         f"{_fmt(rows[i - 1]['closes_at'])}: a phase must not open before the "
                         "previous one closes", field=f"{names[i]}.opens_at")
    if problems:
        return
    start, end = rows[0]["opens_at"], rows[-1]["closes_at"]
    for other in list_challenges(session, benchmark):
        if other.id == exclude or not other.phases:
            continue
        o_start, o_end = window(other)
        if start < o_end and o_start < end:
            problems.add(f"overlaps challenge {other.key!r} ({o_start:%Y-%m-%d %H:%M} to "
                         f"{o_end:%Y-%m-%d %H:%M} UTC)", field="phases")


def _settings(problems: ProblemList, title, max_selections) -> tuple[str, int | None]:
    title = (title or "").strip()
    if not 1 <= len(title) <= 200:
        problems.add("required, at most 200 characters", field="title")
    n_sel = _opt_int(problems, "max_selections", max_selections)
    if n_sel is not None and not 1 <= n_sel <= 20:
        problems.add(f"must be between 1 and 20, got {n_sel}", field="max_selections")
    return title, n_sel


def _jsonable(row: dict) -> dict:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in row.items()}


def create_challenge(session: Session, actor: User, benchmark: Benchmark, *, key: str,
                     title: str, phases: list[dict[str, Any]], description_md: str = "",
                     max_selections: int | str = DEFAULT_MAX_SELECTIONS,
                     ip: str = "") -> Challenge:
    """Add a challenge with its phases (dicts: name, split, part, opens_at, closes_at,
    daily_quota, max_submissions). ServiceError names every bad field as ``phases[i].field``.

    Phases must be in time order without overlap, each on one of the benchmark's splits, with
    part "all" on a split without parts and "public" or "private" on a held-out split; the
    window must not overlap another challenge of the benchmark. Audited; the caller commits.
    """
    require_admin(actor)
    problems = ProblemList()
    key = (key or "").strip().lower()
    if not _KEY_RE.match(key):
        problems.add("2-63 characters: lower-case letters, digits and '-'", field="key")
    elif session.scalar(select(Challenge.id).where(Challenge.key == key)) is not None:
        problems.add(f"a challenge {key!r} already exists", field="key")
    title, n_sel = _settings(problems, title, max_selections)
    rows = [_phase_row(problems, benchmark, f"phases[{i}]", ph) for i, ph in enumerate(phases)]
    _check_schedule(problems, session, benchmark, rows,
                    names=[f"phases[{i}]" for i in range(len(rows))])
    if problems:
        raise ServiceError("please correct the challenge", problems)
    ch = Challenge(key=key, benchmark_id=benchmark.id, title=title,
                   description_md=(description_md or "").strip(), max_selections=n_sel or 1,
                   phases=[ChallengePhase(position=i, **r) for i, r in enumerate(rows)])
    session.add(ch)
    session.flush()
    audit.record(session, actor, "admin.challenge.create", f"challenge:{key}",
                 {"benchmark": benchmark.key, "phases": [_jsonable(r) for r in rows]}, ip)
    return ch


def _merged(p: ChallengePhase, given: dict[str, Any]) -> dict[str, Any]:
    """An existing phase's fields with what the form sent (a field left out keeps its value)."""
    out = {f: getattr(p, f) if given.get(f) is None else given[f] for f in PHASE_FIELDS}
    for f in ("opens_at", "closes_at"):
        # the form shows minutes: the same minute sent back is no change
        if isinstance(out[f], str) and out[f].strip() in (
                f"{getattr(p, f):%Y-%m-%dT%H:%M}", f"{getattr(p, f):%Y-%m-%d %H:%M}"):
            out[f] = getattr(p, f)
    return out


def _locked_changes(problems: ProblemList, where: str, p: ChallengePhase, row: dict,
                    now: datetime) -> None:
    """Changes time no longer allows on an existing phase (see the module docstring)."""
    state = phase_state(p, now)
    changed = [f for f in PHASE_FIELDS if row[f] != getattr(p, f)]
    if state == "closed":
        for f in changed:
            problems.add(f"phase {p.name!r} closed at {_fmt(p.closes_at)}; it can no longer "
                         "change", field=f"{where}.{f}")
    elif state == "open":
        for f in changed:
            if f not in OPEN_PHASE_MUTABLE:
                problems.add(f"phase {p.name!r} is open (since {_fmt(p.opens_at)}): its {f} "
                             "can no longer change, submissions were made under it",
                             field=f"{where}.{f}")
        if "closes_at" in changed and row["closes_at"] and row["closes_at"] <= now:
            problems.add(f"phase {p.name!r} is open: its end may move, but not into the past "
                         f"(now {_fmt(now)})", field=f"{where}.closes_at")
    elif "opens_at" in changed and row["opens_at"] and row["opens_at"] < now:
        problems.add(f"a phase that has not opened cannot open in the past (now {_fmt(now)})",
                     field=f"{where}.opens_at")


def update_challenge(session: Session, actor: User, ch: Challenge, *,
                     title: str | None = None, description_md: str | None = None,
                     max_selections: int | str | None = None,
                     phases: list[dict[str, Any]] | None = None,
                     now: datetime | None = None, ip: str = "") -> list[str]:
    """Edit a challenge and its phases; returns the changes in words (empty: nothing changed).

    ``phases`` (None: keep them all) lists the phases in their new order: an existing phase as
    a dict with its ``position`` and the fields to change (a field left out keeps its value;
    ``remove`` true drops it), a new phase as a dict without ``position``. Validation as
    `create_challenge` plus what time allows (module docstring); ServiceError names each bad
    field as ``phases[i].field`` (``i``: the place in ``phases``). One audit event per change;
    the caller commits, then invalidates the benchmark's boards.
    """
    require_admin(actor)
    now = now or utcnow()
    if ch.finalized_at is not None:
        raise ServiceError(f"challenge {ch.key!r} finished on {_fmt(ch.finalized_at)}; its "
                           "results are on record and it can no longer change", status=409,
                           code="conflict")
    problems = ProblemList()
    new_title, n_sel = _settings(problems, ch.title if title is None else title,
                                 ch.max_selections if max_selections in (None, "")
                                 else max_selections)
    by_pos = {p.position: p for p in ch.phases}
    plan: list[tuple[ChallengePhase | None, dict]] = []  # (existing phase or None, fields)
    names: list[str] = []
    removed: list[ChallengePhase] = []
    seen: set[int] = set()
    for i, given in enumerate(phases if phases is not None
                              else [{"position": p.position} for p in ch.phases]):
        where = f"phases[{i}]"
        pos = given.get("position")
        if pos in (None, ""):
            row = _phase_row(problems, ch.benchmark, where, given)
            if row["opens_at"] and row["opens_at"] < now:
                problems.add(f"a new phase cannot open in the past (now {_fmt(now)})",
                             field=f"{where}.opens_at")
            plan.append((None, row))
            names.append(where)
            continue
        try:
            p = by_pos[int(pos)]
        except (KeyError, TypeError, ValueError):
            problems.add(f"no phase at position {pos!r}; positions: {sorted(by_pos)}",
                         field=f"{where}.position")
            continue
        if p.position in seen:
            problems.add(f"phase {p.name!r} is listed twice", field=f"{where}.position")
            continue
        seen.add(p.position)
        if given.get("remove"):
            if phase_state(p, now) != "upcoming":
                problems.add(f"phase {p.name!r} has opened; only a phase that has not opened "
                             "can be removed", field=f"{where}.remove")
            removed.append(p)
            continue
        row = _phase_row(problems, ch.benchmark, where, _merged(p, given))
        _locked_changes(problems, where, p, row, now)
        plan.append((p, row))
        names.append(where)
    for pos in sorted(set(by_pos) - seen):  # a phase the form left out is not dropped silently
        problems.add(f"phase {by_pos[pos].name!r} (position {pos}) is missing; send it with "
                     "remove to drop it", field="phases")
    _check_schedule(problems, session, ch.benchmark, [r for _, r in plan], names=names,
                    exclude=ch.id)
    if problems:
        raise ServiceError(f"please correct challenge {ch.key!r}", problems)
    return _apply(session, actor, ch, plan, removed, title=new_title, n_sel=n_sel,
                  description_md=description_md, ip=ip)


def _apply(session, actor, ch, plan, removed, *, title, n_sel, description_md, ip) -> list[str]:
    done: list[str] = []
    target = f"challenge:{ch.key}"
    settings: dict[str, list] = {}
    if title != ch.title:
        settings["title"] = [ch.title, title]
        ch.title = title
    if n_sel is not None and n_sel != ch.max_selections:
        settings["max_selections"] = [ch.max_selections, n_sel]
        ch.max_selections = n_sel
    if description_md is not None and description_md.strip() != ch.description_md:
        settings["description_md"] = [f"{len(ch.description_md)} characters",
                                      f"{len(description_md.strip())} characters"]
        ch.description_md = description_md.strip()
    if settings:
        audit.record(session, actor, "admin.challenge.edit", target,
                     {"benchmark": ch.benchmark.key, "changes": settings}, ip)
        done.extend(settings)
    for p in removed:
        audit.record(session, actor, "admin.challenge.phase.remove", target,
                     {"phase": p.name, "position": p.position, **_jsonable(
                         {f: getattr(p, f) for f in PHASE_FIELDS})}, ip)
        ch.phases.remove(p)
        done.append(f"phase {p.name!r} removed")
    # positions follow the new order; parked out of the way first (unique per challenge)
    for p, _ in plan:
        if p is not None:
            p.position = -1 - p.position
    session.flush()
    for i, (p, row) in enumerate(plan):
        if p is None:
            ch.phases.append(ChallengePhase(position=i, **row))
            audit.record(session, actor, "admin.challenge.phase.add", target,
                         {"phase": row["name"], "position": i, **_jsonable(row)}, ip)
            done.append(f"phase {row['name']!r} added")
            continue
        changes = {f: [getattr(p, f), row[f]] for f in PHASE_FIELDS if getattr(p, f) != row[f]}
        p.position = i
        for f, (_, new) in changes.items():
            setattr(p, f, new)
        if changes:
            audit.record(session, actor, "admin.challenge.phase.edit", target,
                         {"phase": row["name"], "position": i,
                          "changes": {f: [_jsonable({"v": a})["v"], _jsonable({"v": b})["v"]]
                                      for f, (a, b) in changes.items()}}, ip)
            done.append(f"phase {row['name']!r}: {', '.join(changes)}")
    session.flush()
    session.expire(ch, ["phases"])  # reloaded in the new order
    return done


def delete_challenge(session: Session, actor: User, ch: Challenge, *, ip: str = "") -> None:
    """Remove a challenge that has not finished (a finished one keeps its frozen results)."""
    require_admin(actor)
    if ch.finalized_at is not None:
        raise ServiceError(f"challenge {ch.key!r} has finished; its results stay on record")
    audit.record(session, actor, "admin.challenge.delete", f"challenge:{ch.key}",
                 {"benchmark": ch.benchmark.key}, ip)
    session.delete(ch)
