"""Deterministic demo packs for the five benchmarks (``python -m leaderboard demo-packs``)."""
from __future__ import annotations

from pathlib import Path

BENCHMARKS = ("loki", "tridf", "syncred", "uniaidet", "vct2")


def generate(key: str, out: Path, *, scale: str = "small", seed: int = 0) -> Path:
    """Write the demo pack of one benchmark under ``out/<key>``."""
    import importlib

    if key not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {key!r}; known: {list(BENCHMARKS)}")
    if scale not in ("small", "large"):
        raise ValueError(f"scale must be 'small' or 'large', got {scale!r}")
    module = importlib.import_module(f"leaderboard.demo.{key}")
    return module.generate(Path(out) / key, scale=scale, seed=seed)


def generate_all(out: Path, *, scale: str = "small", seed: int = 0, only=None) -> list[Path]:
    return [generate(k, out, scale=scale, seed=seed) for k in (only or BENCHMARKS)]
