"""Failure reasons a team can act on, one exception class per reason.

Every way a submitted container can fail maps to exactly one ``reason`` string. The web pages and
the job runner show ``reason`` and ``str(error)`` (a sentence written for the team); they never
need to parse messages. ``invalid predictions`` is not here on purpose: the caller validates
``/output/predictions.jsonl`` with the same code that checks uploads.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Base class. ``reason`` is the stable machine key; the message is for the team."""

    reason = "harness_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EngineError(HarnessError):
    """Docker itself failed (not the team's fault): the job should be retried or failed as internal."""

    reason = "harness_error"


class ImageRejected(HarnessError):
    """The uploaded tarball or the loaded image broke a rule; the message says which one."""

    reason = "image_rejected"


class RunTimeout(HarnessError):
    reason = "timeout"


class OutOfMemory(HarnessError):
    reason = "out_of_memory"


class NonZeroExit(HarnessError):
    reason = "exit_code"

    def __init__(self, message: str, *, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class NoPredictions(HarnessError):
    reason = "no_predictions"


class OutputTooLarge(HarnessError):
    reason = "output_too_large"


#: Every reason the harness can report, in the order a results page may list them.
FAILURE_REASONS: tuple[str, ...] = (
    ImageRejected.reason,
    RunTimeout.reason,
    OutOfMemory.reason,
    NonZeroExit.reason,
    NoPredictions.reason,
    OutputTooLarge.reason,
    HarnessError.reason,
)
