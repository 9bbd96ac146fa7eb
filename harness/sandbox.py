"""Run one submitted image against one split's public input, locked down, always cleaned up.

Lifecycle (after Codabench's compute worker, with the limits it lacks): prepare a staging
``/output`` directory, create the container *by image id* with every restriction of the team
contract (shared design.md, "Containers"), start it, watch it (wall clock, ``/output`` size,
peak memory) until it exits or breaks a limit, then - in ``finally`` - kill and remove it, and
only then copy ``predictions.jsonl`` out of the staging directory.

``/output`` cap: a bind-mounted host directory polled every ``limits.poll_s`` (0.1 s by default);
the run is killed as soon as it is over the cap, and checked once more after it exits. A fast
writer can overshoot the cap by what it writes in one poll interval before the kill lands (a
tmpfs mount would not overshoot, but Docker cannot copy files out of a container's tmpfs once
its process has exited, which is exactly when the predictions are needed).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests
from docker.types import DeviceRequest, LogConfig, Mount, Ulimit

from . import outputs
from .config import Limits
from .engine import check_submission_id, get_image
from .errors import (
    EngineError,
    HarnessError,
    ImageRejected,
    NonZeroExit,
    OutOfMemory,
    OutputTooLarge,
    RunTimeout,
)
from .labels import (
    DEFAULT_DEPLOYMENT,
    LABEL_DEADLINE,
    LABEL_DEPLOYMENT,
    LABEL_HARNESS,
    LABEL_SUBMISSION,
    check_deployment,
)
from .logs import LogCollector
from .stats import PeakMemory

log = logging.getLogger(__name__)

__all__ = ["LABEL_DEADLINE", "LABEL_DEPLOYMENT", "LABEL_HARNESS", "LABEL_SUBMISSION", "RunResult",
           "container_config", "default_user", "run_submission"]
_FIXED_ENV = {"LB_INPUT": "/input", "LB_OUTPUT": "/output", "HOME": "/tmp"}
_FORBIDDEN_INPUT_NAMES = ("labels.jsonl", "labels.jsonl.gz", "labels.jsonl.enc")


@dataclass
class RunResult:
    """What happened; ``reason`` is ``"ok"`` or one of ``errors.FAILURE_REASONS``."""

    reason: str
    message: str
    image_id: str
    limits: dict[str, Any]
    duration_s: float
    exit_code: int | None = None
    peak_memory_bytes: int | None = None
    gpu: int | None = None
    logs: str = ""
    logs_truncated: bool = False
    predictions_path: Path | None = None
    predictions_bytes: int | None = None
    error: HarnessError | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def raise_for_error(self) -> None:
        if self.error is not None:
            raise self.error

    def as_record(self) -> dict[str, Any]:
        """JSON-ready summary for the submission row (logs excluded: store them separately)."""
        return {
            "reason": self.reason, "message": self.message, "image_id": self.image_id,
            "limits": self.limits, "duration_s": round(self.duration_s, 3), "exit_code": self.exit_code,
            "peak_memory_bytes": self.peak_memory_bytes, "gpu": self.gpu,
            "logs_truncated": self.logs_truncated, "predictions_bytes": self.predictions_bytes,
        }


def default_user() -> str:
    """The harness's own uid:gid, or nobody when the harness is root (the container is never root)."""
    uid, gid = os.getuid(), os.getgid()
    return "65534:65534" if uid == 0 else f"{uid}:{gid}"


