"""The worker process (``python -m leaderboard worker``): an RQ worker that outlives Redis.

RQ's own loop retries a failed dequeue, but any other Redis error (its heartbeat while a job
runs, registering a new worker, a connection timeout) makes ``Worker.work`` log "quitting" and
return, and one raised while it registers or unregisters escapes it: a Redis restart used to end
the process (issue 17). Building an RQ worker talks to Redis too (``CLIENT SETNAME``), so a
worker started while Redis was away used to exit at once (issue 36); it now waits like one that
lost Redis later. `run_worker` wraps it: when ``work`` ends without a stop request, it lets
a running work-horse finish, waits until Redis answers again (backing off up to `MAX_WAIT_S`),
and starts a fresh RQ worker, for as long as it takes. SIGTERM / SIGINT still stop it (RQ's warm
shutdown while a job runs; at once while waiting). A burst worker (tests, draining) ends as
before once the queues are empty and Redis answers.

**Warm by default** (issue 16): jobs run in the worker's own process (RQ's ``SimpleWorker``),
not in a work-horse forked per job, so the compiled pack tables and decrypted label tables that
`leaderboard.server.services.scoring_service` keeps in its LRUs (keyed by a digest of the pack
files and of the label ciphertext: a changed pack is reloaded) serve every later job, and pooled
database connections are reused. The reliability story does not depend on the fork: the job
timeout is RQ's SIGALRM death penalty in this same process; the lease thread runs here and dies
with the process, so a killed or crashed worker is noticed by the reconciler as before; a job
that crashes the interpreter takes the worker with it, and the restart policy below starts a new
one (``MAX_ATTEMPTS`` ends a submission that keeps doing that). ``worker --fork`` restores a
work-horse per job, for isolation at the cost of a cold start per job.

**Second to the web** (issue 39): `lower_priority` raises the process's niceness by
``WORKER_NICE`` (default 10) before it takes a job, so where scoring workers share cores with the
web workers (a single host, the embedded install, a CPU host running both) the kernel gives the
board reads the CPU first and scoring the rest: a job takes longer under read load, a read does
not wait behind a job. Niceness is inherited by any process a job starts and cannot be lowered
back without privilege. Across containers it has no effect (each has its own CPU group): the
compose file gives workers a smaller ``cpu_shares`` for that.

Deployments restart the process itself too (compose ``restart: unless-stopped``, systemd
``Restart=always``, docs/deploy.md), for what no loop survives: a SIGKILL, the OOM killer.
"""
from __future__ import annotations

import logging
import os
import signal
import time

import redis
from rq import Queue, SimpleWorker, Worker
from rq.serializers import JSONSerializer
from rq.utils import now

log = logging.getLogger(__name__)

#: longest pause between two attempts to reach Redis again
MAX_WAIT_S = 5.0


def lower_priority(increment: int) -> int:
    """Add ``increment`` (>= 0) to this process's niceness; returns the niceness now. A
    failure (a platform without it) is logged, never fatal: it costs priority, not work."""
    if increment < 0:
        raise ValueError(f"WORKER_NICE must be >= 0, got {increment}")
    try:
        return os.nice(increment)
    except OSError as exc:  # pragma: no cover - os.nice(+n) does not need privilege
        log.warning("worker: could not lower priority by %d (%s)", increment, exc)
        return os.nice(0)


def _redis_answers(conn: redis.Redis) -> bool:
    try:
        return bool(conn.ping())
    except redis.exceptions.RedisError:
        return False


class _Stop:
    """SIGTERM / SIGINT while no RQ worker runs (RQ installs its own handlers in ``work``).

    A process forked while it is installed (RQ's scheduler process, forked by ``work`` before
    RQ installs its handlers) inherits it until it installs its own: there a signal must do
    what it does by default, end the process, or the worker's warm shutdown, which SIGTERMs the
    scheduler and joins it without a timeout, waits forever (CI saw the worker hang)."""

    def __init__(self):
        self.requested = False
        self.pid = os.getpid()

    def install(self) -> None:
        self.pid = os.getpid()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._set)

    def _set(self, signum, frame) -> None:
        if os.getpid() != self.pid:  # a forked child: the default action
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self.requested = True


def _wait_for_redis(conn: redis.Redis, stop: _Stop) -> None:
    pause = 0.5
    while not stop.requested and not _redis_answers(conn):
        log.warning("worker: Redis is not answering; trying again in %.1f s", pause)
        time.sleep(pause)
        pause = min(pause * 2, MAX_WAIT_S)


class _StopAware:
    """An RQ worker that honours a SIGTERM / SIGINT caught by `_Stop` before RQ put its own
    handlers in place: ``work`` registers the worker in Redis and starts its scheduler first, and
    a signal in that window used to be recorded by `_Stop` only, so the worker then served until
    SIGKILL (a supervisor's stop that hung; CI saw it under load)."""

    lb_stop: _Stop

    def _install_signal_handlers(self) -> None:
        super()._install_signal_handlers()
        if self.lb_stop.requested:  # RQ's loop checks this before its first dequeue
            self.log.info("Worker %s: stop requested while starting", self.name)
            self._shutdown_requested_date = now()
            self._stop_requested = True


class _Worker(_StopAware, Worker):
    pass


class _SimpleWorker(_StopAware, SimpleWorker):
    pass


def _reap_horse(w: Worker) -> None:
    """Let a job still running in a work-horse finish (it writes its outcome to the database;
    only its bookkeeping in Redis is lost) before a new worker forks another."""
    pid = getattr(w, "horse_pid", 0)
    if pid:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def run_worker(conn: redis.Redis, queue_names: list[str], *, burst: bool = False,
               simple: bool = False) -> None:
    """Work ``queue_names`` (priority order) until stopped; see the module docstring.
    ``simple``: run jobs in this process (warm; what the ``worker`` command does unless
    ``--fork``), else fork a work-horse per job."""
    queues = [Queue(n, connection=conn, serializer=JSONSerializer) for n in queue_names]
    cls = _SimpleWorker if simple else _Worker
    stop = _Stop()
    stop.install()  # until RQ installs its own handlers (see `_StopAware`)
    while True:
        if stop.requested:
            return
        w = None
        try:
            # building the worker already talks to Redis (CLIENT SETNAME): inside the retry, so
            # a worker started while Redis is away waits for it like one that lost it later
            w = cls(queues, connection=conn, serializer=JSONSerializer)
            w.lb_stop = stop
            w.work(burst=burst, with_scheduler=not burst, logging_level="INFO")
        except redis.exceptions.RedisError as exc:  # lost while starting, registering or ending
            log.warning("worker %s: Redis failed (%s: %s)", w.name if w else "(starting)",
                        type(exc).__name__, exc)
        stop.install()  # RQ's handlers would talk to Redis, which may be down
        if (w is not None and w._shutdown_requested_date is not None) or stop.requested:
            return  # SIGTERM / SIGINT: RQ's warm shutdown is done
        if burst and w is not None and _redis_answers(conn):
            return  # the queues are empty
        if w is not None:
            _reap_horse(w)
        if _redis_answers(conn):
            time.sleep(1.0)  # it quit on something else: do not spin if that repeats
        _wait_for_redis(conn, stop)
        if stop.requested:
            return
        log.info("worker: Redis answers again; starting a new worker on %s",
                 ",".join(queue_names))
