"""Scoring one submission on the server: claim it, score it without a session, store the records.

The three steps are separate so a job can hold no database session while it scores (Redash's
lesson): `claim` (short transaction) -> `compute` (no DB) -> `store_result` / `record_invalid` /
`record_platform_failure` (short transaction). Storing replaces any earlier Score rows of the
submission, so rescoring is idempotent.
"""
from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from leaderboard.core.errors import PredictionError
from leaderboard.core.packs import Pack, load_pack
from leaderboard.core.predictions import validate_predictions
from leaderboard.core.records import ScoreResult
from leaderboard.core.scoring import score_validated
from leaderboard.server import labels_crypto
from leaderboard.server.models import Benchmark, LabelSet, Score, Submission, utcnow
from leaderboard.server.services import notices
from leaderboard.server.services.curves import store_curves
from leaderboard.server.services.idempotency import release as release_keys
from leaderboard.server.services.submissions import mark_failed, refund_quota
from leaderboard.server.services.wrong_file import guess_owner

log = logging.getLogger(__name__)

#: slack between the RQ job timeout and the deadline the reconciler checks
DEADLINE_GRACE_S = 60


@dataclass(frozen=True)
class Claim:
    """What scoring needs, read inside the claim transaction (no ORM objects escape it)."""

    submission_id: int
    benchmark_key: str
    split: str
    pack_path: str
    upload_path: Path
    ciphertext: bytes
    labelset_id: int
    #: the row's attempt number this claim made (None: not a claim, e.g. a judge rescore);
    #: results are stored only while the row is still this claim (`still_claimed`)
    attempt: int | None = None


class _LRU:
    """A small thread-safe LRU of compiled objects (packs, decrypted label tables).

    It lives as long as the process: a warm worker (`leaderboard.server.jobs.worker`, no fork
    per job) keeps every pack's compiled tables across jobs; a forked work-horse starts empty.
    Keys carry a digest of what the value was built from, so a changed pack or re-imported
    labels miss and are rebuilt. Decrypted labels stay in this process's memory only; nothing
    writes them anywhere (at rest they are only the Fernet ciphertext in the database)."""

    def __init__(self, size: int):
        self.size, self._data, self._lock = size, OrderedDict(), threading.Lock()
        self.hits = self.misses = 0

    def get(self, key, make):
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            self.misses += 1
        value = make()
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


# a warm worker that thrashes is a cold one: room for the dev and test splits of eight
# benchmarks; a table is ~10 MB at 56,000 rows (UniAIDet large test), so a few hundred MB at most
_PACKS = _LRU(16)
_LABELS = _LRU(16)


def clear_caches() -> None:
    _PACKS.clear()
    _LABELS.clear()


def claim(session: Session, submission_id: int, *, data_dir: str, timeout_s: int) -> Claim | None:
    """Move a received/queued submission to "scoring" (one winner if two jobs race).

    Returns None when the submission is gone or not waiting (already scored, failed, or being
    scored by another job): the job then has nothing to do.
    """
    now = utcnow()
    won = session.execute(
        update(Submission)
        .where(Submission.id == submission_id, Submission.status.in_(("received", "queued")))
        .values(status="scoring", started_at=now, attempts=Submission.attempts + 1,
                deadline_at=now + timedelta(seconds=timeout_s + DEADLINE_GRACE_S))
    ).rowcount
    if not won:
        return None
    sub = session.get(Submission, submission_id)
    bench = session.get(Benchmark, sub.benchmark_id)
    ls = session.scalar(select(LabelSet).where(LabelSet.benchmark_id == bench.id,
                                               LabelSet.split == sub.split))
    if ls is None:
        raise RuntimeError(f"benchmark {bench.key} has no labels for split {sub.split!r}; "
                           "re-import its pack")
    return Claim(sub.id, bench.key, sub.split, bench.pack_path,
                 Path(data_dir) / sub.file_path, ls.ciphertext, ls.id, attempt=sub.attempts)


