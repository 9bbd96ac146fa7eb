"""The server's commands (``python -m leaderboard <command>``).

Each command builds the app from the environment (`leaderboard.server.config`) and runs in its context;
user mistakes exit with code 2 and a message naming what is wrong.

Commands import what they need inside their bodies, on purpose: ``leaderboard --help`` and the
core's offline commands stay fast and work without the server's heavy imports (start-up cost,
not a cycle: tests/test_layers.py counts these imports too).
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import click

from leaderboard.core.errors import LeaderboardError
from leaderboard.server.cli_support import _app_context, _fail, upgrade, upgrade_database

log = logging.getLogger(__name__)


@click.group("server")
def server() -> None:
    """Server commands: database, packs, admins, workers, reconciler."""


@server.command("db-upgrade")
@click.option("--revision", default="head", show_default=True)
def db_upgrade(revision: str) -> None:
    """Build or upgrade the database schema (alembic upgrade head)."""
    with _app_context() as app:
        upgrade(app, revision)
    click.echo(f"database at {revision}")


@server.command("rebuild-standings")
@click.option("--benchmark", "key", default=None,
              help="One benchmark (a family's name: its latest release; <family>-v<N>: "
                   "release N; default: all).")
def rebuild_standings(key: str | None) -> None:
    """Rebuild the boards' standings from the score rows (they are kept up to date as
    submissions are scored; this repairs or fills them, e.g. after a bulk load)."""
    from leaderboard.server.boards import rebuild
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.db import get_db
    from leaderboard.server.services import releases

    with _app_context() as app:
        with get_db(app).scope() as session:
            bench_id = None
            if key is not None:
                bench = releases.resolve(session, key)  # a family: its latest release
                if bench is None:
                    _fail(f"no benchmark {key!r}")
                bench_id, key = bench.id, bench.key
            rows = rebuild.rebuild(session, bench_id)
        invalidate_boards(key)
    click.echo(f"standings rebuilt: {rows} rows")


@server.command("db-grant-app")
@click.option("--role", required=True, help="The PostgreSQL role web and workers connect as.")
def db_grant_app(role: str) -> None:
    """Give the application's role what it needs and nothing more (run as the tables' owner,
    after db-upgrade): read/write tables, append-only audit log (leaderboard.server.dbroles)."""
    from leaderboard.server.dbroles import grant_app_role

    with _app_context() as app:
        try:
            stmts = grant_app_role(app.config["DATABASE_URL"], role)
        except ValueError as exc:
            _fail(str(exc))
    click.echo(f"granted {role}: {len(stmts)} statements")


@server.command("import-pack")
@click.argument("pack_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--no-media", is_flag=True, help="Skip checking that media files exist.")
def import_pack_cmd(pack_dir: Path, no_media: bool) -> None:
    """Register a benchmark pack (labels are encrypted into the database).

    A pack with ``release: N`` is release N of its benchmark (issue 37): the output says
    whether a release was created or an existing one refreshed. A release that drops or
    changes an item of the release before it is refused (exit 2, naming the split, item and
    field) and nothing changes. A new release (N >= 2) starts its re-run campaign: the
    family's container submissions whose teams allow it are queued on the ``rerun`` queue."""
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.db import get_db
    from leaderboard.server.jobs.reruns import after_import
    from leaderboard.server.services.release_import import import_release

    with _app_context() as app:
        try:
            with get_db().scope() as session:
                done = import_release(session, pack_dir, data_dir=app.config["DATA_DIR"],
                                      label_keys=app.config["LABEL_KEYS"],
                                      check_media=not no_media)
                key, version, bench_id = done.bench.key, done.bench.version, done.bench.id
                message, everything = done.message, done.invalidate_all
        except LeaderboardError as exc:
            _fail(str(exc))
        invalidate_boards(None if everything else key)
        queued = after_import(bench_id)  # after the commit: the campaign plans on the stored release
    click.echo(f"imported {key} version {version}: {message}"
               + (f"; {len(queued)} re-run(s) queued" if queued else ""))


