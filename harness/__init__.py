"""Run submitted detector containers in a locked-down Docker sandbox.

No Flask, no ``leaderboard`` imports: this package runs on a GPU host that has only Docker,
Redis and the database URL. Public entry points::

    info = inspect_tarball(path, limits)                  # ImageRejected(why) or TarballInfo
    image_id = load_image(client, path, submission_id, limits=limits, info=info)
    result = run_submission(client=client, image_id=image_id, input_dir=..., output_dir=...,
                            limits=limits, submission_id=..., env={"LB_BENCHMARK": ...}, gpu=None)
    reap(client)                                          # remove orphaned containers
"""

from .config import Limits
from .engine import load_image, remove_image
from .errors import (
                     FAILURE_REASONS,
                     EngineError,
                     HarnessError,
                     ImageRejected,
                     NonZeroExit,
                     NoPredictions,
                     OutOfMemory,
                     OutputTooLarge,
                     RunTimeout,
)
from .reaper import reap
from .sandbox import RunResult, run_submission
from .tarball import TarballInfo, inspect_tarball

__all__ = [
    "FAILURE_REASONS", "EngineError", "HarnessError", "ImageRejected", "Limits", "NoPredictions",
    "NonZeroExit", "OutOfMemory", "OutputTooLarge", "RunResult", "RunTimeout", "TarballInfo",
    "inspect_tarball", "load_image", "reap", "remove_image", "run_submission",
]
