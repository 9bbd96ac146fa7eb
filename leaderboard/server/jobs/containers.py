"""The ``gpu`` queue's job: run a container submission's image, then score what it wrote.

``run_container_submission(submission_id)`` (worker: ``python -m leaderboard worker --queues
gpu``) goes through:

1. claim (`scoring_service.claim`: received/queued -> scoring, one winner) and re-check the
   data-use gate for held-out splits with the submitting user
   (`access.submitting.refusal_at_job_start`: an agreement revoked while it waited -> failed
   with "agreement revoked on <date>", quota and phase cap given back, the team notified);
2. load the tarball (`harness.load_image`: inspected again, pinned by id, labelled), record a
   `ContainerRun`, build ``/input`` (`container_inputs`: public items and media, never labels),
   run it (`harness.run_submission`, limits from the ``HARNESS_*`` settings, one GPU by index
   when the benchmark module says ``container_gpu`` and ``GPU_DEVICE`` is set);
3. exit 0 with predictions -> the predictions become the submission's file and the scoring
   service scores them exactly as an upload (validation, records, boards); any other ending ->
   failed with the harness's reason and message (counted toward the quota: the container ran;
   a run the data-use gate refuses is not counted);
4. the robustness track (`robustness_run`, issue 26): after a clean run that exited 0, the same
   loaded image runs once over the split's degraded copies (when built, enabled and within the
   benchmark's budget), and after the clean scores are stored those predictions are scored
   into robustness records. Neither step can change the clean outcome.

Anything wrong with the image itself (inspection, a config that lies about its layers, a
Docker refusal of its content, its size once loaded, a copy of an image the host already has)
is the team's error: failed, counted toward the quota (issue 13: a free retry would decompress
the layers again). Docker or the host failing is a platform error (failed, quota refunded). The image is loaded under a private id labelled with this
deployment (``DEPLOYMENT_ID``), so its removal in ``finally`` can never take an image the host
or another deployment owns; the run folder goes too. The uploaded tarball goes once the run has
an outcome, except (issue 37) after a clean run of a submission whose team allows re-runs: it is
kept as ``image_path`` and a platform re-run on a later release (`leaderboard.server.services.
reruns`; the ``rerun`` queue) loads that same file and never removes it. The job is not retried: a dead worker is
the reconciler's business.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from flask import current_app
from rq.timeouts import JobTimeoutException
from sqlalchemy import select

from harness import (
    ImageRejected,
    Limits,
    RunResult,
    load_image,
    reap_images,
    remove_image,
    run_submission,
)
from leaderboard.core.benchmarks import get_benchmark as benchmark_module
from leaderboard.core.errors import PredictionError
from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.access.gate import is_scoring_only
from leaderboard.server.access.submitting import refusal_at_job_start
from leaderboard.server.db import get_db
from leaderboard.server.jobs import robustness_run
from leaderboard.server.jobs.container_inputs import build_input_dir
from leaderboard.server.jobs.queue import (
    GPU_QUEUE,
    RERUN_QUEUE,
    TRANSIENT,
    enqueue_or_run_inline,
    mark_queued,
)
from leaderboard.server.jobs.scoring import give_back_attempt, record_invalid, store_scores
from leaderboard.server.models import IN_FLIGHT, Benchmark, Submission, utcnow
from leaderboard.server.models.containers import ContainerRun
from leaderboard.server.services import scoring_service as svc
from leaderboard.server.services.submissions import mark_failed

log = logging.getLogger(__name__)

_CUT_RE = re.compile(r"\n\[\.\.\. [^\]\n]* cut by the harness \.\.\.\]\n")
_LABELS = {"timeout": "timeout", "out_of_memory": "out of memory",
           "no_predictions": "no predictions file", "output_too_large": "output too large",
           "image_rejected": "image rejected"}


@dataclass(frozen=True)
class Plan:
    """What the run needs, read inside the claim transaction (no ORM objects escape it)."""

    submission_id: int
    benchmark_key: str
    #: the benchmark's name (its family) and release number, as the container sees them
    family: str
    release: int
    split: str
    pack_path: str
    upload: Path  # the tarball, or the predictions when a previous attempt got that far
    tasks: str
    gpu: int | None
    refused: str | None
    #: a platform re-run (issue 37): the tarball is the original's kept image, never removed
    rerun: bool = False
    #: an original whose team allows re-runs: a clean run keeps its tarball (``image_path``)
    keep: bool = False


def job_timeout_s(cfg, extra_s: float = 0.0) -> int:
    """RQ timeout of one container job: the run's wall limit plus ``CONTAINER_MARGIN_S``, plus
    ``extra_s`` when a degraded run follows (`robustness_run.extra_time_s`)."""
    return (int(math.ceil(Limits.from_mapping(cfg).wall_s)) + int(cfg["CONTAINER_MARGIN_S"])
            + int(math.ceil(extra_s)))


def _robust_extra(session, sid: int, cfg) -> float:
    sub = session.get(Submission, sid)
    if sub is None or sub.kind != "container":
        return 0.0
    return robustness_run.extra_time_s(session, sub, Limits.from_mapping(cfg), cfg["DATA_DIR"])


def run_container_submission(submission_id: int) -> dict:
    """Run and score one container submission (the ``gpu`` queue's job); a small summary."""
    cfg = current_app.config
    db = get_db()
    sid = int(submission_id)
    try:
        limits = Limits.from_mapping(cfg)
        with db.scope() as session:
            claim = svc.claim(session, sid, data_dir=cfg["DATA_DIR"],
                              timeout_s=job_timeout_s(cfg, _robust_extra(session, sid, cfg)))
            plan = _plan(session, sid, cfg) if claim is not None else None
            if plan is not None and plan.refused:
                _record_failure(session, sid, "access_denied",
                                f"refused before its run: {plan.refused}. This does not count "
                                "toward your quota.", counted=False)
    except TRANSIENT:
        raise
    except Exception as exc:
        log.exception("job=container submission=%s outcome=claim_error", sid)
        _platform_failure(sid, f"the run could not start ({type(exc).__name__}: {exc})")
        raise
    if claim is None:
        return {"submission": sid, "status": "skipped"}
    if plan.refused:
        _remove_upload(plan)
        log.info("job=container submission=%s outcome=refused", sid)
        return {"submission": sid, "status": "failed"}
    predictions = plan.upload
    if plan.upload.suffix != ".jsonl":  # not yet run (a re-queued one may have got further)
        try:
            predictions = _run(plan, cfg, limits)
        except JobTimeoutException:
            _platform_failure(sid, f"the run took longer than the job limit of "
                              f"{job_timeout_s(cfg)} s")
            raise
        except Exception as exc:
            log.exception("job=container submission=%s outcome=platform_error", sid)
            _platform_failure(sid, f"the container engine failed ({type(exc).__name__}: {exc})")
            _remove_upload(plan)
            raise
        if predictions is None:
            return {"submission": sid, "status": "failed"}
    else:
        robustness_run.mark_interrupted(sid)
    summary = _score(dataclasses.replace(claim, upload_path=predictions), sid)
    if summary.get("status") == "failed" and plan.keep:
        _drop_kept_image(sid)  # a file that does not score is no detector to re-run
    if summary.get("status") == "scored":
        robustness_run.score_degraded(sid)  # records nothing and raises nothing for the clean run
    return summary


def _plan(session, sid: int, cfg) -> Plan:
    sub = session.get(Submission, sid)
    if sub.kind != "container":
        raise ValueError(f"submission {sid} is a {sub.kind!r} submission, not a container")
    bench = session.get(Benchmark, sub.benchmark_id)
    refused = None
    if sub.split in HELD_OUT_SPLITS or is_scoring_only(bench):  # no media to mount
        refused = refusal_at_job_start(session, sub, bench, what="container_run")
    module = benchmark_module(bench.family or bench.key)  # a release's row key is <family>-vN
    tasks = ",".join(t["key"] for t in (bench.meta_json or {}).get("tasks", []))
    return Plan(sid, bench.key, bench.family or bench.key, bench.release or 1, sub.split,
                bench.pack_path, Path(cfg["DATA_DIR"]) / sub.file_path,
                tasks, cfg.get("GPU_DEVICE") if module.container_gpu else None, refused,
                rerun=sub.rerun_of_id is not None,
                keep=sub.allow_rerun and sub.rerun_of_id is None)


def _run(plan: Plan, cfg, limits: Limits) -> Path | None:
    """Load, run, record; the predictions path on success, None after a recorded failure."""
    import docker

    sid, db = plan.submission_id, get_db()
    deployment = cfg["DEPLOYMENT_ID"]
    # a random name: the container can read its mounts' host paths (/proc/self/mountinfo)
    run_dir = Path(cfg["DATA_DIR"]) / "runs" / uuid.uuid4().hex
    client = docker.from_env(timeout=120)
    image_id = None
    try:
        try:
            image_id = load_image(client, plan.upload, sid, limits=limits, deployment=deployment)
        except ImageRejected as exc:
            with db.scope() as session:
                _record_failure(session, sid, exc.reason, f"image rejected: {exc.message}")
            _remove_upload(plan)
            return None
        size = client.images.get(image_id).attrs.get("Size")
        with db.scope() as session:
            run = ContainerRun(submission_id=sid, image_id=image_id, image_size=size,
                               limits_json=limits.as_record(), gpu=plan.gpu, started_at=utcnow())
            session.add(run)
            session.flush()
            run_id = run.id
        output_dir = run_dir / "output"
        output_dir.mkdir(parents=True)
        input_dir = build_input_dir(plan.pack_path, plan.split, run_dir / "input")
        # the benchmark's name, as on release 1 (a re-run behaves as the original did), and
        # which release the input is (issue 37)
        env = {"LB_BENCHMARK": plan.family, "LB_RELEASE": str(plan.release),
               "LB_SPLIT": plan.split, "LB_TASKS": plan.tasks}
        labels = {"lb.benchmark": plan.benchmark_key, "lb.split": plan.split}
        result = run_submission(
            client=client, image_id=image_id, input_dir=input_dir, output_dir=output_dir,
            limits=limits, submission_id=sid, gpu=plan.gpu, env=env, labels=labels,
            deployment=deployment)
        with db.scope() as session:
            _finish_run(session.get(ContainerRun, run_id), result)
            if not result.ok:
                _record_failure(session, sid, result.reason, failure_reason(result))
                log.info("job=container submission=%s outcome=%s", sid, result.reason)
                _remove_upload(plan)
                return None
            dest = Path(cfg["DATA_DIR"]) / "uploads" / f"{uuid.uuid4().hex}.jsonl"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(result.predictions_path, dest)
            sub = session.get(Submission, sid)
            sub.file_path = str(dest.relative_to(Path(cfg["DATA_DIR"])))
            if plan.keep:  # the same image re-runs on the benchmark's later releases (issue 37)
                sub.image_path = str(plan.upload.relative_to(Path(cfg["DATA_DIR"])))
        if not plan.keep:
            _remove_upload(plan)
        # the robustness track (issue 26): the same image over the degraded copies, while it
        # is still loaded; its outcome never changes the clean run's
        robustness_run.run_degraded(
            sid=sid, client=client, image_id=image_id, limits=limits, gpu=plan.gpu, env=env,
            labels=labels, deployment=deployment, run_dir=run_dir,
            clean_duration_s=result.duration_s, describe=failure_reason)
        return dest
    finally:
        if image_id is not None:
            _release_image(client, image_id, sid, deployment)
        shutil.rmtree(run_dir, ignore_errors=True)
        client.close()


def _score(claim: svc.Claim, sid: int) -> dict:
    """Score the predictions the container wrote, exactly as `jobs.score_submission` does."""
    try:
        result = svc.compute(claim, label_keys=current_app.config["LABEL_KEYS"])
    except PredictionError as err:
        try:
            return record_invalid(sid, err, job="container", attempt=claim.attempt)
        except TRANSIENT:
            give_back_attempt(sid, claim.attempt)  # an outage, not the team, cut this run
            raise
    except TRANSIENT:
        give_back_attempt(sid, claim.attempt)
        raise
    except Exception as exc:
        log.exception("job=container submission=%s outcome=scoring_error", sid)
        _platform_failure(sid, f"scoring crashed ({type(exc).__name__})")
        raise
    try:
        n = store_scores(sid, claim.benchmark_key, result, job="container",
                         attempt=claim.attempt)
    except TRANSIENT:  # the predictions are kept: the re-queued run scores them, runs nothing
        give_back_attempt(sid, claim.attempt)
        raise
    if n is None:  # re-queued past its deadline while this run went on: the newer run counts
        return {"submission": sid, "status": "superseded"}
    return {"submission": sid, "status": "scored", "records": n}


def failure_reason(result: RunResult) -> str:
    """The team-facing line for a failed run, e.g. "exit code 3: the container exited ..."."""
    label = (f"exit code {result.exit_code}" if result.reason == "exit_code"
             else _LABELS.get(result.reason, result.reason.replace("_", " ")))
    return f"{label}: {result.message}"


def split_log(text: str, cut: bool) -> tuple[str, str]:
    """(head, tail) of a harness log; the whole log is the tail when nothing was cut."""
    if cut:
        match = _CUT_RE.search(text)
        if match:
            return text[:match.start()], text[match.end():]
    return "", text


def _finish_run(run: ContainerRun, result: RunResult) -> None:
    run.finished_at = utcnow()
    run.duration_s = round(result.duration_s, 3)
    run.peak_memory_bytes = result.peak_memory_bytes
    run.exit_code = result.exit_code
    run.reason = result.reason
    run.log_head, run.log_tail = split_log(result.logs, result.logs_truncated)
    run.log_cut = result.logs_truncated


def _record_failure(session, sid: int, reason: str, line: str, *, counted: bool = True) -> None:
    """The team's image failed (or may no longer run): failed. Counted toward the quota when the
    container ran or the image broke a rule (issue 13); a run the gate refused is not (issue 12)."""
    sub = session.get(Submission, sid)
    mark_failed(sub, line, detail={"reason": reason, "problems": [], "total_problems": 0})
    if not counted:
        svc.refund_quota(session, sub)


def _platform_failure(sid: int, reason: str) -> None:
    try:
        with get_db().scope() as session:
            svc.record_platform_failure(session, sid, reason)
    except TRANSIENT:
        log.warning("submission=%s platform failure not recorded; the reconciler will act", sid)


def _release_image(client, image_id: str, sid: int, deployment: str) -> None:
    """Remove the submission's private image (no other submission or image ever shares its id)."""
    try:
        remove_image(client, image_id, deployment=deployment)
    except Exception:  # clean-up must never change the outcome; the reaper retries by label
        log.exception("submission=%s could not release image %s", sid, image_id)


def _drop_kept_image(sid: int) -> None:
    """Remove the tarball kept for re-runs of a submission that ended failed (issue 37)."""
    data_dir = Path(current_app.config["DATA_DIR"])
    with get_db().scope() as session:
        sub = session.get(Submission, sid)
        if sub is None or not sub.image_path or sub.status != "failed":
            return
        (data_dir / sub.image_path).unlink(missing_ok=True)
        sub.image_path = None


def _remove_upload(plan: Plan) -> None:
    """The tarball is not needed once the run has a final outcome (it can be many GB); a
    re-run's tarball is its original's kept image and stays."""
    if plan.upload.suffix != ".jsonl" and not plan.rerun:
        plan.upload.unlink(missing_ok=True)


def release_stale_images(client) -> list[str]:
    """Remove this deployment's loaded images whose submission is no longer running (a dead
    worker's leftovers); returns their ids. Other deployments' images, and the host's own, carry
    no label of ours and are never looked at."""

    def in_flight(submission: str) -> bool:
        if not submission.isdigit() or int(submission) > 2**31 - 1:
            return False
        with get_db().scope() as session:
            return session.scalar(select(Submission.status).where(
                Submission.id == int(submission))) in IN_FLIGHT

    return reap_images(client, deployment=current_app.config["DEPLOYMENT_ID"],
                       in_flight=in_flight)


CONTAINER_JOB_FUNC = "leaderboard.server.jobs.containers.run_container_submission"
#: a re-run's job: the same run, then the campaign's next pass (`leaderboard.server.jobs.reruns`)
RERUN_JOB_FUNC = "leaderboard.server.jobs.reruns.run_rerun"


def enqueue_container(submission_id: int, *, at_front: bool = False) -> str:
    """`enqueue_scoring` for container submissions: the ``gpu`` queue (a platform re-run on a
    new release: the ``rerun`` queue, which workers take last), no `Retry`.

    The job timeout is the run's wall limit plus ``CONTAINER_MARGIN_S`` (loading, scoring);
    team failures are recorded, never retried, and a dead worker is the reconciler's business.
    Without ``REDIS_URL`` the run happens inline (development only: it blocks the request).
    """
    cfg = current_app.config
    job_id = f"run-{submission_id}-{uuid.uuid4().hex[:8]}"
    mark_queued(submission_id, job_id, cfg["QUEUE_DEADLINE_S"])
    with get_db().scope() as session:
        extra = _robust_extra(session, submission_id, cfg)
        rerun = session.scalar(select(Submission.rerun_of_id).where(
            Submission.id == submission_id)) is not None
    enqueue_or_run_inline(RERUN_QUEUE if rerun else GPU_QUEUE,
                          RERUN_JOB_FUNC if rerun else CONTAINER_JOB_FUNC, submission_id, job_id=job_id,
                          inline=run_container_submission,
                          kind="container ", job_timeout=job_timeout_s(cfg, extra),
                          retry=None, description=f"run container submission {submission_id}",
                          recovery="the reconciler will re-queue it", at_front=at_front)
    return job_id