def still_claimed(session: Session, submission_id: int, attempt: int) -> bool:
    """True while the row is "scoring" under claim number ``attempt`` (row-locked on
    PostgreSQL until the caller's transaction ends). False when the reconciler re-queued it
    (its worker looked dead) and another run claimed it: the late result is not stored, so two
    runs of one submission never both write its scores."""
    q = select(Submission.status, Submission.attempts).where(Submission.id == submission_id)
    if session.get_bind().dialect.name == "postgresql":
        q = q.with_for_update()
    row = session.execute(q).first()
    return row is not None and tuple(row) == ("scoring", attempt)


class Phases:
    """Wall time per phase of one job (seconds) and a few facts about it, for its log line."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.facts: dict[str, object] = {}
        self._t0 = time.perf_counter()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0

    def fields(self) -> str:
        """``key=value`` pairs: the facts, each phase as ``<name>_s``, then ``total_s``."""
        out = [f"{k}={v}" for k, v in self.facts.items()]
        out += [f"{k}_s={v:.3f}" for k, v in self.seconds.items()]
        out.append(f"total_s={time.perf_counter() - self._t0:.3f}")
        return " ".join(out)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def pack_digest(pack_path: str, split: str) -> tuple:
    """What a cached `Pack` of ``pack_path`` was built from (``benchmark.yaml`` and the split's
    items): a pack re-imported or replaced on disk gets a new digest, so a warm worker reloads
    it. A few ``stat`` calls: cheap enough for every job."""
    root = Path(pack_path)
    return (str(root), _stamp(root / "benchmark.yaml"),
            _stamp(root / "splits" / split / "items.jsonl"))


def load_tables(claim: Claim, *, label_keys, phases: Phases | None = None) -> tuple[Pack, object]:
    """The claim's pack (items compiled) and decrypted label table, from the process's LRUs."""
    hits = _LABELS.hits
    pack: Pack = _PACKS.get(pack_digest(claim.pack_path, claim.split),
                            lambda: load_pack(claim.pack_path))
    pack.items(claim.split)  # compiled (or read from the pack's .cache) once per Pack
    # the Fernet token's last 32 bytes are its HMAC over everything before: a digest for free
    digest = hashlib.sha256(claim.ciphertext[-64:]).hexdigest()
    labels = _LABELS.get(
        (claim.labelset_id, len(claim.ciphertext), digest),
        lambda: pack.labels(claim.split, source=labels_crypto.decrypt(claim.ciphertext,
                                                                     keys=label_keys)))
    if phases is not None:
        phases.facts["labels"] = "hit" if _LABELS.hits > hits else "miss"
    return pack, labels


def compute(claim: Claim, *, label_keys, judge=None, phases: Phases | None = None) -> ScoreResult:
    """Score the claimed upload. Raises PredictionError for an invalid file (the team's
    mistake); anything else is a platform failure. ``judge``: see `score_predictions` (the
    judge job passes a `leaderboard.judges.caching.CachingJudge`). ``phases`` records the time
    of ``load_labels``, ``parse`` and ``score``."""
    phases = phases or Phases()
    with phases.phase("load_labels"):
        pack, labels = load_tables(claim, label_keys=label_keys, phases=phases)
    if not claim.upload_path.is_file():
        raise FileNotFoundError(f"the uploaded file {claim.upload_path.name} is missing from "
                                "storage")
    with phases.phase("parse"):
        preds = validate_predictions(pack, claim.split, claim.upload_path, labels=labels)
    with phases.phase("score"):
        return score_validated(pack, claim.split, preds, labels=labels, judge=judge)


def store_result(session: Session, submission_id: int, result: ScoreResult) -> int:
    """Replace the submission's Score rows with ``result`` and mark it scored; returns rows."""
    session.execute(delete(Score).where(Score.submission_id == submission_id))
    rows = [
        Score(submission_id=submission_id, part=part, task=r.task, metric=r.metric,
              slice_key=r.slice_key, slice_json=dict(r.slice), value=r.value, ci_low=r.ci_low,
              ci_high=r.ci_high, n=r.n, judge=r.judge, metric_version=r.metric_version)
        for part, records in result.parts.items() for r in records
    ]
    session.add_all(rows)
    sub = session.get(Submission, submission_id)
    rescored = sub.finished_at is not None  # a rescore (admin) keeps its first finish time
    sub.status = "scored"
    sub.finished_at = utcnow()
    sub.deadline_at = None
    sub.failure_reason = None
    sub.failure_detail = None
    notes = list(result.notes)
    try:
        with session.begin_nested():
            store_curves(session, sub, list(result.curves))
    except ValueError as exc:
        # Curves only feed plots; a malformed one must not cost the team its scores.
        log.warning("submission=%s curves rejected: %s", submission_id, exc)
        notes.append("plots are unavailable for this submission (curve data was rejected)")
    sub.notes_json = {"notes": notes, "pending": list(result.pending),
                      "covered": list(result.covered)}
    notices.for_submission(session, sub, "submission.scored",
                           f"Submission #{sub.id} ({sub.method_name}) on "
                           f"{sub.benchmark.title or sub.benchmark.key} ({sub.split}) "
                           + ("was rescored." if rescored else "is scored."))
    return len(rows)


