"""Accepting an upload once the gate (`leaderboard.server.web.uploads`) has let it in: shared by
the submit form (`web/submit.py`) and ``POST /api/v1/submissions`` (`web/api/submissions.py`),
which import this module and never each other.

`accept_upload` stores the file, commits the row, then enqueues it; an ``Idempotency-Key``
(header or form field) makes a retried upload answer the first one's submission. `preflight`
answers whether an upload to a target (benchmark, split, challenge, kind) would be refused, from
the query string alone: the ``GET /api/v1/submissions/check`` the client asks first, and the
upload gate when an upload names its target in its query string.
"""
from __future__ import annotations

import logging
from pathlib import Path

from flask import current_app, g, request

from harness import Limits
from leaderboard.core.errors import ProblemList
from leaderboard.server.access import audit
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.jobs.containers import enqueue_container
from leaderboard.server.jobs.queue import TRANSIENT
from leaderboard.server.jobs.scoring import enqueue_scoring
from leaderboard.server.models import Submission, utcnow
from leaderboard.server.services import benchmarks, idempotency, submissions
from leaderboard.server.services.container_intake import (
    check_container_access,
    create_container_submission,
)

log = logging.getLogger(__name__)

_FIELDS = ("benchmark", "split", "method_name", "description", "paper_url", "code_url",
           "challenge")
#: fields a client may also send in the query string, so that they are checked before any byte
#: of the body is read (`preflight`); the form's value, when both are sent, must be the same
TARGET_FIELDS = ("benchmark", "split", "challenge", "kind")


def _flag(value: str | None, default: bool) -> bool:
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on", "public")


def _value(form, name: str) -> str:
    """A form field, or the query string's (`TARGET_FIELDS`); 400 when both differ."""
    value, query = form.get(name) or "", request.args.get(name) or ""
    if name in TARGET_FIELDS and query and value and query != value:
        problems = ProblemList()
        problems.add(f"the form says {value[:64]!r}, the query string {query[:64]!r}", field=name)
        raise ServiceError("the upload names two targets", problems)
    return value or (query if name in TARGET_FIELDS else "")


def preflight(user, args) -> dict:
    """Whether ``user`` may upload to the target ``args`` names (``benchmark``, ``split``,
    ``challenge``, ``kind``) now: the same checks as the upload (`services.submissions
    .check_target`; for an image also the data grant it runs on), nothing stored or counted.
    Raises ServiceError (400 naming the field, 403, 404, 429) or returns what an upload would
    count against (``quota``, ``phase``, ``phase_left``). A request whose ``Idempotency-Key``
    already names one of the user's submissions is a retry that the upload answers with that
    submission, whatever is left of the quota now: ``{"ok": true, "replay": id}``."""
    key = idempotency.parse_key(request.headers.get(idempotency.HEADER), None)
    known = idempotency.find(get_session(), user, key) if key is not None else None
    if known is not None:
        return {"ok": True, "replay": known.submission_id}
    benchmark = (args.get("benchmark") or "").strip()
    split = (args.get("split") or "").strip()
    problems = ProblemList()
    for name, value in (("benchmark", benchmark), ("split", split)):
        if not value:
            problems.add("required", field=name)
    kind = (args.get("kind") or "predictions").strip()
    if kind not in ("predictions", "container"):
        problems.add(f"must be 'predictions' or 'container', got {kind[:40]!r}", field="kind")
    if problems:
        raise ServiceError("name the upload's target", problems)
    session = get_session()
    bench = benchmarks.get_benchmark(session, benchmark)
    allowed = submissions.check_target(
        session, user=user, bench=bench, split=split,
        default_quota=submissions.QuotaRules.from_config(current_app.config), now=utcnow(),
        challenge=(args.get("challenge") or "").strip())
    if kind == "container":
        check_container_access(session, user, bench, split)
    phase = allowed.phase
    return {"ok": True, "benchmark": bench.key, "split": split, "kind": kind,
            "challenge": phase.challenge.key if phase is not None else None,
            "phase": phase.name if phase is not None else None,
            "quota": allowed.quota.as_dict() if allowed.quota is not None else None,
            "phase_left": allowed.phase_left}


