"""Benchmark modules, one per benchmark; importing this package registers all five."""
from leaderboard.core.benchmarks import loki, syncred, tridf, uniaidet, vct2  # noqa: F401,E402
from leaderboard.core.benchmarks.base import (  # noqa: F401
    Benchmark,
    Block,
    Field,
    MetricSpec,
    ScoringContext,
    TaskSpec,
    get_benchmark,
    known_benchmarks,
)
