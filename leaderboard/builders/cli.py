"""``build-pack``: the click command that builds a pack from an authors' release.

Mounted by the main CLI (``python -m leaderboard build-pack ...``). Exit code 2 with a message
naming the file and record for a malformed release or bad options; 0 once the written pack has
passed `leaderboard.core.packs.Pack.validate`.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from leaderboard.builders import BENCHMARKS


class _Ticker:
    """Progress lines on stderr, at most one every ``every`` seconds."""

    def __init__(self, every: float = 2.0):
        self.every, self.last = every, 0.0

    def __call__(self, done: int, total, message: str) -> None:
        now = time.monotonic()
        if now - self.last >= self.every or (total and done == total):
            self.last = now
            of = f"/{total}" if total else ""
            click.echo(f"  {done}{of} {message}", err=True)


@click.command("build-pack")
@click.argument("benchmark", type=click.Choice(BENCHMARKS))
@click.option("--from", "source", required=True, type=click.Path(exists=True, path_type=Path),
              help="The authors' release: a folder (or a file: UniAIDet manifest, VCT² table).")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Pack folder to write (replaced if it holds a pack; must be outside --from).")
@click.option("--dev-fraction", type=float, default=0.3, show_default=True,
              help="Share of split units in the dev split (the rest is test).")
@click.option("--private-fraction", type=float, default=0.5, show_default=True,
              help="Share of test units in the private part of the board.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the deterministic split (a hash of the unit key and the seed).")
@click.option("--link-media", is_flag=True,
              help="Hard-link media files instead of copying them (same file system).")
@click.option("--workers", type=int, default=1, show_default=True,
              help="VCT²: processes computing the Visual AI Index features.")
@click.option("--scoring-only", is_flag=True,
              help="Build without media (for releases too large to host): items list their media "
                   "as absent, and media missing from the release are allowed. The pack scores "
                   "uploaded predictions; the server offers no downloads or container runs for it.")
def build_pack(benchmark: str, source: Path, out: Path, dev_fraction: float,
               private_fraction: float, seed: int, link_media: bool, workers: int,
               scoring_only: bool) -> None:
    """Build BENCHMARK's pack from the authors' release (see leaderboard/builders/<key>.py)."""
    from leaderboard.builders import build
    from leaderboard.core.errors import LeaderboardError
    from leaderboard.core.packs import load_pack

    extra = {"workers": workers} if benchmark == "vct2" else {}
    started = time.monotonic()
    try:
        report = build(benchmark, source, out, dev_fraction=dev_fraction,
                       private_fraction=private_fraction, seed=seed, link_media=link_media,
                       progress=_Ticker(), scoring_only=scoring_only, **extra)
        pack = load_pack(out)
        pack.validate()
    except (ValueError, LeaderboardError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    notes = report.notes
    if len(notes) > 20:
        notes = notes[:20] + [f"... and {len(report.notes) - 20} more notes"]
    for note in notes:
        click.echo(f"note: {note}")
    absent = report.absent_summary()
    if absent:
        click.echo(absent)
    click.echo(f"{pack.key} {pack.version}: wrote {out} {report.counts} tasks {report.tasks} "
               f"in {time.monotonic() - started:.1f} s")
