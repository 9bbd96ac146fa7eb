"""Run submitted detector containers in a locked-down Docker sandbox.

No Flask, no ``leaderboard`` imports: this package runs on a GPU host that has only Docker,
Redis and the database URL. Public entry points::

    info = inspect_tarball(path, limits)                  # ImageRejected(why) or TarballInfo
    image_id = load_image(client, path, submission_id, limits=limits, info=info,
                          deployment="prod")              # a private id, labelled lb.deployment
    result = run_submission(client=client, image_id=image_id, input_dir=..., output_dir=...,
                            limits=limits, submission_id=..., env={"LB_BENCHMARK": ...}, gpu=None,
                            deployment="prod")
    remove_image(client, image_id, deployment="prod")     # only ever this deployment's images
    reap(client, deployment="prod")                       # orphaned containers past their deadline
    reap_images(client, deployment="prod", in_flight=...) # images of finished submissions
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
from .labels import DEFAULT_DEPLOYMENT, check_deployment
from .reaper import reap, reap_images
from .sandbox import RunResult, run_submission
from .tarball import TarballInfo, inspect_tarball

__all__ = [
    "DEFAULT_DEPLOYMENT", "FAILURE_REASONS", "EngineError", "HarnessError", "ImageRejected",
    "Limits", "NoPredictions", "NonZeroExit", "OutOfMemory", "OutputTooLarge", "RunResult",
    "RunTimeout", "TarballInfo", "check_deployment", "inspect_tarball", "load_image", "reap",
    "reap_images", "remove_image", "run_submission",
]