@server.command("create-admin")
@click.option("--email", required=True)
@click.option("--name", "display_name", default="Admin", show_default=True)
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True,
              envvar="LB_ADMIN_PASSWORD", help="Prompted for unless LB_ADMIN_PASSWORD is set.")
def create_admin(email: str, display_name: str, password: str) -> None:
    """Create an admin account (or promote an existing one and reset its password)."""
    from leaderboard.server.db import get_db
    from leaderboard.server.services import accounts

    with _app_context():
        try:
            with get_db().scope() as session:
                accounts.create_admin(session, email=email, display_name=display_name,
                                      password=password)
        except LeaderboardError as exc:
            _fail(str(exc))
    click.echo(f"admin {email} ready")


@server.command("worker")
@click.option("--queues", default="scoring,mail", show_default=True,
              help="Comma-separated queue names, in priority order. A list with ``gpu`` gets "
                   "``rerun`` (re-runs on a new release, issue 37) appended last unless it "
                   "names it.")
@click.option("--burst", is_flag=True, help="Exit when the queues are empty.")
@click.option("--fork", is_flag=True,
              help="Fork a work-horse per job (RQ's default) instead of running jobs in this "
                   "warm process, which keeps each pack's compiled tables across jobs.")
@click.option("--simple", is_flag=True, hidden=True,
              help="Run jobs in this process: the default now (kept for old scripts).")
