"""Which judge a benchmark uses, building it from the server config, and admin re-judging.

A benchmark's judge is its ``official_judge`` (an identity such as ``rules@1`` or
``openai:gpt-4o@1``, chosen by an admin) or, when none is chosen, ``DEFAULT_JUDGE`` from the config
(a registry name or an identity). Identities, not names, are stored: a board compares them with
`Score.judge`, and a judge whose code changed version no longer matches (it must be re-picked,
which re-judges every submission), so a column never silently mixes versions. Superseded
versions whose mapping changed stay buildable (`leaderboard.judges.registry.LEGACY`): a benchmark
whose official judge is ``rules@1`` keeps being judged by exactly ``rules@1`` until an admin picks
another, and `stale_submissions` finds what a new default judge has not judged yet (the
``rejudge`` command).

Judging state lives on ``Submission.notes_json["judging"]``: ``{"state": "queued" | "running" |
"done" | "failed", "judge": identity, "reason": str | None}``; the admin progress page counts it.
"""
from __future__ import annotations

import importlib
import threading
from collections.abc import Mapping

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.judges.base import Judge, JudgeError
from leaderboard.judges.registry import JUDGES, LEGACY, get_judge
from leaderboard.server.access import audit
from leaderboard.server.access.admins import require_admin
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import Benchmark, Submission

JUDGING_STATES = ("queued", "running", "done", "failed")
JUDGING_IN_FLIGHT = ("queued", "running")

_built: dict[tuple, Judge] = {}
_lock = threading.Lock()


def _version_of(name: str) -> str:
    module_name, _, attr = JUDGES[name].partition(":")
    return getattr(importlib.import_module(module_name), attr).version


def identity_for(spec: str, cfg: Mapping) -> str:
    """The identity a judge name or identity stands for under ``cfg`` (no model is loaded).

    ``"rules"`` -> ``"rules@1"``; ``"openai"`` -> ``"openai:<JUDGE_OPENAI_MODEL>@1"``; an
    identity is checked and returned. JudgeError names an unknown judge or missing config."""
    if not isinstance(spec, str) or not spec.strip():
        raise JudgeError(f"a judge must be a name or identity, got {spec!r}")
    spec = spec.strip()
    if "@" in spec:
        name = spec.split("@", 1)[0].split(":", 1)[0]
        if name not in JUDGES:
            raise JudgeError(f"unknown judge {spec!r}; available: {sorted(JUDGES)}")
        return spec
    if spec not in JUDGES:
        raise JudgeError(f"unknown judge {spec!r}; available: {sorted(JUDGES)}")
    if spec == "openai":
        model = cfg.get("JUDGE_OPENAI_MODEL")
        if not model or not cfg.get("JUDGE_OPENAI_BASE_URL"):
            raise JudgeError("the openai judge needs JUDGE_OPENAI_BASE_URL and "
                             "JUDGE_OPENAI_MODEL in the server config")
        return f"openai:{model}@{_version_of('openai')}"
    return f"{spec}@{_version_of(spec)}"


def judge_choices(cfg: Mapping) -> list[str]:
    """Identities an admin may pick: every registered judge the config can build (current
    versions first), then the superseded versions kept for reproducibility."""
    out = []
    for name in JUDGES:
        try:
            out.append(identity_for(name, cfg))
        except JudgeError:
            continue  # e.g. openai without an endpoint configured
    return out + [i for i in LEGACY if i not in out]


def effective_judge(official: str | None, cfg: Mapping) -> str | None:
    """The benchmark's judge identity: ``official`` or the configured default (None: no judge;
    an unusable default is treated as none rather than failing every scoring job)."""
    if official:
        return official
    default = cfg.get("DEFAULT_JUDGE", "rules")
    if not default or str(default).lower() == "none":
        return None
    try:
        return identity_for(default, cfg)
    except JudgeError:
        return None


def board_judge(official: str | None) -> str | None:
    """The judge whose records a board shows (the app's config when there is an app)."""
    from flask import current_app, has_app_context
    return effective_judge(official, current_app.config if has_app_context() else {})


def record_judge_allowed(record_judge: str | None, board_judge_: str | None) -> bool:
    """True if a record may appear on a board judged by ``board_judge_``: no judge, self-mapped,
    or made (in every part, for composites such as ``"rules@1 + self-mapped"``) by that judge."""
    if record_judge is None:
        return True
    return all(part == "self-mapped" or (board_judge_ is not None and part == board_judge_)
               for part in record_judge.split(" + "))