def record_invalid(session: Session, submission_id: int, err: PredictionError) -> None:
    """The file is invalid: failed, with the problems line by line, led by a guess of the
    benchmark the file was meant for when its ids belong elsewhere.

    An uploaded file that fails validation does not count toward the quota (only scored work
    does, issue 12); predictions written by a container that ran still count (the run was work).
    """
    session.execute(delete(Score).where(Score.submission_id == submission_id))
    sub = session.get(Submission, submission_id)
    hint = guess_owner(session, list(err.unknown_ids), benchmark_id=sub.benchmark_id,
                       split=sub.split)
    detail = err.as_dict()
    if hint:
        detail["summary"] = hint
    mark_failed(sub, f"invalid predictions file: {hint + '. ' if hint else ''}{err.message}",
                detail=detail)
    if sub.kind == "predictions":
        refund_quota(session, sub)


def record_platform_failure(session: Session, submission_id: int, reason: str) -> None:
    """Our fault, not the team's: failed with ``reason``, and the quota is given back."""
    sub = session.get(Submission, submission_id)
    if sub is None or sub.status == "scored":
        return
    mark_failed(sub, f"platform error: {reason}. This does not count toward your quota; "
                "please submit again or contact the organisers.", detail=None)
    refund_quota(session, sub)
    release_keys(session, submission_id)  # the same upload sent again is a new submission


def back_to_queue(session: Session, submission_id: int, *, deadline_s: int,
                  attempt: int | None = None) -> None:
    """A transient failure (database or Redis trouble): the submission waits for its retry (or
    the reconciler), and the attempt is given back: ``MAX_ATTEMPTS`` stops submissions that
    break their runs, not ones an outage interrupted. With ``attempt``, only while the row is
    still that claim."""
    now = utcnow()
    conditions = [Submission.id == submission_id, Submission.status == "scoring"]
    if attempt is not None:
        conditions.append(Submission.attempts == attempt)
    session.execute(update(Submission).where(*conditions).values(
        status="queued", queued_at=now, deadline_at=now + timedelta(seconds=deadline_s),
        attempts=Submission.attempts - 1))


def request_rescore(session: Session, sub: Submission, *, deadline_s: int) -> None:
    """Put a finished submission back in the queue (admin rescore); the caller enqueues."""
    sub.status = "queued"
    sub.queued_at = utcnow()
    sub.deadline_at = sub.queued_at + timedelta(seconds=deadline_s)
    sub.attempts = 0
