"""The audit log as a person reads it (issue 21, item 6): names and links instead of raw ids,
and an agreement's version as its number and date instead of its 64-character hash.

The log itself stays as written (append-only, ids and hashes: `leaderboard.server.access.audit`);
this module only resolves what an event refers to, for a page of events at a time, with one
query per kind of thing referred to. A reference that no longer resolves (a deleted user) keeps
its raw value with "(deleted)", so nothing is hidden.

A resolved reference is ``{"text", "kind", "ref"}``: ``kind`` ("user", "team", "submission",
"benchmark", "challenge", "request", or None for plain text) and ``ref`` (an id or key) are what
the template turns into a link; the service layer builds no URLs.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.models import Benchmark, Submission, Team, User
from leaderboard.server.models.access import AccessRequest, Agreement, AuditEvent

#: detail keys that hold an id of one kind of thing
_ID_KEYS = {"user": "user", "user_id": "user", "team": "team", "team_id": "team",
            "submission": "submission", "submission_id": "submission",
            "submissions": "submission", "request": "request"}
#: targets written as "<kind>:<id or key>"
_TARGET = re.compile(r"^(user|team|submission|benchmark|challenge|access_request|api_token|"
                     r"login_session):([^/\s]+)$")
_ID = re.compile(r"[0-9]{1,18}")
_HASH = re.compile(r"^[0-9a-f]{64}$")
_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d")


def _id(text: str) -> int | None:
    """The id in a target, or None: ASCII digits only (str.isdigit accepts "²", which int
    refuses)."""
    return int(text) if _ID.fullmatch(text) else None


def _ints(value) -> list[int]:
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)]


class _Names:
    """Every name a page of events needs, loaded with one query per kind."""

    def __init__(self, session: Session, events: list[AuditEvent]):
        want: dict[str, set] = {"user": set(), "team": set(), "submission": set(),
                                "request": set(), "bench_id": set()}
        for e in events:
            if e.actor_id is not None:
                want["user"].add(e.actor_id)
            m = _TARGET.match(e.target or "")
            if m and _id(m.group(2)) is not None:
                kind = {"access_request": "request"}.get(m.group(1), m.group(1))
                if kind in want:
                    want[kind].add(_id(m.group(2)))
            for key, value in (e.detail or {}).items():
                if key in _ID_KEYS:
                    want[_ID_KEYS[key]].update(_ints(value))
                elif key == "benchmark":
                    want["bench_id"].update(_ints(value))
        self.requests = {r.id: r for r in session.scalars(
            select(AccessRequest).where(AccessRequest.id.in_(want["request"])))} \
            if want["request"] else {}
        want["user"].update(r.user_id for r in self.requests.values())
        self.users = {uid: (name, email) for uid, name, email in session.execute(
            select(User.id, User.display_name, User.email).where(User.id.in_(want["user"])))} \
            if want["user"] else {}
        self.teams = dict(session.execute(select(Team.id, Team.name)
                                          .where(Team.id.in_(want["team"]))).all()) \
            if want["team"] else {}
        self.subs = {sid: (method, key) for sid, method, key in session.execute(
            select(Submission.id, Submission.method_name, Benchmark.key)
            .join(Benchmark, Submission.benchmark_id == Benchmark.id)
            .where(Submission.id.in_(want["submission"])))} if want["submission"] else {}
        self.benches = dict(session.execute(select(Benchmark.id, Benchmark.key)).all())
        self.bench_ids = {key: bid for bid, key in self.benches.items()}
        self.versions = agreement_versions(session)

    def ref(self, kind: str, value) -> dict:
        if kind == "user":
            found = self.users.get(value)
            return {"text": found[0] if found else f"user {value} (deleted)",
                    "kind": "user" if found else None, "ref": value,
                    "email": found[1] if found else ""}
        if kind == "team":
            name = self.teams.get(value)
            return {"text": name if name is not None else f"team {value} (deleted)",
                    "kind": "team" if name is not None else None, "ref": value}
        if kind == "submission":
            found = self.subs.get(value)
            return {"text": f"#{value} {found[0]} ({found[1]})" if found
                    else f"submission {value} (deleted)",
                    "kind": "submission" if found else None, "ref": value}
        if kind == "request":
            req = self.requests.get(value)
            if req is None:
                return {"text": f"request {value} (deleted)", "kind": None, "ref": value}
            who, email = self.users.get(req.user_id, (f"user {req.user_id}", ""))
            return {"text": f"request #{value} by {who} for "
                            f"{self.benches.get(req.benchmark_id, req.benchmark_id)}",
                    "kind": "request", "ref": value, "email": email}
        if kind == "benchmark":
            key = self.benches.get(value, value) if isinstance(value, int) else value
            known = key in self.bench_ids
            return {"text": str(key) if known else f"benchmark {key} (deleted)",
                    "kind": "benchmark" if known else None, "ref": key}
        return {"text": str(value), "kind": kind, "ref": value}


def agreement_versions(session: Session) -> dict[tuple[int, str], tuple[int, datetime]]:
    """(benchmark id, version hash) -> (its number, 1 = the first text, and its date) for
    every agreement text the site has kept."""
    out, counters = {}, {}
    for bid, version, created in session.execute(
            select(Agreement.benchmark_id, Agreement.version, Agreement.created_at)
            .order_by(Agreement.benchmark_id, Agreement.created_at, Agreement.id)):
        counters[bid] = counters.get(bid, 0) + 1
        out[(bid, version)] = (counters[bid], created)
    return out


def version_label(versions: dict, benchmark_id: int | None, version: str | None) -> str:
    """"version 2 of 2026-11-30" for a kept text; a text nobody has signed yet (not kept) is
    "the current version (not yet signed)"; an unknown hash shows its first 8 characters."""
    if not version:
        return "no agreement"
    found = versions.get((benchmark_id, version))
    if found is not None:
        n, created = found
        return f"version {n} of {created:%Y-%m-%d}"
    return f"version {version[:8]}…"


def _target(names: _Names, target: str) -> dict:
    m = _TARGET.match(target or "")
    if not m:
        return {"text": target or "", "kind": None, "ref": None}
    kind, value = m.group(1), m.group(2)
    if kind in ("user", "team", "submission") and _id(value) is not None:
        return names.ref(kind, _id(value))
    if kind == "access_request" and _id(value) is not None:
        return names.ref("request", _id(value))
    if kind == "benchmark":
        return names.ref("benchmark", value)
    if kind == "challenge":
        return {"text": f"challenge {value}", "kind": "challenge", "ref": value}
    return {"text": f"{kind.replace('_', ' ')} {value}", "kind": None, "ref": value}


def _bench_of(names: _Names, e: AuditEvent) -> int | None:
    detail = e.detail or {}
    b = detail.get("benchmark")
    if isinstance(b, int):
        return b
    if isinstance(b, str):
        return names.bench_ids.get(b)
    m = _TARGET.match(e.target or "")
    if m and m.group(1) == "benchmark":
        return names.bench_ids.get(m.group(2))
    if m and m.group(1) == "access_request" and _id(m.group(2)) is not None:
        req = names.requests.get(_id(m.group(2)))
        return req.benchmark_id if req else None
    return None


def _detail(names: _Names, e: AuditEvent) -> list[tuple[str, list[dict]]]:
    out = []
    for key, value in (e.detail or {}).items():
        label = key.replace("_", " ")
        if key in _ID_KEYS and _ints(value):
            out.append((label, [names.ref(_ID_KEYS[key], v) for v in _ints(value)]))
        elif key == "benchmark" and isinstance(value, (int, str)):
            out.append((label, [names.ref("benchmark", value)]))
        elif key == "agreement_version" and isinstance(value, str):
            out.append(("agreement", [{"text": version_label(names.versions,
                                                             _bench_of(names, e), value),
                                       "kind": None, "ref": None}]))
        elif isinstance(value, str) and _HASH.match(value):
            out.append((label, [{"text": value[:12] + "…", "kind": None, "ref": None}]))
        elif key == "changes" and isinstance(value, dict):
            out.append((label, [{"text": "; ".join(
                f"{k.replace('_', ' ')}: {_plain(v[0])} → {_plain(v[1])}"
                if isinstance(v, list) and len(v) == 2 else f"{k}: {_plain(v)}"
                for k, v in value.items()), "kind": None, "ref": None}]))
        elif key == "phases" and isinstance(value, list) and all(
                isinstance(p, dict) for p in value):
            out.append((label, [{"text": "; ".join(
                f"{p.get('name')} ({p.get('split')} · {p.get('part')}, "
                f"{_plain(p.get('opens_at'))} → {_plain(p.get('closes_at'))})"
                for p in value), "kind": None, "ref": None}]))
        elif isinstance(value, str) and _ISO.match(value):
            out.append((label, [{"text": _plain(value), "kind": None, "ref": None}]))
        elif isinstance(value, (dict, list)):
            out.append((label, [{"text": _compact(value), "kind": None, "ref": None}]))
        else:
            out.append((label, [{"text": "—" if value is None else str(value), "kind": None,
                                 "ref": None}]))
    return out


def _plain(value) -> str:
    """A value in words: an ISO time as "2026-12-03 15:45 UTC", None as "none"."""
    if value is None:
        return "none"
    if isinstance(value, str) and _ISO.match(value):
        try:
            t = datetime.fromisoformat(value)
        except ValueError:
            return value
        return f"{t:%Y-%m-%d %H:%M} UTC"
    return str(value)


def _compact(value) -> str:
    import json
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 400 else text[:399] + "…"


def describe(session: Session, events: Iterable[AuditEvent]) -> list[dict]:
    """Each event as ``{"id", "at", "action", "ip", "actor", "target", "detail"}`` with every
    reference resolved (module docstring); ``detail`` is ``[(label, [reference, ...])]``."""
    events = list(events)
    names = _Names(session, events)
    out = []
    for e in events:
        if e.actor_id is None:
            actor = {"text": e.actor_email or "the system", "kind": None, "ref": None}
        else:
            actor = names.ref("user", e.actor_id)
            if actor["kind"] is None and e.actor_email:
                actor = {**actor, "text": f"{e.actor_email} (deleted)"}
        out.append({"id": e.id, "at": e.at, "action": e.action, "ip": e.ip,
                    "actor": {**actor, "email": e.actor_email},
                    "target": _target(names, e.target), "detail": _detail(names, e)})
    return out


def label_for(session: Session, benchmark: Benchmark, version: str | None) -> str:
    """An agreement version of ``benchmark`` in words ("version 2 of 2026-11-30"). The current
    text, before anyone has signed it (so before it is kept), counts as the next number, dated
    when the pack brought it."""
    rows = session.execute(select(Agreement.version, Agreement.created_at)
                           .where(Agreement.benchmark_id == benchmark.id)
                           .order_by(Agreement.created_at, Agreement.id)).all()
    for n, (v, created) in enumerate(rows, start=1):
        if v == version:
            return f"version {n} of {created:%Y-%m-%d}"
    if version and version == benchmark.agreement_version:
        return f"version {len(rows) + 1} of {benchmark.created_at:%Y-%m-%d}"
    return version_label({}, None, version)
