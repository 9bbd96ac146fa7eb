"""RQ job functions. They take ids, record state on the submission row and raise on failure.

Each job holds a database session only for short transactions (claim, store); scoring itself runs
with no session open. Jobs are idempotent per submission: a second run of a scored submission does
nothing, a rescore replaces the Score rows.

Failures map to outcomes:
- invalid predictions file -> "failed" with the problems (the team's mistake; not raised, because
  the job did its work);
- transient platform trouble (database or Redis unreachable) -> back to "queued" and re-raised, so
  RQ's Retry runs it again (the reconciler catches anything that still falls through);
- anything else -> "failed" as a platform error (quota refunded), re-raised with retries
  cancelled: running a bug again does not fix it;
- a run whose row was re-queued meanwhile (its lease lapsed: the reconciler took it for dead)
  records nothing ("superseded"): outcomes are written only under the claim that computed them.
"""
from __future__ import annotations

import logging
import uuid

import redis
from flask import current_app
from rq.timeouts import JobTimeoutException
from sqlalchemy import select

from leaderboard.core.errors import PredictionError
from leaderboard.server.access.submitting import refusal_at_job_start
from leaderboard.server.boards import generators as gen_view
from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.jobs import board_warm
from leaderboard.server.db import get_db
from leaderboard.server.jobs import lease
from leaderboard.server.jobs import judging as judge_jobs  # judge metrics follow (issue 6)
from leaderboard.server.jobs.queue import (
    RETRY,
    SCORING_QUEUE,
    TRANSIENT,
    current_job_id,
    enqueue_or_run_inline,
    mark_queued,
    redis_connection,
)
from leaderboard.server.models import Benchmark, Score, Submission
from leaderboard.server.services import outcome_store
from leaderboard.server.services import scoring_service as svc
from leaderboard.server.services.submissions import mark_failed

log = logging.getLogger(__name__)



def _cancel_retries() -> None:
    from rq import get_current_job
    job = get_current_job()
    if job is not None:
        job.retries_left = 0


def _platform_failure(submission_id: int, reason: str, *, attempt: int | None = None) -> None:
    with get_db().scope() as session:
        if attempt is None or svc.still_claimed(session, submission_id, attempt):
            svc.record_platform_failure(session, submission_id, reason)
    _cancel_retries()


def record_invalid(submission_id: int, err: PredictionError, *, job: str,
                   attempt: int | None = None, phases: svc.Phases | None = None) -> dict:
    """Record an invalid predictions file (the team's mistake: "failed" with the problems, not
    raised) and return the job summary; ``job`` names the job in the log line. With
    ``attempt``, only while the row is still that claim. With ``phases``, the time goes there
    and the caller writes the job's log line."""
    with (phases or svc.Phases()).phase("write"), get_db().scope() as session:
        if attempt is not None and not svc.still_claimed(session, submission_id, attempt):
            return _superseded(submission_id, job)
        svc.record_invalid(session, submission_id, err)
    outcome_store.delete(current_app.config["DATA_DIR"], submission_id)
    if phases is None:
        log.info("job=%s submission=%s outcome=invalid problems=%s", job, submission_id,
                 err.problems.total)
    else:
        phases.facts["problems"] = err.problems.total
    return {"submission": submission_id, "status": "failed"}


def refuse_if_not_entitled(session, submission_id: int) -> bool:
    """At the start of a claimed scoring run: refuse a held-out submission whose submitter has
    lost the agreement while it waited (revoked, expired, a new version unsigned; issue 36).
    It ends "failed" with the gate's reason ("agreement revoked on <date>: <why>"), its daily
    quota and phase cap unit given back, and the team gets a notice (`mark_failed`). A rescore
    of a submission already scored is not refused: it was scored while entitled."""
    sub = session.get(Submission, submission_id)
    reason = refusal_at_job_start(session, sub, session.get(Benchmark, sub.benchmark_id),
                                  what="test_submission")
    if reason is None or session.scalar(select(Score.id).where(
            Score.submission_id == submission_id).limit(1)) is not None:
        return False
    mark_failed(sub, f"refused before scoring: {reason}. This does not count toward your "
                "quota.", detail={"reason": "access_denied", "problems": [], "total_problems": 0})
    svc.refund_quota(session, sub)
    log.info("job=score submission=%s outcome=refused reason=agreement", submission_id)
    return True


#: ``lb:give-back:<submission id>`` = the attempt an outage cut while the database was away
GIVE_BACK_PREFIX = "lb:give-back:"


def give_back_key(submission_id: int) -> str:
    return f"{GIVE_BACK_PREFIX}{int(submission_id)}"


