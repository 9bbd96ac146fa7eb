"""Benchmark modules, one per benchmark; importing this package registers all five."""
from leaderboard.benchmarks.base import (  # noqa: F401
    Benchmark, Block, Field, MetricSpec, ScoringContext, TaskSpec, get_benchmark, known_benchmarks,
)
from leaderboard.benchmarks import loki, tridf, syncred, uniaidet, vct2  # noqa: F401,E402
