"""The demo's commands (issue 33):

- ``seed-demo``: generate, import and score the five demo benchmarks, each only when what it is
  made from changed (`leaderboard.server.demo_seed`), and make the demo admin (printing its
  login);
- ``run-demo``: what ``make run`` runs, in one process so a second start serves in seconds: the
  receipt signing key made when missing, the schema upgraded, the demo seeded, the development
  server started.
"""
from __future__ import annotations

import time
from pathlib import Path

import click

from leaderboard.core.errors import LeaderboardError
from leaderboard.server.cli_support import _app_context, _fail, upgrade


def _seed(app, seed_value: int, only: tuple[str, ...], kinds: str) -> None:
    # lazy: every `leaderboard` command loads this module; only these two need the server stack
    from leaderboard.server.db import get_db
    from leaderboard.server.demo_admin import ensure_demo_admin
    from leaderboard.server.demo_seed import seed

    started = time.monotonic()
    click.echo(f"demo data in {app.config['DATA_DIR']} (packs, imports and baselines are "
               "cached by digest: only what changed is redone)")
    try:
        seed(app, seed=seed_value, only=only, kinds=kinds)
    except (ValueError, LeaderboardError) as exc:
        click.echo()
        _fail(str(exc))
    with get_db(app).scope() as session:
        lines = ensure_demo_admin(session, app.config["DATA_DIR"])
    click.echo(f"demo data ready in {time.monotonic() - started:.1f} s")
    for line in lines:
        click.echo(line)


_seed_options = [
    click.option("--seed", "seed_value", type=int, default=0, show_default=True),
    click.option("--only", multiple=True, help="Only these benchmarks (repeatable)."),
    click.option("--kinds", default="random,all-fake", show_default=True,
                 help="Baselines to submit for every benchmark and split."),
]


def _with_seed_options(fn):
    for option in reversed(_seed_options):
        fn = option(fn)
    return fn


@click.command("seed-demo")
@_with_seed_options
def seed_demo(seed_value: int, only: tuple[str, ...], kinds: str) -> None:
    """Generate the demo packs into DATA_DIR, import them, score baseline submissions, and make
    the demo admin (printing its login); a second run redoes only what changed."""
    with _app_context() as app:
        _seed(app, seed_value, only, kinds)


@click.command("run-demo")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=5000, show_default=True)
@_with_seed_options
def run_demo(host: str, port: int, seed_value: int, only: tuple[str, ...], kinds: str) -> None:
    """Make the receipt signing key if there is none, upgrade the database, seed the demo (as
    seed-demo) and serve it with the development server: ``make run`` in one process."""
    from leaderboard.core.transparency.keyfiles import SIGNING_FILE, generate  # lazy: as above

    started = time.monotonic()
    with _app_context() as app:
        key_dir = Path(app.config["RECEIPT_KEY_DIR"])
        if not app.config.get("RECEIPT_SIGNING_KEY") and not (key_dir / SIGNING_FILE).exists():
            click.echo(f"receipt signing key: generated {generate(key_dir).key_id} in {key_dir}")
        click.echo("database: upgrading to head ...")
        upgrade(app)
        _seed(app, seed_value, only, kinds)
    click.echo(f"serving http://{host}:{port}/ ({time.monotonic() - started:.1f} s after "
               "start; Ctrl-C stops it)")
    app.run(host=host, port=port, threaded=True)
