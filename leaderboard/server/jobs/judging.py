"""Judge work on the RQ ``judge`` queue: fill the judge cache in batches, then rescore.

Policy (issue 6): the scoring job (`leaderboard.server.jobs.scoring.score_submission`) always scores without a
judge and stores those records first, so a board updates as soon as the cheap metrics are known;
when that scoring left judge metrics pending (LOKI explanations, TriDF free-text answers, SynCred
rationales of false negatives) and the benchmark has a judge, it calls `enqueue_judging`. The judge
job then scores the submission again with a `CachingJudge` (the benchmark's judge behind the
database cache): the judge sees only responses it has not answered before, in batches whose
answers are committed as they come, and the submission's records are replaced and its boards
invalidated. Rescoring from a warm cache therefore costs scoring time only.

A rescore requested while a judge job runs wins: the judge job stores nothing unless the
submission is still "scored" from the same upload. A judge that fails (endpoint down, model
missing) leaves the judge-free records on the board and the submission's judging state "failed"
with the reason; transient database/Redis trouble is re-raised for RQ's retry.

Worker: ``python -m leaderboard worker --queues judge`` (or ``scoring,judge``). Without
``REDIS_URL`` the job runs inline, right after the scoring job.
"""
from __future__ import annotations

import logging
import uuid
from pathlib import Path

from flask import current_app
from sqlalchemy import select

from leaderboard.judges.base import JudgeError
from leaderboard.judges.caching import CachingJudge
from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.db import get_db
from leaderboard.server.jobs import lease
from leaderboard.server.jobs.queue import (
    RETRY,
    TRANSIENT,
    current_job_id,
    enqueue_or_run_inline,
    redis_connection,
)
from leaderboard.server.models import Benchmark, LabelSet, Submission
from leaderboard.server.services import judging, outcome_store
from leaderboard.server.services import scoring_service as svc
from leaderboard.server.services.judge_cache import ShortSessionCache

log = logging.getLogger(__name__)

JUDGE_QUEUE = "judge"
JOB_FUNC = "leaderboard.server.jobs.judging.judge_submission"
DEFAULT_BATCH_SIZE = 64


def needs_judging(result) -> bool:
    """True when a judge-free scoring left judge metrics pending."""
    return bool(result.pending)


def after_scoring(submission_id: int, benchmark_key: str, result) -> str | None:
    """Called by the scoring job after storing: enqueue judging when it is needed and the
    benchmark has a judge. Returns the job id, or None."""
    if not needs_judging(result):
        return None
    with get_db().scope() as session:
        bench = session.scalar(select(Benchmark).where(Benchmark.key == benchmark_key))
        identity = judging.effective_judge(bench.official_judge if bench else None,
                                           current_app.config)
        if identity is None:
            return None
        sub = session.get(Submission, submission_id)
        judging.set_state(sub, "queued", identity)
    return enqueue_judging(submission_id, mark=False)


def enqueue_judging(submission_id: int, *, mark: bool = True, at_front: bool = False) -> str:
    """Enqueue the judge job (or run it inline). ``mark``: record the "queued" state first
    (committed before touching Redis, like `leaderboard.server.jobs.scoring.enqueue_scoring`);
    ``at_front``: ahead of the jobs waiting (the reconciler's re-queues)."""
    cfg = current_app.config
    if mark:
        with get_db().scope() as session:
            sub = session.get(Submission, submission_id)
            if sub is not None:
                judging.set_state(sub, "queued", (sub.notes_json or {}).get("judging", {})
                                  .get("judge"))
    job_id = f"judge-{submission_id}-{uuid.uuid4().hex[:8]}"
    enqueue_or_run_inline(JUDGE_QUEUE, JOB_FUNC, submission_id, job_id=job_id,
                          inline=judge_submission, kind="judge ",
                          job_timeout=cfg["SCORING_TIMEOUT_S"], retry=RETRY,
                          description=f"judge submission {submission_id}",
                          recovery="the reconciler will re-queue it", at_front=at_front)
    return job_id