def accept_upload(user, form, files) -> Submission:
    """Shared by the web form and ``POST /api/v1/submissions``: store, commit, enqueue.

    Raises ServiceError (the error handlers turn it into a readable page or JSON).
    """
    upload = files.get("file")
    if upload is None or not upload.filename:
        problems = ProblemList()
        problems.add("attach the predictions file (JSONL or JSONL.gz)", field="file")
        raise ServiceError("no file was uploaded", problems)
    cfg = current_app.config
    rules = submissions.QuotaRules.from_config(cfg)
    session = get_session()
    values = {k: _value(form, k) for k in _FIELDS}
    if not values["benchmark"]:
        problems = ProblemList()
        problems.add("required", field="benchmark")
        raise ServiceError("choose a benchmark", problems)
    kind = (_value(form, "kind") or "predictions").strip()
    key = idempotency.parse_key(request.headers.get(idempotency.HEADER),
                                form.get(idempotency.FIELD))
    known = idempotency.find(session, user, key) if key is not None else None
    if known is not None:  # a retry: the first answer was lost, the submission was not
        return _replay(session, known, values, kind, idempotency.stream_sha256(upload.stream))
    if kind == "container":  # a detector image (issue 5): inspected now, run on the gpu queue
        sub = create_container_submission(
            session, user=user, stream=upload.stream, data_dir=cfg["DATA_DIR"],
            max_bytes=cfg["MAX_IMAGE_MB"] * 1024 * 1024, default_quota=rules,
            limits=Limits.from_mapping(cfg), is_public=_flag(form.get("is_public"), True),
            allow_rerun=_flag(form.get("allow_rerun"), True), **values)
    elif kind == "predictions":
        sub = submissions.create_submission(
            session, user=user, stream=upload.stream, data_dir=cfg["DATA_DIR"],
            max_bytes=cfg["MAX_UPLOAD_MB"] * 1024 * 1024, default_quota=rules,
            is_public=_flag(form.get("is_public"), True), **values)
    else:
        problems = ProblemList()
        problems.add(f"must be 'predictions' or 'container', got {kind[:40]!r}", field="kind")
        raise ServiceError("unknown submission kind", problems)
    session.flush()
    sha256 = sub.file_sha256
    if key is not None and not idempotency.remember(session, user, key, sub, sha256=sha256):
        stored = Path(cfg["DATA_DIR"]) / sub.file_path
        session.rollback()  # a racing request with this key won: its quota unit, not ours
        stored.unlink(missing_ok=True)
        return _replay(session, idempotency.find(session, user, key), values, kind, sha256)
    audit.record(session, user, "submission.create", f"submission:{sub.id}",
                 {"benchmark": values["benchmark"], "split": sub.split, "kind": sub.kind,
                  "sha256": sha256, "size": sub.file_size}, audit.request_ip())
    session.commit()  # the row exists before anything is enqueued: it can never be lost
    _enqueue(sub)
    session.refresh(sub)
    return sub


def _enqueue(sub: Submission) -> None:
    """Hand a committed submission to its queue. Trouble here does not fail the request: the
    row is committed, and the reconciler sweeps rows left "received" at every pass."""
    try:
        if sub.kind == "container":
            if sub.status == "received":  # a rejected tarball is already failed
                enqueue_container(sub.id)
        else:
            enqueue_scoring(sub.id)
    except TRANSIENT:
        log.warning("enqueue submission=%s failed after commit; the reconciler will",
                    sub.id, exc_info=True)


def _replay(session, known, values: dict, kind: str, sha256: str) -> Submission:
    """The submission a repeated idempotency key names (422 if the upload differs). One the
    first request committed but never enqueued (its worker died) is enqueued now."""
    sub = idempotency.replay(session, known, benchmark=values["benchmark"], split=values["split"],
                             kind=kind, sha256=sha256)
    session.commit()
    g.lb_upload_replayed = True
    if sub.status == "received":
        _enqueue(sub)
        session.refresh(sub)
    return sub


def was_replayed() -> bool:
    """True when this request's upload returned an earlier submission (same idempotency key)."""
    return bool(g.get("lb_upload_replayed"))
