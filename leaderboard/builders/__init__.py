"""Pack builders: the authors' official releases -> benchmark packs (design.md, "Benchmark packs").

One module per benchmark (`loki`, `tridf`, `syncred`, `uniaidet`, `vct2`), each with
``build(source, out, *, dev_fraction, private_fraction, seed, link_media, progress) ->
BuildReport``; their docstrings describe the release layout they read. `build` dispatches by key
and guards the output folder. Shared reading, splitting and media rules are in `common`.
"""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from leaderboard.builders.common import BuildReport, Progress, SourceError, check_options

BENCHMARKS = ("loki", "tridf", "syncred", "uniaidet", "vct2")


def check_paths(source: Path, out: Path) -> None:
    """Refuse an output folder that would clobber the release or an unrelated folder."""
    source, out = Path(source).resolve(), Path(out).resolve()
    if not source.exists():
        raise ValueError(f"--from {source} does not exist")
    if out == source or source in out.parents or out in source.parents:
        raise ValueError(f"--out {out} must be outside the release {source} (and not contain it)")
    if out.exists() and (not out.is_dir() or (any(out.iterdir())
                                              and not (out / "benchmark.yaml").is_file())):
        raise ValueError(f"--out {out} exists and is not a pack; refusing to replace it")


def build(key: str, source: str | Path, out: str | Path, *, dev_fraction: float = 0.3,
          private_fraction: float = 0.5, seed: int = 0, link_media: bool = False,
          progress: Progress | None = None, scoring_only: bool = False, **extra) -> BuildReport:
    """Build the ``key`` pack at ``out`` (a previous pack there is replaced) from ``source``.

    ``scoring_only``: build without media (`builders.common`, "Scoring-only builds"); only the
    builders whose ``build`` takes ``scoring_only`` support it. ``extra``: builder-specific
    options (VCT²: ``workers``, ``batch_rows``). Raises ValueError for bad options or paths and
    `SourceError` (file, record, field) for a malformed release.
    """
    if key not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {key!r}; known: {list(BENCHMARKS)}")
    check_options(dev_fraction=dev_fraction, private_fraction=private_fraction, seed=seed)
    check_paths(Path(source), Path(out))
    module = importlib.import_module(f"leaderboard.builders.{key}")
    if scoring_only:
        if "scoring_only" not in inspect.signature(module.build).parameters:
            raise ValueError(f"the {key} builder cannot build a scoring-only pack (yet); build it "
                             "with its media")
        extra["scoring_only"] = True
    return module.build(Path(source), Path(out), dev_fraction=dev_fraction,
                        private_fraction=private_fraction, seed=seed, link_media=link_media,
                        progress=progress, **extra)


__all__ = ["BENCHMARKS", "BuildReport", "SourceError", "build", "check_paths"]