def _read(session, submission_id: int):
    """(Claim, judge identity, upload sha) of a scored submission, or None when not scored."""
    sub = session.get(Submission, submission_id)
    if sub is None or sub.status != "scored" or sub.kind != "predictions":
        return None
    bench = session.get(Benchmark, sub.benchmark_id)
    identity = judging.effective_judge(bench.official_judge, current_app.config)
    ls = session.scalar(select(LabelSet).where(
        LabelSet.benchmark_id == bench.id, LabelSet.split == sub.split))
    if identity is None or ls is None:
        return None
    judging.set_state(sub, "running", identity)
    claim = svc.Claim(sub.id, bench.key, sub.split, bench.pack_path,
                      Path(current_app.config["DATA_DIR"]) / sub.file_path, ls.ciphertext, ls.id)
    return claim, identity, sub.file_sha256


def _mark(submission_id: int, state: str, identity: str | None, reason: str | None = None):
    with get_db().scope() as session:
        sub = session.get(Submission, submission_id)
        if sub is not None:
            judging.set_state(sub, state, identity, reason)


def judge_submission(submission_id: int) -> dict:
    """The ``judge`` queue's job: judge (through the cache) and rescore one scored submission.

    While it runs it holds the submission's judge lease (`leaderboard.server.jobs.lease`), which
    tells the reconciler that the job lives (a lapsed lease: re-enqueued within a minute)."""
    cfg = current_app.config
    db = get_db()
    submission_id = int(submission_id)
    with db.scope() as session:
        read = _read(session, submission_id)
    if read is None:
        log.info("job=judge submission=%s outcome=skipped (not scored or no judge)",
                 submission_id)
        return {"submission": submission_id, "status": "skipped"}
    claim, identity, sha = read
    with lease.hold(redis_connection(), "judge", submission_id, current_job_id()):
        return _judge(submission_id, claim, identity, sha, cfg)


def _judge(submission_id: int, claim, identity: str, sha: str, cfg) -> dict:
    """Judge and rescore a read submission (the lease held; see `judge_submission`)."""
    db = get_db()
    try:
        judge = judging.build_judge(identity, cfg)
        caching = CachingJudge(
            judge, ShortSessionCache(db),
            batch_size=int(cfg.get("JUDGE_BATCH_SIZE", DEFAULT_BATCH_SIZE)),
            on_batch=lambda kind, done, total: log.info(
                "job=judge submission=%s %s batch %s/%s", submission_id, kind, done, total))
        result = svc.compute(claim, label_keys=cfg["LABEL_KEYS"], judge=caching)
    except JudgeError as exc:
        log.warning("job=judge submission=%s outcome=judge_failed: %s", submission_id, exc)
        _mark(submission_id, "failed", identity, str(exc)[:500])
        return {"submission": submission_id, "status": "failed"}
    except Exception as exc:
        if not isinstance(exc, TRANSIENT):
            log.exception("job=judge submission=%s outcome=error", submission_id)
            _mark(submission_id, "failed", identity, f"judging crashed ({type(exc).__name__})")
        raise
    with db.scope() as session:
        sub = session.get(Submission, submission_id)
        if sub is None or sub.status != "scored" or sub.file_sha256 != sha:
            log.info("job=judge submission=%s outcome=superseded", submission_id)
            return {"submission": submission_id, "status": "superseded"}
        n = svc.store_result(session, submission_id, result)
        judging.set_state(sub, "done", identity)
    outcome_store.save_result(cfg["DATA_DIR"], submission_id, result)
    invalidate_boards(claim.benchmark_key)
    log.info("job=judge submission=%s outcome=judged records=%s judged=%s cached=%s",
             submission_id, n, caching.judged, caching.hits)
    return {"submission": submission_id, "status": "judged", "records": n,
            "judged": caching.judged, "cached": caching.hits}