def container_config(
    *,
    image_id: str,
    limits: Limits,
    submission_id: str,
    input_dir: Path,
    staging_dir: Path,
    env: Mapping[str, str],
    labels: Mapping[str, str],
    gpu: int | None,
    now: float,
    deployment: str = DEFAULT_DEPLOYMENT,
) -> dict[str, Any]:
    """Keyword arguments for ``client.containers.create``: the whole sandbox in one place."""
    environment = {**env, **_FIXED_ENV}
    config: dict[str, Any] = dict(
        image=image_id,
        environment=environment,
        user=limits.user or default_user(),
        labels={
            **labels,
            LABEL_HARNESS: "1",
            LABEL_DEPLOYMENT: check_deployment(deployment),
            LABEL_SUBMISSION: submission_id,
            LABEL_DEADLINE: str(int(now + limits.wall_s + limits.reap_grace_s)),
        },
        network_mode="none",
        network_disabled=True,
        read_only=True,
        tmpfs={"/tmp": f"rw,nosuid,nodev,size={limits.tmp_bytes},mode=1777"},
        shm_size=limits.shm_bytes,
        ipc_mode="private",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges:true"],
        init=True,
        mem_limit=limits.memory_bytes,
        memswap_limit=limits.memory_bytes,  # equal to memory: no swap at all
        nano_cpus=int(limits.cpus * 1e9),
        pids_limit=limits.pids,
        ulimits=[Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files)],
        oom_score_adj=1000,  # if the host itself runs short, the submission goes first
        mounts=[
            Mount(target="/input", source=str(input_dir), type="bind", read_only=True),
            Mount(target="/output", source=str(staging_dir), type="bind", read_only=False),
        ],
        log_config=LogConfig(
            type=LogConfig.types.JSON,
            config={"max-size": str(max(limits.log_bytes, 1024 * 1024)), "max-file": "2"},
        ),
        healthcheck={"test": ["NONE"]},
        detach=True,
    )
    if gpu is not None:
        config["device_requests"] = [DeviceRequest(device_ids=[str(gpu)], capabilities=[["gpu"]])]
    return config


def run_submission(
    *,
    client: docker.DockerClient,
    image_id: str,
    input_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    limits: Limits,
    submission_id: Any,
    env: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    gpu: int | None = None,
    deployment: str = DEFAULT_DEPLOYMENT,
) -> RunResult:
    """Run ``image_id``'s default command; ``output_dir/predictions.jsonl`` is written on success.

    Team-caused endings are returned as ``RunResult`` with ``error`` set (never raised); a bad
    argument raises ``ValueError``; Docker failing raises ``EngineError``. ``input_dir`` must
    hold the public split only: a directory containing a labels file is refused.
    """
    submission = check_submission_id(submission_id)
    deployment = check_deployment(deployment)
    input_path, output_path = _check_dirs(input_dir, output_dir)
    env = _check_env(env or {})
    labels = dict(labels or {})
    if gpu is not None and (isinstance(gpu, bool) or not isinstance(gpu, int) or gpu < 0):
        raise ValueError(f"gpu must be a device index >= 0 or None, got {gpu!r}")
    result = RunResult(reason="ok", message="", image_id=image_id, limits=limits.as_record(),
                       duration_s=0.0, gpu=gpu)
    try:
        image = get_image(client, image_id)
        if (image.attrs.get("Config") or {}).get("Volumes"):
            raise ImageRejected("image declares VOLUME; remove VOLUME lines (write to /tmp or /output)")
    except ImageRejected as exc:
        return _fail(result, exc)
    staging = Path(tempfile.mkdtemp(prefix=".lb-output-", dir=output_path))
    staging.chmod(0o777)  # the container's non-root user must be able to write here
    container = None
    try:
        config = container_config(
            image_id=image_id, limits=limits, submission_id=submission, input_dir=input_path,
            staging_dir=staging, env=env, labels=labels, gpu=gpu, now=time.time(),
            deployment=deployment,
        )
        try:
            container = client.containers.create(**config)
            collector = LogCollector(container, cap_bytes=limits.log_bytes)
            collector.attach()  # before the start: the record must see the log's first byte
            memory = PeakMemory(container)
            started = time.monotonic()
            container.start()
        except docker.errors.APIError as exc:
            raise EngineError(f"could not start the container: {exc.explanation or exc}") from None
        collector.start()
        memory.start()
        try:
            error = _watch(container, limits=limits, staging=staging, started=started)
            result.duration_s = time.monotonic() - started
            state = _final_state(container)
            retained = container.logs(stdout=True, stderr=True, stream=False, follow=False)
            result.logs, result.logs_truncated = collector.finish(retained)
            result.peak_memory_bytes = memory.finish()
            container.remove(force=True, v=True)
            container = None
        except (docker.errors.APIError, requests.exceptions.RequestException) as exc:
            raise EngineError(f"lost track of the container: {exc}") from None
        error = error or _ending_error(state, staging=staging, limits=limits)
        if error is None:
            dest = output_path / outputs.PREDICTIONS_NAME
            try:
                result.predictions_bytes = outputs.copy_predictions(staging, dest, max_bytes=limits.output_bytes)
                result.predictions_path = dest
            except HarnessError as exc:
                error = exc
        result.exit_code = state.get("ExitCode")
        if error is not None:
            return _fail(result, error)
        result.message = f"finished in {result.duration_s:.1f} s"
        return result
    finally:
        if container is not None:
            _force_remove(container)
        outputs.remove_tree(staging)


