"""Offline robustness commands: build a split's degraded copies, lay out one input folder per
condition for a container, and score a detector's curve (docs/robustness.md).

``degrade`` needs the ``[builders]`` extra and ffmpeg; the other two need only the core.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import click


@click.command("degrade")
@click.option("--pack", "pack_dir", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--split", required=True)
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="folder that receives <cache key>/ (reused when it is already built)")
@click.option("--no-labels", is_flag=True, help="leave labels.jsonl out of the copies")
def degrade_cmd(pack_dir: Path, split: str, out: Path, no_labels: bool) -> None:
    """Build the degraded copies of a split as the server does (same bytes, same key)."""
    from leaderboard.builders.copies import build_copies, plan_copies
    from leaderboard.core.packs import load_pack

    from leaderboard.core.errors import LeaderboardError

    try:
        pack = load_pack(pack_dir)
        plan = plan_copies(pack, split)
    except LeaderboardError as exc:
        raise click.ClickException(str(exc)) from None
    if plan is None:
        raise click.ClickException(f"{pack.key} has no robustness plan for split {split!r} "
                                   "(benchmark.yaml, key 'robustness')")
    last = [-1]

    def progress(done: int, total: int) -> None:
        pct = done * 100 // max(total, 1)
        if pct >= last[0] + 10 or done == total:
            last[0] = pct
            click.echo(f"  {done}/{total} files", err=True)

    try:
        folder = build_copies(plan, out, with_labels=not no_labels, progress=progress)
    except ValueError as exc:  # DegradeError: names the item, file and condition
        raise click.ClickException(str(exc)) from None
    click.echo(str(folder))


@click.command("robustness-inputs")
@click.option("--copies", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path))
def inputs_cmd(copies: Path, out: Path) -> None:
    """One /input folder per condition (items.jsonl + media, no labels): mount each with
    ``docker run -v <out>/<condition>:/input:ro -v <preds>/<condition>:/output ...``."""
    from leaderboard.core.packs import load_pack

    pack = load_pack(copies)
    for split in pack.splits:
        dest = out / split
        (dest / "media").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pack.items_path(split), dest / "items.jsonl")
        items = pack.items(split)
        for i in range(len(items)):
            for rel in items.value("media", i) or ():
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    try:
                        os.link(copies / rel, target)
                    except OSError:
                        shutil.copyfile(copies / rel, target)
        click.echo(str(dest))


@click.command("robustness-score")
@click.option("--copies", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--predictions", "preds", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="folder with <condition split>.jsonl or <condition split>/predictions.jsonl")
@click.option("--json", "as_json", is_flag=True, help="print the records as JSON")
def score_cmd(copies: Path, preds: Path, as_json: bool) -> None:
    """Score a detector on the copies: headline per degradation and level (0 = clean)."""
    from leaderboard.core.packs import load_pack
    from leaderboard.core.robustness.scoring import score_copies

    from leaderboard.core.errors import LeaderboardError

    try:
        pack = load_pack(copies)
    except LeaderboardError as exc:
        raise click.ClickException(str(exc)) from None
    files = {}
    for split in pack.splits:
        for cand in (preds / f"{split}.jsonl", preds / split / "predictions.jsonl"):
            if cand.is_file():
                files[split] = cand
    try:
        result = score_copies(pack, files)
    except (ValueError, LeaderboardError) as exc:  # the clean subset's file is needed and valid
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result.as_dict(), indent=1))
        return
    click.echo(curve_table(pack, result.records))
    for note in result.notes:
        click.echo(f"note: {note}")


def curve_table(pack, records) -> str:
    """Text table per (task, modality): one row per degradation, columns level 0 (clean) to 5,
    then the mean over levels, and under it each level's drop paired with the clean
    predictions on that condition's items; the worst case and the mean drop with their 95% CIs
    below."""
    lines = []
    for task in pack.tasks:
        head = [r for r in records if r.task == task.key and r.metric == task.headline]
        for modality in sorted({r.slice["modality"] for r in head if "modality" in r.slice}):
            mine = [r for r in head if r.slice.get("modality") == modality]

            def summary(kind, deg=None):
                return next((r for r in mine if r.slice.get("summary") == kind
                             and r.slice.get("degradation") == deg), None)

            clean = summary("clean")
            degs = list(dict.fromkeys(r.slice["degradation"] for r in mine if "level" in r.slice))
            lines.append(f"{task.key} / {modality} ({task.headline}); level 0 = clean")
            lines.append(f"{'degradation':<12}" + "".join(f"{lv:>8}" for lv in range(6))
                         + f"{'mean':>8}")
            for d in degs:
                at = [r for r in mine if r.slice.get("degradation") == d and "level" in r.slice]
                cells = {r.slice["level"]: r.value for r in at if "summary" not in r.slice}
                drops = {r.slice["level"]: r.value for r in at if r.slice.get("summary") == "drop"}
                mean = summary("mean", d)
                vals = [clean.value if clean else None] + \
                    [cells.get(str(lv)) for lv in range(1, 6)] + [mean.value if mean else None]
                lines.append(f"{d:<12}" + "".join(
                    f"{'-' if v is None else f'{v:.3f}':>8}" for v in vals))
                lines.append(f"{'  drop':<12}{'':>8}" + "".join(  # paired: same items
                    f"{'-' if drops.get(str(lv)) is None else f'{drops[str(lv)]:.3f}':>8}"
                    for lv in range(1, 6)))
            for kind in ("worst", "drop"):
                r = summary(kind)
                if r is not None and r.value is not None:
                    ci = "" if r.ci_low is None else f" [{r.ci_low:.3f}, {r.ci_high:.3f}]"
                    lines.append(f"{kind}: {r.value:.3f}{ci}")
    return "\n".join(lines)
