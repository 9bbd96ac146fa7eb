"""Challenges with phases (issue 12): creating them, the submission rules they impose, final
selections, and finishing them (the private part revealed and the results frozen).

Rules (design.md, "Boards, splits and fairness"; the models in
`leaderboard.server.models.challenges`):

* A challenge's *window* runs from its first phase's opening to its last phase's closing (UTC).
  Inside the window the benchmark accepts submissions only while a phase is open and only on
  that phase's split; a phase's ``daily_quota`` replaces the benchmark's daily quota and its
  ``max_submissions`` caps a team's scored work over the phase. Outside every window the
  standing leaderboard works as it always does.
* A submission belongs to the phase whose window holds its ``created_at``.
* Final selection (Kaggle): a team marks up to ``max_selections`` scored submissions per
  benchmark and split (``Submission.selected``; boards rank a team by its selected ones). For a
  challenge submission the choice closes with the challenge's last phase.
* `finish_due` (run by the reconciler, never by a person) finishes every challenge whose last
  phase has closed: it sets the benchmark's ``private_revealed``, freezes each phase's final
  ranking into ``results_json`` and audits it. A team's final row is the best, on the phase's
  part, of its selected submissions in the phase; a team that selected none is represented by
  its best on the public part (on the whole split when it has no parts), as Kaggle
  auto-selects.

Times are timezone-aware UTC everywhere. Functions take the session and never commit.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.access import audit
from leaderboard.server.boards import standings
from leaderboard.server.models import Benchmark, Score, Submission, Team, User, utcnow
from leaderboard.server.models.challenges import PHASE_PARTS, Challenge, ChallengePhase
from leaderboard.server.services import Forbidden, NotFound, ServiceError

#: final selections per team, benchmark and split when no challenge says otherwise
DEFAULT_MAX_SELECTIONS = 2
_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")


# -- reading ---------------------------------------------------------------------------------
def get_challenge(session: Session, key: str) -> Challenge:
    ch = session.scalar(select(Challenge).where(Challenge.key == key))
    if ch is None:
        raise NotFound(f"no challenge {key!r}")
    return ch


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
        start, end = window(ch)
        if start <= when < end:
            return ch
    return None


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
                        "state": ("open" if p is current else
                                  "closed" if p.closes_at <= now else "upcoming")}
                       for p in ch.phases]}


# -- creating --------------------------------------------------------------------------------
def _require_admin(actor: User | None) -> None:
    # the same rule as access.admin_ops.require_admin (imported there from services: no cycle)
    if actor is None or not getattr(actor, "is_admin", False) or not actor.is_active:
        raise Forbidden("administrators only")


def _opt_int(problems: ProblemList, field: str, value) -> int | None:
    if value in (None, ""):
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
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
            problems.add(f"must be a UTC date and time such as 2027-01-31T23:59, got "
                         f"{str(value)[:40]!r}", field=field)
            return None
    if parsed.tzinfo is None:  # the forms say UTC; naive input is taken as UTC
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


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
    _require_admin(actor)
    problems = ProblemList()
    key = (key or "").strip().lower()
    title = (title or "").strip()
    if not _KEY_RE.match(key):
        problems.add("2-63 characters: lower-case letters, digits and '-'", field="key")
    elif session.scalar(select(Challenge.id).where(Challenge.key == key)) is not None:
        problems.add(f"a challenge {key!r} already exists", field="key")
    if not 1 <= len(title) <= 200:
        problems.add("required, at most 200 characters", field="title")
    n_sel = _opt_int(problems, "max_selections", max_selections)
    if n_sel is not None and not 1 <= n_sel <= 20:
        problems.add(f"must be between 1 and 20, got {n_sel}", field="max_selections")
    splits = (benchmark.meta_json or {}).get("splits", [])
    rows = []
    for i, ph in enumerate(phases):
        where = f"phases[{i}]"
        name = (ph.get("name") or "").strip()
        split, part = ph.get("split") or "", ph.get("part") or "all"
        if not 1 <= len(name) <= 80:
            problems.add("required, at most 80 characters", field=f"{where}.name")
        if split not in splits:
            problems.add(f"unknown split {split!r}; {benchmark.key} has {splits}",
                         field=f"{where}.split")
        elif part not in PHASE_PARTS:
            problems.add(f"must be one of {list(PHASE_PARTS)}, got {part!r}",
                         field=f"{where}.part")
        elif (split in HELD_OUT_SPLITS) == (part == "all"):
            problems.add("a held-out split ranks its public or private part; another split "
                         "ranks all of it", field=f"{where}.part")
        opens = _when(problems, f"{where}.opens_at", ph.get("opens_at"))
        closes = _when(problems, f"{where}.closes_at", ph.get("closes_at"))
        if opens and closes and closes <= opens:
            problems.add("must be after opens_at", field=f"{where}.closes_at")
        rows.append(dict(name=name, split=split, part=part, opens_at=opens, closes_at=closes,
                         daily_quota=_opt_int(problems, f"{where}.daily_quota",
                                              ph.get("daily_quota")),
                         max_submissions=_opt_int(problems, f"{where}.max_submissions",
                                                  ph.get("max_submissions"))))
    if not rows:
        problems.add("a challenge needs at least one phase", field="phases")
    if not problems:
        for i in range(1, len(rows)):
            if rows[i]["opens_at"] < rows[i - 1]["closes_at"]:
                problems.add("must not open before the previous phase closes",
                             field=f"phases[{i}].opens_at")
    if not problems:
        start, end = rows[0]["opens_at"], rows[-1]["closes_at"]
        for other in list_challenges(session, benchmark):
            o_start, o_end = window(other)
            if start < o_end and o_start < end:
                problems.add(f"overlaps challenge {other.key!r} ({o_start:%Y-%m-%d %H:%M} to "
                             f"{o_end:%Y-%m-%d %H:%M} UTC)", field="phases")
    if problems:
        raise ServiceError("please correct the challenge", problems)
    ch = Challenge(key=key, benchmark_id=benchmark.id, title=title,
                   description_md=(description_md or "").strip(), max_selections=n_sel or 1,
                   phases=[ChallengePhase(position=i, **r) for i, r in enumerate(rows)])
    session.add(ch)
    session.flush()
    audit.record(session, actor, "admin.challenge.create", f"challenge:{key}",
                 {"benchmark": benchmark.key, "phases": [
                     {**r, "opens_at": r["opens_at"].isoformat(),
                      "closes_at": r["closes_at"].isoformat()} for r in rows]}, ip)
    return ch


def delete_challenge(session: Session, actor: User, ch: Challenge, *, ip: str = "") -> None:
    """Remove a challenge that has not finished (a finished one keeps its frozen results)."""
    _require_admin(actor)
    if ch.finalized_at is not None:
        raise ServiceError(f"challenge {ch.key!r} has finished; its results stay on record")
    audit.record(session, actor, "admin.challenge.delete", f"challenge:{ch.key}",
                 {"benchmark": ch.benchmark.key}, ip)
    session.delete(ch)


# -- submissions -----------------------------------------------------------------------------
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
    # leaderboard.server.services.submissions.take_quota_or_raise (issue 24)
    return phase


def phase_daily_quota(session: Session, bench: Benchmark, now: datetime) -> int | None:
    """The open phase's daily quota, which replaces the benchmark's while it is open."""
    ch = covering(session, bench.id, now)
    phase = phase_at(ch, now) if ch is not None else None
    return phase.daily_quota if phase is not None else None


# -- final selection -------------------------------------------------------------------------
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


# -- finishing -------------------------------------------------------------------------------
def finish_due(session: Session, *, now: datetime | None = None) -> list[str]:
    """Finish every challenge whose last phase has closed: reveal the benchmark's private part,
    freeze the results, audit (actor: none, the system). Returns the benchmark keys whose
    boards changed (the caller commits, then invalidates them). Idempotent."""
    now = now or utcnow()
    changed = []
    for ch in session.scalars(select(Challenge).where(Challenge.finalized_at.is_(None))
                              .order_by(Challenge.id)):
        if not ch.phases or window(ch)[1] > now:
            continue
        ch.results_json = freeze(session, ch, now=now)
        ch.finalized_at = now
        bench = ch.benchmark
        revealed = not bench.private_revealed
        bench.private_revealed = True
        audit.record(session, None, "challenge.finish", f"challenge:{ch.key}",
                     {"benchmark": bench.key, "private_revealed": revealed,
                      "ended_at": window(ch)[1].isoformat()})
        changed.append(bench.key)
    return changed


def _columns(meta: dict, task: dict, present: set[str]) -> list[standings.Column]:
    specs = meta.get("metrics", {})
    out, seen = [], set()
    for name in [task["headline"], *task.get("secondary", []), *specs]:
        if name in present and name in specs and name not in seen:
            seen.add(name)
            s = specs[name]
            out.append(standings.Column(name, s.get("title") or name,
                                        bool(s["higher_is_better"]), s.get("fmt", "num")))
    return out


def phase_results(session: Session, ch: Challenge, phase: ChallengePhase) -> list[dict]:
    """The final ranking of one phase, per task (see the module docstring)."""
    meta = ch.benchmark.meta_json or {}
    subs = {s.id: s for s in session.scalars(select(Submission).where(
        Submission.benchmark_id == ch.benchmark_id, Submission.split == phase.split,
        Submission.status == "scored", Submission.hidden.is_(False),
        Submission.is_public.is_(True), Submission.is_baseline.is_(False),
        Submission.disqualified_reason.is_(None), Submission.team_id.is_not(None),
        Submission.created_at >= phase.opens_at, Submission.created_at < phase.closes_at))}
    teams = dict(session.execute(select(Team.id, Team.name)).all()) if subs else {}
    pick_part = "all" if phase.part == "all" else "public"
    out = []
    for task in meta.get("tasks", []):
        cells: dict[int, dict[str, dict[str, standings.Cell]]] = {}
        if subs:
            for sid, part, metric, value, lo, hi, n in session.execute(
                    select(Score.submission_id, Score.part, Score.metric, Score.value,
                           Score.ci_low, Score.ci_high, Score.n)
                    .where(Score.submission_id.in_(list(subs)), Score.task == task["key"],
                           Score.slice_key == "", Score.part.in_({phase.part, pick_part}),
                           Score.judge.is_(None) | (Score.judge == "self-mapped"))):
                cells.setdefault(sid, {}).setdefault(part, {})[metric] = standings.Cell(
                    value, lo, hi, n or 0)
        present = {m for parts in cells.values() for m in parts.get(phase.part, {})}
        columns = _columns(meta, task, present)
        result = {"task": task["key"], "title": task.get("title") or task["key"],
                  "part": phase.part, "columns": [c.as_dict() for c in columns], "rows": []}
        if task["headline"] not in present:
            out.append(result)
            continue
        order = standings.order_of(columns, primary=task["headline"],
                                   secondary=task.get("secondary", []))
        by_team: dict[int, list[standings.Entry]] = {}
        for sid, parts in cells.items():
            if phase.part not in parts:
                continue
            s = subs[sid]
            by_team.setdefault(s.team_id, []).append(standings.Entry(
                submission_id=sid, created_at=s.created_at, cells=parts[phase.part],
                pick=parts.get(pick_part, {}), team_id=s.team_id,
                team_name=teams.get(s.team_id, ""), method_name=s.method_name,
                selected=s.selected))
        chosen = []
        for entries in by_team.values():
            candidates = [e for e in entries if e.selected] or [min(
                entries, key=lambda e: standings.sort_key(e.pick or {}, order, e.created_at,
                                                          e.submission_id))]
            chosen.append(min(candidates, key=lambda e: standings.sort_key(
                e.cells, order, e.created_at, e.submission_id)))
        for row in standings.rank_entries(chosen, order):
            e = row.entry
            result["rows"].append({
                "rank": row.rank, "team": e.team_name, "team_id": e.team_id,
                "submission_id": e.submission_id, "method_name": e.method_name,
                "selected": e.selected,
                "values": {c.metric: (e.cells[c.metric].as_dict() if c.metric in e.cells
                                      else standings.Cell(None).as_dict()) for c in columns}})
        out.append(result)
    return out


def freeze(session: Session, ch: Challenge, *, now: datetime) -> dict:
    """The frozen results document of a challenge (stored in ``results_json``)."""
    return {"challenge": ch.key, "benchmark": ch.benchmark.key, "frozen_at": now.isoformat(),
            "phases": [{"name": p.name, "split": p.split, "part": p.part,
                        "opens_at": p.opens_at.isoformat(), "closes_at": p.closes_at.isoformat(),
                        "tasks": phase_results(session, ch, p)} for p in ch.phases]}


def results_rows(results: dict) -> tuple[list[str], list[list]]:
    """(header, rows) of the frozen results as one flat table (the CSV export)."""
    header = ["phase", "split", "part", "task", "rank", "team", "method", "submission_id",
              "metric", "value", "ci_low", "ci_high", "n"]
    rows = []
    for ph in results.get("phases", []):
        for t in ph["tasks"]:
            for r in t["rows"]:
                for c in t["columns"]:
                    v = r["values"][c["metric"]]
                    rows.append([ph["name"], ph["split"], ph["part"], t["task"], r["rank"],
                                 r["team"], r["method_name"], r["submission_id"], c["metric"],
                                 v["value"], v["ci_low"], v["ci_high"], v["n"]])
    return header, rows


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