def build_judge(identity: str, cfg: Mapping) -> Judge:
    """The judge for ``identity``, built once per process (models load once).

    JudgeError when the identity is not what this server's code and config build (e.g. the
    official judge was ``rules@1`` and the code is now ``rules@2``: re-pick it)."""
    name = identity.split("@", 1)[0].split(":", 1)[0]
    options: dict = {}
    if name == "openai":
        options = {"base_url": cfg.get("JUDGE_OPENAI_BASE_URL"),
                   "model": cfg.get("JUDGE_OPENAI_MODEL"),
                   "api_key": cfg.get("JUDGE_OPENAI_API_KEY")}
        if not options["base_url"] or not options["model"]:
            raise JudgeError("the openai judge needs JUDGE_OPENAI_BASE_URL and "
                             "JUDGE_OPENAI_MODEL in the server config")
    key = (identity, tuple(sorted((k, str(v)) for k, v in options.items())))
    with _lock:
        judge = _built.get(key)
    if judge is None:
        judge = get_judge(identity if identity in LEGACY else name, **options)
        with _lock:
            _built[key] = judge
    if judge.identity != identity:
        raise JudgeError(f"this server builds judge {judge.identity}, not {identity}: pick the "
                         "benchmark's official judge again")
    return judge


def set_state(sub: Submission, state: str, judge: str | None, reason: str | None = None) -> None:
    if state not in JUDGING_STATES:
        raise ValueError(f"judging state must be one of {JUDGING_STATES}, got {state!r}")
    notes = dict(sub.notes_json or {})
    notes["judging"] = {"state": state, "judge": judge, "reason": reason}
    sub.notes_json = notes  # a new dict: JSON columns do not track in-place changes


def set_official_judge(session: Session, actor, bench: Benchmark, identity: str, *,
                       cfg: Mapping, ip: str = "") -> list[int]:
    """Make ``identity`` the benchmark's official judge (one of `judge_choices`), audited, and
    mark every scored prediction submission for re-judging. Returns their ids: the caller commits,
    then enqueues each (`leaderboard.server.jobs.judging.enqueue_judging`) and invalidates the boards."""
    require_admin(actor)
    choices = judge_choices(cfg)
    if identity not in choices:
        raise ServiceError(f"judge must be one of {choices}, got {identity!r}")
    old = bench.official_judge
    bench.official_judge = identity
    subs = session.scalars(select(Submission).where(
        Submission.benchmark_id == bench.id, Submission.status == "scored",
        Submission.kind == "predictions")).all()
    for sub in subs:
        set_state(sub, "queued", identity)
    ids = [s.id for s in subs]
    audit.record(session, actor, "admin.benchmark.judge", f"benchmark:{bench.key}",
                 {"from": old, "to": identity, "submissions": len(ids)}, ip)
    return ids


def stale_submissions(session: Session, bench: Benchmark, cfg: Mapping, *,
                      everything: bool = False) -> list[int]:
    """Scored prediction submissions of ``bench`` whose judge metrics were made by another judge
    than the benchmark's judge now (e.g. ``rules@1`` after an upgrade made the default
    ``rules@2``), or that never finished judging; all judged ones with ``everything``. Marks them
    queued; the caller commits, enqueues each and invalidates the boards."""
    identity = effective_judge(bench.official_judge, cfg)
    if identity is None:
        return []
    ids = []
    for sub in session.scalars(select(Submission).where(
            Submission.benchmark_id == bench.id, Submission.status == "scored",
            Submission.kind == "predictions").order_by(Submission.id)):
        state = (sub.notes_json or {}).get("judging")
        if not state:
            continue  # nothing of it needed a judge
        if everything or state.get("judge") != identity or state.get("state") == "failed":
            set_state(sub, "queued", identity)
            ids.append(sub.id)
    return ids


def judging_progress(session: Session, bench: Benchmark) -> dict:
    """Submissions of ``bench`` per judging state (same shape as the rescore progress)."""
    counts: dict[str, int] = {}
    for notes, status in session.execute(select(Submission.notes_json, Submission.status)
                                         .where(Submission.benchmark_id == bench.id)):
        judging = (notes or {}).get("judging")
        if judging:
            state = judging.get("state", "done")
            if state == "done" and status != "scored":
                state = status  # rescored since: its scoring job will judge it again
            counts[state] = counts.get(state, 0) + 1
    total = sum(counts.values())
    in_flight = sum(n for s, n in counts.items()
                    if s in {*JUDGING_IN_FLIGHT, "received", "scoring"})
    return {"benchmark": bench.key, "judge": bench.official_judge, "counts": counts,
            "total": total, "in_flight": in_flight, "done": total - in_flight}