def _watch(container: Any, *, limits: Limits, staging: Path, started: float) -> HarnessError | None:
    """Poll until exit; kill and return the error when a limit is broken."""
    while True:
        now = time.monotonic()
        try:
            container.reload()
        except docker.errors.NotFound:
            return None
        if container.status not in ("created", "running", "restarting"):
            return None
        if now - started > limits.wall_s:
            _kill(container)
            return RunTimeout(f"the run took longer than its limit of {limits.wall_s:g} s and was stopped")
        try:
            outputs.check_output_caps(staging, max_bytes=limits.output_bytes, max_entries=limits.output_files)
        except OutputTooLarge as exc:
            _kill(container)
            return exc
        time.sleep(limits.poll_s)


def _final_state(container: Any) -> dict[str, Any]:
    container.wait(timeout=30)
    container.reload()
    return container.attrs.get("State") or {}


def _ending_error(state: Mapping[str, Any], *, staging: Path, limits: Limits) -> HarnessError | None:
    """Map a finished container's state to the team-facing reason (None: exited 0 within caps)."""
    try:
        outputs.check_output_caps(staging, max_bytes=limits.output_bytes, max_entries=limits.output_files)
    except OutputTooLarge as exc:
        return exc
    code = int(state.get("ExitCode", -1))
    if code == 0:
        return None
    if state.get("OOMKilled"):
        return OutOfMemory(f"the run used more than its memory limit of {limits.memory_bytes} bytes")
    return NonZeroExit(f"the container exited with code {code}", exit_code=code)


def _fail(result: RunResult, error: HarnessError) -> RunResult:
    result.error, result.reason, result.message = error, error.reason, error.message
    log.info("harness run failed reason=%s image=%s message=%s", error.reason, result.image_id, error.message)
    return result


def _kill(container: Any) -> None:
    try:
        container.kill()
    except docker.errors.APIError:
        pass  # already exited between the poll and the kill


def _force_remove(container: Any) -> None:
    try:
        container.remove(force=True, v=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError:
        log.exception("could not remove container id=%s; the reaper will retry", container.id)


def _check_dirs(input_dir: Any, output_dir: Any) -> tuple[Path, Path]:
    input_path, output_path = Path(input_dir).resolve(), Path(output_dir).resolve()
    if not input_path.is_dir():
        raise ValueError(f"input_dir must be an existing directory, got {str(input_dir)!r}")
    if not output_path.is_dir():
        raise ValueError(f"output_dir must be an existing directory, got {str(output_dir)!r}")
    for root, _dirs, files in os.walk(input_path):
        leaked = [f for f in files if f in _FORBIDDEN_INPUT_NAMES]
        if leaked:
            raise ValueError(f"input_dir must hold public items only; found {Path(root) / leaked[0]}")
    return input_path, output_path


def _check_env(env: Mapping[str, str]) -> dict[str, str]:
    for key, value in env.items():
        if not isinstance(key, str) or not key.startswith("LB_") or key in _FIXED_ENV:
            raise ValueError(f"env keys must start with 'LB_' and not be one of {sorted(_FIXED_ENV)}, got {key!r}")
        if not isinstance(value, str):
            raise ValueError(f"env value for {key} must be a string, got {value!r}")
    return dict(env)
