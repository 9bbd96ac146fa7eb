"""A stop signal caught before RQ installs its handlers still stops the worker (CI flake, stop 41).

``Worker.work`` registers the worker and starts its scheduler before it installs its signal
handlers; a SIGTERM in that window used to land in the wrapper's handler only, and the worker then
served until SIGKILL. The window is made certain here: the stop is requested before ``work``.
"""
from __future__ import annotations

import threading
import time

import redis
from rq import Queue
from rq.serializers import JSONSerializer

from leaderboard.server.jobs import worker as worker_mod


def test_stop_requested_before_rq_handlers_ends_the_worker(redis_url):
    conn = redis.Redis.from_url(redis_url)
    try:
        w = worker_mod._SimpleWorker([Queue("scoring", connection=conn,
                                            serializer=JSONSerializer)],
                                     connection=conn, serializer=JSONSerializer)
        w.lb_stop = worker_mod._Stop()
        w.lb_stop.requested = True
        stuck = threading.Timer(20, lambda: conn.lpush("rq:queue:scoring", "wake"))
        stuck.start()  # were the stop lost, the blocking dequeue would wait for this
        t0 = time.monotonic()
        try:
            w.work(burst=False, with_scheduler=True, logging_level="WARNING")
        finally:
            stuck.cancel()
        assert time.monotonic() - t0 < 10
        assert w._shutdown_requested_date is not None
        assert not worker_mod.Worker.all(connection=conn)  # it unregistered on the way out
    finally:
        conn.close()


def test_a_child_forked_under_the_wrappers_handler_still_dies_on_sigterm():
    """RQ forks its scheduler process before installing its handlers; the worker's warm shutdown
    SIGTERMs that child and joins it without a timeout. A child that had not yet put its own
    handlers in place ran the wrapper's handler, which only noted the request: the join, and the
    worker, waited forever."""
    import multiprocessing
    import os
    import signal

    stop = worker_mod._Stop()
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    stop.install()
    try:
        child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(30,))
        child.start()
        time.sleep(0.2)
        os.kill(child.pid, signal.SIGTERM)
        child.join(timeout=10)
        alive = child.is_alive()
        if alive:
            child.kill()
            child.join()
        assert not alive, "the child ignored SIGTERM"
        assert child.exitcode == -signal.SIGTERM
        assert not stop.requested  # the parent's own state is untouched
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
