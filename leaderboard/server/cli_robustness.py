"""Server commands of the robustness track (issue 26):

- ``robustness-build --benchmark KEY [--split S]``: build (or reuse) the degraded copies of the
  planned splits now, in this process, with progress; the admin page queues the same job;
- ``robustness-budget --benchmark KEY [--max-conditions N] [--max-items N] [--wall-s S]
  [--enable/--disable]``: show or set the benchmark's budget.

Imports inside functions here are lazy on purpose (start-up cost of ``leaderboard --help``), as in
`leaderboard.server.cli`.
"""
from __future__ import annotations

import json

import click

from leaderboard.server.cli_support import _app_context, _fail


@click.command("robustness-build")
@click.option("--benchmark", "key", required=True)
@click.option("--split", "splits", multiple=True, help="Only these splits (default: the plan's).")
def robustness_build(key: str, splits: tuple[str, ...]) -> None:
    """Build the degraded copies of a benchmark's planned splits (reused when already built)."""
    from leaderboard.server.db import get_db
    from leaderboard.server.jobs.robustness import build_robustness_copies
    from leaderboard.server.errors import ServiceError
    from leaderboard.server.services import robustness as svc
    from leaderboard.server.services.benchmarks import get_benchmark

    with _app_context():
        with get_db().scope() as session:
            try:
                bench = get_benchmark(session, key)
            except ServiceError as exc:
                _fail(exc.message)
            config = svc.config_of(bench)
            if config is None:
                _fail(f"{key} has no robustness plan (benchmark.yaml, key 'robustness')")
            ids = []
            for split in splits or config.splits:
                try:
                    ids.append(svc.request_build(session, bench, split).id)
                except ServiceError as exc:
                    _fail(exc.message)
        for build_id in ids:
            out = build_robustness_copies(build_id)
            click.echo(json.dumps(out))


@click.command("robustness-budget")
@click.option("--benchmark", "key", required=True)
@click.option("--max-conditions", type=int)
@click.option("--max-items", type=int, help="Items per condition.")
@click.option("--wall-s", type=float, help="Wall time of a degraded run, seconds.")
@click.option("--enable/--disable", default=None)
def robustness_budget(key: str, max_conditions, max_items, wall_s, enable) -> None:
    """Show the benchmark's robustness budget, or change the values given."""
    from leaderboard.server.db import get_db
    from leaderboard.server.errors import ServiceError
    from leaderboard.server.services import robustness as svc
    from leaderboard.server.services.benchmarks import get_benchmark

    with _app_context():
        with get_db().scope() as session:
            try:
                bench = get_benchmark(session, key)
                bud = svc.budget(session, bench)
                if any(v is not None for v in (max_conditions, max_items, wall_s, enable)):
                    bud = svc.set_budget(
                        session, bench, None,
                        enabled=bud.enabled if enable is None else enable,
                        max_conditions=bud.max_conditions if max_conditions is None
                        else max_conditions,
                        max_items=bud.max_items if max_items is None else max_items,
                        wall_s=bud.wall_s if wall_s is None else wall_s)
            except ServiceError as exc:
                _fail(exc.message)
            click.echo(json.dumps({"benchmark": key, **bud.as_dict()}))
