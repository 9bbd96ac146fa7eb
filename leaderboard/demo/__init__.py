"""Deterministic demo packs for the five benchmarks (``python -m leaderboard demo-packs``)."""
from __future__ import annotations

from pathlib import Path

BENCHMARKS = ("loki", "tridf", "syncred", "uniaidet", "vct2")


def generate(key: str, out: Path, *, scale: str = "small", seed: int = 0,
             held_out_labels: bool = True) -> Path:
    """Write the demo pack of one benchmark under ``out/<key>``.

    ``held_out_labels=False`` (what ``leaderboard demo-packs`` does for teams) writes no labels
    for held-out splits, like a download: dev scores offline, test only on a server. The
    server's own import (``seed-demo``) keeps them: it needs every split's labels to score."""
    import importlib

    from leaderboard.demo.writer import HELD_OUT_LABELS

    if key not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {key!r}; known: {list(BENCHMARKS)}")
    if scale not in ("small", "large"):
        raise ValueError(f"scale must be 'small' or 'large', got {scale!r}")
    module = importlib.import_module(f"leaderboard.demo.{key}")
    token = HELD_OUT_LABELS.set(held_out_labels)
    try:
        return module.generate(Path(out) / key, scale=scale, seed=seed)
    finally:
        HELD_OUT_LABELS.reset(token)


def generate_all(out: Path, *, scale: str = "small", seed: int = 0, only=None) -> list[Path]:
    return [generate(k, out, scale=scale, seed=seed) for k in (only or BENCHMARKS)]