def give_back_attempt(submission_id: int, attempt: int) -> None:
    """An outage (database or Redis), not the job, cut attempt ``attempt``: give it back, so
    that ``MAX_ATTEMPTS`` counts only the job's own failures (issue 36). The row goes back to
    "queued" with its attempt count lowered (`scoring_service.back_to_queue`, on a fresh
    connection: a killed one is replaced); when the database cannot take even that, the
    attempt is noted in Redis and the reconciler, which re-queues the row once the database
    answers, gives it back then (`leaderboard.server.jobs.reconcile`). Never raises."""
    try:
        with get_db().scope() as session:
            svc.back_to_queue(session, submission_id,
                              deadline_s=current_app.config["QUEUE_DEADLINE_S"], attempt=attempt)
        return
    except TRANSIENT:
        pass
    except Exception:  # noqa: BLE001 - a give-back must not hide the fault that caused it
        log.exception("submission=%s attempt=%s could not be given back", submission_id, attempt)
        return
    conn = redis_connection()
    try:
        if conn is not None:
            conn.set(give_back_key(submission_id), int(attempt), ex=7 * 24 * 3600)
    except redis.exceptions.RedisError:
        log.warning("submission=%s attempt=%s: neither the database nor Redis took the "
                    "give-back; it counts", submission_id, attempt)


def _superseded(submission_id: int, job: str) -> dict:
    log.warning("job=%s submission=%s outcome=superseded (re-queued while this run went on; "
                "the newer run's result counts)", job, submission_id)
    return {"submission": submission_id, "status": "superseded"}


def prepare_generator_rows(submission_id: int, benchmark_key: str, result) -> None:
    """Store the submission's rows of its boards' detectors x generators matrix (issue 37,
    `generators.prepare_rows`) once its outcome file is written, so that no reader bootstraps
    them. Best effort, like warming: the scores are committed, and a row that is missing is
    computed by the first view that needs it; a failure is logged, never raised."""
    outcomes = getattr(result, "outcomes", {}) or {}
    if not outcomes:
        return
    try:
        with get_db().scope() as session:
            sub = session.get(Submission, submission_id)
            if sub is not None:
                gen_view.prepare_rows(session, benchmark_key=benchmark_key,
                                      submission_id=submission_id,
                                      created_at=sub.created_at.isoformat(),
                                      blocks=[(part, task) for part, per_task in outcomes.items()
                                              for task in per_task],
                                      directory=current_app.config["DATA_DIR"])
    except Exception:  # noqa: BLE001 - best effort: see the docstring
        log.exception("generator rows submission=%s could not be prepared", submission_id)


def store_scores(submission_id: int, benchmark_key: str, result, *, job: str,
                 attempt: int | None = None, phases: svc.Phases | None = None) -> int | None:
    """Store a scoring result, then invalidate the benchmark's boards (after the commit).
    Returns the number of records stored, or None when the row is no longer claim number
    ``attempt`` (nothing stored); ``job`` names the job in the log line. With ``phases``,
    the ``write`` and ``invalidate`` times go there and the caller writes the log line."""
    timed = phases or svc.Phases()
    with timed.phase("write"), get_db().scope() as session:
        if attempt is not None and not svc.still_claimed(session, submission_id, attempt):
            _superseded(submission_id, job)
            return None
        n = svc.store_result(session, submission_id, result)
    # per-item outcomes (rank intervals, comparisons): after the commit, before the boards
    # are invalidated, so the next board computation reads the new file
    with timed.phase("outcomes"):
        outcome_store.save_result(current_app.config["DATA_DIR"], submission_id, result)
    with timed.phase("generator_rows"):
        prepare_generator_rows(submission_id, benchmark_key, result)
    with timed.phase("invalidate"):
        invalidate_boards(benchmark_key)
    if board_warm.should_warm():  # the readers' pages, recomputed here, not in the web
        with timed.phase("warm"):
            board_warm.warm(submission_id, benchmark_key)
    if phases is None:
        log.info("job=%s submission=%s outcome=scored records=%s", job, submission_id, n)
    else:
        phases.facts["records"] = n
    return n


