"""Judge commands of the server (``python -m leaderboard rejudge | judge-agreement``).

- ``rejudge``: after an upgrade changed a judge's version (``rules@1`` -> ``rules@2``), the boards
  of benchmarks judged by the default judge show only records made by the new identity; this
  re-judges the submissions judged by another identity (or every judged one, ``--all``).
- ``judge-agreement``: per-artifact Cohen's kappa between the offline judges and the
  OpenAI-compatible judge on a benchmark's stored responses
  (`leaderboard.server.services.judge_agreement`), so an organiser can decide which judge is
  official. ``--fill`` sends up to ``--limit`` responses the reference judge has not mapped yet
  to it (API calls; its answers are cached for scoring too).

Imports inside functions here are lazy on purpose (start-up cost of ``leaderboard --help``), as in
`leaderboard.server.cli`.
"""
from __future__ import annotations

import json

import click

from leaderboard.server.cli_support import _app_context, _fail


@click.command("rejudge")
@click.option("--benchmark", "keys", multiple=True, help="Only these benchmarks (repeatable).")
@click.option("--all", "everything", is_flag=True,
              help="Re-judge every judged submission, not only those judged by another judge.")
def rejudge(keys: tuple[str, ...], everything: bool) -> None:
    """Queue judging for submissions whose judge metrics another judge (version) made."""
    from sqlalchemy import select

    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.db import get_db
    from leaderboard.server.jobs.judging import enqueue_judging
    from leaderboard.server.models import Benchmark
    from leaderboard.server.services import releases
    from leaderboard.server.services.judging import stale_submissions

    with _app_context() as app:
        queued: dict[str, list[int]] = {}
        with get_db().scope() as session:
            benches = session.scalars(select(Benchmark).order_by(Benchmark.key)).all()
            # a family's name means its latest release, <family>-v<N> release N (issue 37)
            wanted = {k: releases.resolve(session, k) for k in keys}
            unknown = sorted(k for k, b in wanted.items() if b is None)
            if unknown:
                _fail(f"unknown benchmark(s) {unknown}; known: {sorted(b.key for b in benches)}")
            ids = {b.id for b in wanted.values()}
            for bench in benches:
                if keys and bench.id not in ids:
                    continue
                queued[bench.key] = stale_submissions(session, bench, app.config,
                                                      everything=everything)
        for key, ids in queued.items():
            if ids:
                invalidate_boards(key)
            for sid in ids:
                enqueue_judging(sid, mark=False)
            click.echo(f"{key}: {len(ids)} submission(s) queued for re-judging")


@click.command("judge-agreement")
@click.option("--benchmark", "key", default="tridf", show_default=True)
@click.option("--reference", default="openai", show_default=True,
              help="The judge the others are compared with (a name or identity).")
@click.option("--judges", "specs", multiple=True,
              help="Judges to compare (repeatable; default: rules, local-minilm).")
@click.option("--limit", type=click.IntRange(min=1), default=300, show_default=True,
              help="At most this many distinct responses (a stable sample).")
@click.option("--fill", is_flag=True,
              help="Send responses the reference judge has not mapped yet to it (API calls).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def judge_agreement(key: str, reference: str, specs: tuple[str, ...], limit: int, fill: bool,
                    as_json: bool) -> None:
    """Per-artifact Cohen's kappa between offline judges and the reference (LLM) judge."""
    from leaderboard.judges.base import JudgeError
    from leaderboard.server.db import get_db
    from leaderboard.server.services import judge_agreement as agreement
    from leaderboard.server.services import releases

    with _app_context() as app:
        with get_db().scope() as session:
            bench = releases.resolve(session, key)  # a family: its latest release
            if bench is None:
                _fail(f"unknown benchmark {key!r}")
            try:
                rep = agreement.report(session, bench, app.config, reference=reference,
                                       judges=specs or agreement.OFFLINE, limit=limit,
                                       fill=fill)
            except JudgeError as exc:
                _fail(str(exc))
    if as_json:
        click.echo(json.dumps(rep, indent=1))
        return
    click.echo(format_report(rep))


def format_report(rep: dict) -> str:
    """The agreement report as plain text (one table per compared judge)."""
    lines = [f"{rep['benchmark']}: {rep['judged_by_reference']} of {rep['responses']} stored "
             f"responses mapped by the reference {rep['reference']}"]
    if not rep["judged_by_reference"]:
        lines.append("nothing to compare: run with --fill to send responses to the reference "
                     "judge, or judge the benchmark with it first")
        return "\n".join(lines)
    for identity, res in rep["judges"].items():
        if "error" in res:
            lines.append(f"\n{identity}: {res['error']}")
            continue
        o = res["overall"]
        lines.append(f"\n{identity} vs {rep['reference']}: kappa={_f(o['kappa'])} "
                     f"agreement={_f(o['agreement'])} precision={_f(o['precision'])} "
                     f"recall={_f(o['recall'])} (n={o['n']} response x artifact pairs)")
        lines.append(f"  {'artifact':<26} {'n':>5} {'kappa':>6} {'ref%':>6} {'judge%':>7}")
        for art, s in sorted(res["per_artifact"].items()):
            lines.append(f"  {art:<26} {s['n']:>5} {_f(s['kappa']):>6} "
                         f"{_pct(s['reference_rate']):>6} {_pct(s['other_rate']):>7}")
    return "\n".join(lines)


def _f(v) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.0f}%"
