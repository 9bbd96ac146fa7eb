"""Signing a benchmark's data-use agreement (which creates an access request).

The agreement's version is the sha256 of its text (set when the pack is imported). A signature
records the user, the exact version, the time, the IP and the user agent; each signature is a new
`AccessRequest` row waiting for an administrator (`leaderboard.server.services.decisions`).
What a reviewer needs to decide (issue 35) is asked of every signer: full name, institution
(``affiliation``), role and intended use, plus the benchmark's own ``request_fields``
(`leaderboard.core.request_fields`, kept in ``meta_json``), whose answers are stored as given.
The IP is the client address as the app reads it (``request.remote_addr``, behind ProxyFix when
``TRUSTED_PROXY_COUNT`` is set): the review page compares it with other accounts' addresses.
"""
from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server.access import audit
from leaderboard.server.access.gate import grant_state, latest_request
from leaderboard.server.errors import Forbidden, ServiceError
from leaderboard.server.models import Benchmark, User, utcnow
from leaderboard.server.models.access import AccessRequest, Agreement

LIMITS = {"full_name": 200, "affiliation": 300, "role": 200, "intended_use": 5000}
MIN_INTENDED_USE = 20  # a sentence, so an administrator has something to decide on


def agreement_version(text: str) -> str:
    """The version of an agreement text: its sha256 (hex) over UTF-8."""
    return hashlib.sha256((text or "").encode("utf-8")).hexdigest()


def current_agreement(session: Session, benchmark: Benchmark) -> Agreement:
    """The Agreement row of the benchmark's current text, added on first use (no commit)."""
    version = benchmark.agreement_version or agreement_version(benchmark.agreement_md)
    row = session.scalar(select(Agreement).where(Agreement.benchmark_id == benchmark.id,
                                                 Agreement.version == version))
    if row is None:
        row = Agreement(benchmark_id=benchmark.id, version=version,
                        text=benchmark.agreement_md or "")
        session.add(row)
        session.flush()
    return row


def request_fields(benchmark: Benchmark) -> list[dict]:
    """The benchmark's own questions (dicts of `leaderboard.core.request_fields.RequestField`)."""
    return list((benchmark.meta_json or {}).get("request_fields") or [])


def _answers(benchmark: Benchmark, answers: dict | None, problems: ProblemList) -> dict | None:
    """The answers to the benchmark's own fields, stripped and checked (None: it has none)."""
    fields = request_fields(benchmark)
    if not fields:
        return None
    answers = answers or {}
    out = {}
    for f in fields:
        value = str(answers.get(f["key"]) or "").strip()
        if f.get("required") and not value:
            problems.add("required", field=f["key"])
        elif len(value) > int(f.get("max_length") or 500):
            problems.add(f"at most {f['max_length']} characters, got {len(value)}",
                         field=f["key"])
        out[f["key"]] = value
    return out


def _check(full_name: str, affiliation: str, role: str, intended_use: str,
           accepted: bool) -> ProblemList:
    problems = ProblemList()
    for field, value in (("full_name", full_name), ("affiliation", affiliation),
                         ("role", role), ("intended_use", intended_use)):
        if not value:
            problems.add("required", field=field)
        elif len(value) > LIMITS[field]:
            problems.add(f"at most {LIMITS[field]} characters, got {len(value)}", field=field)
    if intended_use and len(intended_use) < MIN_INTENDED_USE:
        problems.add(f"describe the intended use in at least {MIN_INTENDED_USE} characters",
                     field="intended_use")
    if accepted is not True:
        problems.add("you must explicitly accept the agreement", field="accept")
    return problems


def sign(session: Session, user: User, benchmark: Benchmark, *, full_name: str,
         affiliation: str, role: str, intended_use: str, accepted: bool,
         answers: dict | None = None, ip: str = "", user_agent: str = "",
         now: datetime | None = None) -> AccessRequest:
    """Record ``user``'s signature of the benchmark's current agreement; returns the new pending
    request. ``answers`` maps the benchmark's ``request_fields`` keys to text (others are
    ignored). ServiceError (400) names each bad field; 409 when a request for this version is
    already pending or a live grant exists; 403 for a disabled account. The caller commits."""
    if not user.is_active:
        raise Forbidden("this account is disabled")
    full_name, affiliation = (full_name or "").strip(), (affiliation or "").strip()
    role, intended_use = (role or "").strip(), (intended_use or "").strip()
    problems = _check(full_name, affiliation, role, intended_use, accepted)
    kept = _answers(benchmark, answers, problems)
    if problems:
        raise ServiceError("please correct the fields marked below", problems)
    agreement = current_agreement(session, benchmark)
    last = latest_request(session, user.id, benchmark.id)
    if last is not None and last.agreement_version == agreement.version:
        if last.status == "pending":
            raise ServiceError("you already signed this version; your request is waiting for "
                               "an administrator", status=409, code="conflict")
        if grant_state(last, benchmark, now=now).allowed:
            raise ServiceError("you already have access under this version of the agreement",
                               status=409, code="conflict")
    req = AccessRequest(user_id=user.id, benchmark_id=benchmark.id,
                        agreement_version=agreement.version, full_name=full_name,
                        affiliation=affiliation, role=role, intended_use=intended_use,
                        answers_json=kept,
                        accepted_at=now or utcnow(), ip=(ip or "")[:64],
                        user_agent=(user_agent or "")[:500], status="pending")
    session.add(req)
    session.flush()
    audit.record(session, user, "access.sign", f"benchmark:{benchmark.key}",
                 {"request": req.id, "agreement_version": agreement.version,
                  "user_agent": req.user_agent}, ip)
    return req
