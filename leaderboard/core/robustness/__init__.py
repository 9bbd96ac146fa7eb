"""The robustness track's definitions (issue 26): degradation suites, the pack's plan, the
subset of items each condition uses, the copies' layout and how they are scored.

No media library here (the core stays light): the transforms are in
`leaderboard.builders.degrade`, which needs the ``[builders]`` extra and ffmpeg.
"""
from leaderboard.core.robustness.config import (
    Condition,
    RobustnessConfig,
    meta_config,
    pack_config,
    parse_config,
)
from leaderboard.core.robustness.suites import SUITES, Degradation, Suite, get_suite, register_suite

__all__ = ["SUITES", "Condition", "Degradation", "RobustnessConfig", "Suite", "get_suite",
           "meta_config", "pack_config", "parse_config", "register_suite"]