def worker(queues: str, burst: bool, fork: bool, simple: bool) -> None:
    """Run an RQ worker (JSON serializer) inside the app context; it waits out Redis outages
    and reconnects, and by default runs jobs in its own warm process
    (`leaderboard.server.jobs.worker`)."""
    from leaderboard.server.db import get_db
    from leaderboard.server.jobs.queue import GPU_QUEUE, RERUN_QUEUE, redis_connection
    from leaderboard.server.jobs.worker import lower_priority, run_worker

    if not logging.getLogger().handlers:
        # RQ sets up its own logger only; the jobs' lines (``leaderboard`` at INFO, one per
        # scoring job with its phase times) need a handler too. Others stay at WARNING.
        logging.basicConfig(level=logging.WARNING,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with _app_context() as app:
        conn = redis_connection(app)
        if conn is None:
            _fail("REDIS_URL is not set: jobs run inline in the web process, no worker needed")
        engine = get_db().engine
        # A forked work-horse must not reuse the parent's pooled connections.
        os.register_at_fork(after_in_child=lambda: engine.dispose(close=False))
        names = [n.strip() for n in queues.split(",") if n.strip()]
        if GPU_QUEUE in names and RERUN_QUEUE not in names:
            names.append(RERUN_QUEUE)  # re-runs only when no new submission waits
        # Import the job code once in the parent, so each forked work-horse starts warm.
        import leaderboard.core.benchmarks  # noqa: F401
        import leaderboard.core.scoring  # noqa: F401
        import leaderboard.server.jobs.scoring  # noqa: F401
        if fork and simple:
            _fail("--fork and --simple contradict each other")
        # web reads first where they share the cores (issue 39, WORKER_NICE)
        lower_priority(app.config["WORKER_NICE"])
        run_worker(conn, names, burst=burst, simple=not fork)


@server.command("reap")
@click.option("--every", type=click.IntRange(min=1), default=None,
              help="Repeat every N seconds (default: one pass).")
def reap_cmd(every: int | None) -> None:
    """Remove this deployment's submission containers past their deadline (their worker died),
    and its images of submissions that are no longer running (DEPLOYMENT_ID labels both).
    With ``--every``, a pass that fails (the engine restarting, the database away) is logged
    and the next one runs: the loop never ends on a fault."""
    import docker

    from harness import reap
    from leaderboard.server.jobs.containers import release_stale_images

    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with _app_context() as app:
        client = None
        try:
            while True:
                try:
                    if client is None:  # made (and its engine reached) inside the retry
                        client = docker.from_env(timeout=120)
                    removed = reap(client, deployment=app.config["DEPLOYMENT_ID"])
                    images = release_stale_images(client)
                    click.echo(f"reaped containers={len(removed)} images={len(images)}")
                except Exception:  # noqa: BLE001 - one pass fails; a loop outlives outages
                    if every is None:
                        raise
                    log.exception("reap pass failed; next pass in %s s", every)
                if every is None:
                    break
                time.sleep(every)
        finally:
            if client is not None:
                client.close()


@server.command("reconcile")
@click.option("--every", type=click.IntRange(min=1), default=None,
              help="Repeat every N seconds (default: one pass).")
def reconcile_cmd(every: int | None) -> None:
    """Re-queue submissions whose job was lost (worker died, Redis flushed or restarted, an
    enqueue that never happened), or fail them after too many attempts. Production runs it
    ``--every 10``; a failing pass (database or Redis down) is logged and the next one runs."""
    from leaderboard.server.jobs.reconcile import RETRY_S, reconcile

    if not logging.getLogger().handlers:
        # one time-stamped line per pass and per row acted on (``leaderboard`` logs at INFO)
        logging.basicConfig(level=logging.WARNING,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with _app_context():
        while True:
            started = time.monotonic()
            pause = every
            try:
                report = reconcile()  # logs its own line (time, duration, ids)
                if every is None:
                    click.echo(report.log_line())
                if not report.evidence:
                    pause = min(every or RETRY_S, RETRY_S)  # Redis back soon: look again soon
            except Exception:  # noqa: BLE001 - a one-shot pass fails; a loop outlives outages
                if every is None:
                    raise
                pause = min(every, RETRY_S)
                log.exception("reconcile pass failed; next pass in %s s", pause)
            if every is None:
                break
            # a fixed rate: passes start every `every` s, however long a pass took
            time.sleep(max(0.0, started + pause - time.monotonic()))


@server.command("metrics-rebuild")
def metrics_rebuild() -> None:
    """Fill the /metrics submission counters in Redis from the database (an existing
    deployment, or after drift); the first scrape does it by itself when they are missing."""
    from leaderboard.server import ops_counters
    from leaderboard.server.db import get_db
    from leaderboard.server.jobs.queue import redis_connection

    with _app_context() as app:
        conn = redis_connection(app)
        if conn is None:
            _fail("REDIS_URL is not set: /metrics aggregates in the database, nothing to build")
        snap = ops_counters.rebuild(conn, get_db(), wait=True)
        total = sum(snap.counts.values())
        click.echo(f"metrics counters rebuilt: {total} finished submissions, "
                   f"{int(sum(h.count for h in snap.durations.values()))} timed")


@server.command("rotate-label-keys")
def rotate_label_keys() -> None:
    """Re-encrypt every label set with the newest LABEL_KEYS key."""
    from leaderboard.server import labels_crypto
    from leaderboard.server.db import get_db

    with _app_context() as app:
        try:
            with get_db().scope() as session:
                n = labels_crypto.rotate(session, keys=app.config["LABEL_KEYS"])
        except labels_crypto.LabelKeyError as exc:
            _fail(str(exc))
    click.echo(f"re-encrypted {n} label sets")


# Judge commands (rejudge, judge-agreement) live in their own module.
from leaderboard.server.cli_judges import judge_agreement, rejudge  # noqa: E402

server.add_command(rejudge)
server.add_command(judge_agreement)

from leaderboard.server.cli_robustness import robustness_budget, robustness_build  # noqa: E402

server.add_command(robustness_build)
server.add_command(robustness_budget)


@server.command("mail-send")
@click.option("--id", "outbox_id", type=click.IntRange(min=1), default=None,
              help="Send this outbox message (default: every due one, after recovering the "
                   "messages of dead senders and gathering due digests).")
def mail_send(outbox_id: int | None) -> None:
    """Send waiting mail now (what the reconciler's mail pass does; issue 35)."""
    from leaderboard.server.jobs import mail

    with _app_context():
        if outbox_id is not None:
            click.echo(f"outbox {outbox_id}: {mail.send_message(outbox_id)}")
        else:
            click.echo(" ".join(f"{k}={v}" for k, v in mail.reconcile_mail().items()))


from leaderboard.server.cli_demo import run_demo, seed_demo  # noqa: E402

server.add_command(seed_demo)
server.add_command(run_demo)
