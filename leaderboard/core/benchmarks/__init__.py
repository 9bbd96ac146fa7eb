"""Benchmark modules, one per benchmark; importing this package registers all five, and
`get_benchmark` / `known_benchmarks` are the lookups (the registry itself is `base`'s, which the
modules import, so the lookups live here, above every module)."""
from leaderboard.core.benchmarks import loki, syncred, tridf, uniaidet, vct2  # noqa: F401
from leaderboard.core.benchmarks.base import (  # noqa: F401
    Benchmark,
    Block,
    Field,
    MetricSpec,
    ScoringContext,
    TaskSpec,
    registered,
    registered_keys,
)


def get_benchmark(key: str) -> Benchmark:
    """The benchmark module for a pack key; raises KeyError naming the known keys."""
    return registered(key)


def known_benchmarks() -> list[str]:
    return registered_keys()
