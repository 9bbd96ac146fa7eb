"""Idempotent uploads (issue 17): the same upload sent twice is one submission.

A client sends an idempotency key with an upload: the ``Idempotency-Key`` header (the CLI, which
derives it from the file's sha256 and the target) or the ``idempotency_key`` form field (the web
form, a random token in the page). The first request with a key creates the submission and
records the key in the same transaction (`remember`); every later request with that key gets
that submission back (`replay`), whatever happened to the first answer (a reset connection, a
503 after the commit, a killed web worker). Nothing is stored and no quota is taken again.

Rules:
- keys are per user; 8 to 128 characters of ``A-Z a-z 0-9 . _ : -`` (a clear 400 otherwise);
- a key already used for another target (benchmark, split, kind) or other bytes is refused with
  422 ``idempotency_key_reused`` naming the submission it belongs to (a reused page token, a
  script bug), never silently answered with the wrong submission;
- two requests racing with one key: the unique constraint lets one insert win; the other rolls
  back (its quota unit and stored file with it) and replays the winner;
- a submission that fails as a platform error (refunded) releases its key (`release`), so that
  sending the same upload again makes a new submission instead of returning the failed one.
"""
from __future__ import annotations

import hashlib
import re
from typing import IO

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import Benchmark, Submission, User
from leaderboard.server.models.idempotency import UploadKey

HEADER = "Idempotency-Key"
FIELD = "idempotency_key"
_KEY_RE = re.compile(r"^[A-Za-z0-9._:\-]{8,128}$")
_CHUNK = 1024 * 1024


def parse_key(header: str | None, form_value: str | None) -> str | None:
    """The request's key (header first, then the form field), or None when it sent none.

    Raises ServiceError (400) naming the field when the key is malformed.
    """
    raw = header if header not in (None, "") else form_value
    if raw in (None, ""):
        return None
    key = raw.strip()
    if not _KEY_RE.match(key):
        problems = ProblemList()
        problems.add("must be 8 to 128 characters of letters, digits, '.', '_', ':' or '-'",
                     field=FIELD)
        raise ServiceError("malformed idempotency key", problems)
    return key


def find(session: Session, user: User, key: str) -> UploadKey | None:
    return session.scalar(select(UploadKey).where(UploadKey.user_id == user.id,
                                                  UploadKey.key == key))


def stream_sha256(stream: IO[bytes]) -> str:
    """sha256 of the rest of ``stream`` (a retried upload's body, read and dropped)."""
    digest = hashlib.sha256()
    while chunk := stream.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def replay(session: Session, row: UploadKey, *, benchmark: str, split: str, kind: str,
           sha256: str) -> Submission:
    """The submission ``row`` names, if this request is the same upload; else 422."""
    bench_key = session.scalar(select(Benchmark.key).where(Benchmark.id == row.benchmark_id))
    same = (bench_key, row.split, row.kind, row.sha256) == (benchmark, split, kind, sha256)
    if not same:
        raise ServiceError(
            f"this idempotency key was already used for submission {row.submission_id}, with "
            "a different file or target; send a new key for a new upload",
            status=422, code="idempotency_key_reused",
            extra={"submission": row.submission_id})
    return session.get(Submission, row.submission_id)


def remember(session: Session, user: User, key: str, sub: Submission, *, sha256: str) -> bool:
    """Record ``key`` for the new (flushed) ``sub`` inside the caller's transaction.

    Returns False when another request committed the same key first: the caller rolls back and
    replays that one. On PostgreSQL the insert waits for a racing transaction to end first.
    """
    try:
        with session.begin_nested():
            session.add(UploadKey(user_id=user.id, key=key, submission_id=sub.id,
                                  benchmark_id=sub.benchmark_id, split=sub.split, kind=sub.kind,
                                  sha256=sha256))
    except IntegrityError:
        return False
    return True


def release(session: Session, submission_id: int) -> None:
    """Forget the keys of a submission that failed on our side (refunded): the same upload,
    sent again, makes a new submission."""
    session.execute(delete(UploadKey).where(UploadKey.submission_id == submission_id))