def score_submission(submission_id: int) -> dict:
    """Score one submission (the ``scoring`` queue's job). Returns a small summary.

    Once claimed, the run holds the submission's lease (`leaderboard.server.jobs.lease`): the
    reconciler re-queues a claimed row whose lease lapsed (the worker died) within a minute.
    Every run ends with one log line: ``job=score submission=N outcome=...`` with the time of
    each phase (``claim_s``, ``load_labels_s``, ``parse_s``, ``score_s``, ``write_s``,
    ``invalidate_s``, ``enqueue_judge_s``, ``total_s``) and whether the label table came from the process's cache
    (``labels=hit``: a warm worker) or was decrypted (``labels=miss``).
    """
    submission_id = int(submission_id)
    phases = svc.Phases()
    outcome = "error"
    try:
        summary = _score(submission_id, phases)
        outcome = summary["status"]
        return summary
    finally:
        log.info("job=score submission=%s outcome=%s %s", submission_id, outcome,
                 phases.fields())


def _score(submission_id: int, phases: svc.Phases) -> dict:
    cfg = current_app.config
    db = get_db()
    try:
        with phases.phase("claim"), db.scope() as session:
            claim = svc.claim(session, submission_id, data_dir=cfg["DATA_DIR"],
                              timeout_s=cfg["SCORING_TIMEOUT_S"])
            refused = claim is not None and refuse_if_not_entitled(session, submission_id)
    except TRANSIENT:
        raise  # nothing was claimed; RQ retries, the reconciler backs it up
    except Exception as exc:  # e.g. the benchmark lost its labels: retrying cannot help
        log.exception("job=score submission=%s outcome=claim_error", submission_id)
        _platform_failure(submission_id, f"scoring could not start ({type(exc).__name__})")
        raise
    if claim is None:
        return {"submission": submission_id, "status": "skipped"}  # not waiting
    if refused:
        return {"submission": submission_id, "status": "refused"}
    with lease.hold(redis_connection(), "score", submission_id, current_job_id()):
        return _score_claimed(claim, cfg, phases)


def _score_claimed(claim: svc.Claim, cfg, phases: svc.Phases) -> dict:
    submission_id, attempt = claim.submission_id, claim.attempt
    try:
        result = svc.compute(claim, label_keys=cfg["LABEL_KEYS"], phases=phases)
    except PredictionError as err:
        try:
            return record_invalid(submission_id, err, job="score", attempt=attempt,
                                  phases=phases)
        except TRANSIENT:  # the outage hit the write of the problems
            give_back_attempt(submission_id, attempt)
            raise
    except TRANSIENT:
        log.warning("job=score submission=%s outcome=transient", submission_id, exc_info=True)
        give_back_attempt(submission_id, attempt)
        raise
    except JobTimeoutException:
        _platform_failure(submission_id, "scoring took longer than the "
                          f"{cfg['SCORING_TIMEOUT_S']} s limit", attempt=attempt)
        raise
    except Exception as exc:
        log.exception("job=score submission=%s outcome=platform_error", submission_id)
        _platform_failure(submission_id, f"scoring crashed ({type(exc).__name__})",
                          attempt=attempt)
        raise
    try:
        n = store_scores(submission_id, claim.benchmark_key, result, job="score",
                         attempt=attempt, phases=phases)
    except TRANSIENT:  # the database (or Redis) went away while the scores were written
        log.warning("job=score submission=%s outcome=transient phase=write", submission_id,
                    exc_info=True)
        give_back_attempt(submission_id, attempt)
        raise
    if n is None:
        return {"submission": submission_id, "status": "superseded"}
    try:
        with phases.phase("enqueue_judge"):
            judge_jobs.after_scoring(submission_id, claim.benchmark_key, result)
    except Exception:  # the scores are stored; an admin re-judge recovers the judge metrics
        log.exception("job=score submission=%s judge enqueue failed", submission_id)
    return {"submission": submission_id, "status": "scored", "records": n}


JOB_FUNC = "leaderboard.server.jobs.scoring.score_submission"


def enqueue_scoring(submission_id: int, *, at_front: bool = False) -> str:
    """Mark the submission queued (committed), then enqueue it or run it inline; ``at_front``
    (the reconciler's re-queues) puts it ahead of the jobs waiting.

    Returns the job id. Never raises for queue trouble: the row stays "queued" with a deadline
    and the reconciler re-queues it.
    """
    cfg = current_app.config
    job_id = f"score-{submission_id}-{uuid.uuid4().hex[:8]}"
    mark_queued(submission_id, job_id, cfg["QUEUE_DEADLINE_S"])
    enqueue_or_run_inline(SCORING_QUEUE, JOB_FUNC, submission_id, job_id=job_id,
                          inline=score_submission, kind="",
                          job_timeout=cfg["SCORING_TIMEOUT_S"], retry=RETRY,
                          description=f"score submission {submission_id}",
                          recovery="the reconciler will re-queue it", at_front=at_front)
    return job_id
