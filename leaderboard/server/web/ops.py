"""Operations endpoints: ``/healthz`` (process up), ``/readyz`` (dependencies reachable) and
``/metrics`` (Prometheus text exposition format).

* ``/healthz`` touches nothing: a load balancer or Docker health check that restarts the container
  when it fails must not restart a healthy web process because PostgreSQL is down.
* ``/readyz`` runs ``SELECT 1`` on the database and ``PING`` on Redis (when ``REDIS_URL`` is set;
  without it jobs run inline and Redis is not a dependency) and answers 503 naming each failed one,
  so a load balancer stops routing to a web host that cannot serve.
* ``/metrics`` is collected at scrape time from the shared state (Redis for queues and for the
  submission counters kept as commits happen, `leaderboard.server.ops_counters`; the database for
  in-flight submissions, and for everything without Redis), so every gunicorn worker and every
  host answers the same figures, and a scrape never reads the finished submissions (issue 16);
  see `OpsCollector` for each family. Board-cache hits and misses are counted per process
  by `leaderboard.server.boards.cache.BoardCache`; after each request this module adds the process's new
  counts to two Redis counters, so the figures are cluster-wide when Redis is configured and
  per-process otherwise.

No endpoint here needs authentication: none reveals anything beyond counts. Deployments that do not
want ``/metrics`` public block it at the reverse proxy (docs/deploy.md).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import redis
from flask import Blueprint, Flask, Response, current_app, jsonify
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from sqlalchemy import text

from leaderboard.server import ops_counters as counters
from leaderboard.server.db import get_db
from leaderboard.server.jobs.queue import SCORING_QUEUE
from leaderboard.server.models import STATUSES

log = logging.getLogger(__name__)

bp = Blueprint("ops", __name__)

#: queues always reported (even before their first job): where each runs is in docs/deploy.md
KNOWN_QUEUES = (SCORING_QUEUE, "gpu", "judge")
CACHE_HITS_KEY = "lb:metrics:board_cache:hits"
CACHE_MISSES_KEY = "lb:metrics:board_cache:misses"
_PROBE_TIMEOUT_S = 2.0
_lock = threading.Lock()


def _probe_redis(app: Flask) -> redis.Redis | None:
    """A Redis client with short timeouts (probes must answer fast), or None without REDIS_URL."""
    url = app.config.get("REDIS_URL")
    if not url:
        return None
    conn = app.extensions.get("lb_ops_redis")
    if conn is None:
        conn = app.extensions["lb_ops_redis"] = redis.Redis.from_url(
            url, socket_connect_timeout=_PROBE_TIMEOUT_S, socket_timeout=_PROBE_TIMEOUT_S)
    return conn


def check_database(app: Flask) -> str:
    """``"ok"`` or a short reason (the exception class: never the URL, which holds a password)."""
    try:
        with get_db(app).engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
        log.warning("readyz database check failed: %s", type(exc).__name__)
        return f"unreachable ({type(exc).__name__})"
    return "ok"


def check_redis(app: Flask) -> str:
    """``"ok"``, ``"not configured"`` (inline jobs) or a short reason."""
    conn = _probe_redis(app)
    if conn is None:
        return "not configured"
    try:
        conn.ping()
    except redis.exceptions.RedisError as exc:
        log.warning("readyz redis check failed: %s", type(exc).__name__)
        return f"unreachable ({type(exc).__name__})"
    return "ok"


@bp.get("/healthz")
def healthz():
    """The process is up and serving requests (no dependency is touched)."""
    return jsonify({"status": "ok"})


@bp.get("/readyz")
def readyz():
    """Database and Redis reachable: 200, else 503 with ``failed`` naming each unreachable one."""
    app = current_app._get_current_object()
    checks = {"database": check_database(app), "redis": check_redis(app)}
    failed = [name for name, state in checks.items() if state not in ("ok", "not configured")]
    body = {"status": "unavailable" if failed else "ok", "checks": checks, "failed": failed}
    resp = jsonify(body)
    resp.status_code = 503 if failed else 200
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/metrics")
def metrics():
    """Prometheus text format (version 0.0.4); see `OpsCollector` for the families."""
    _flush_cache_counts(force=True)  # this process's latest reads count in this scrape
    registry = CollectorRegistry(auto_describe=False)
    registry.register(OpsCollector(current_app._get_current_object()))
    resp = Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)
    resp.headers["Cache-Control"] = "no-store"
    return resp


#: a process adds its board-cache counts to Redis at most this often (issue 25: a Redis
#: round trip on every page was a large part of a cached page's cost); /metrics flushes first
CACHE_COUNTS_EVERY_S = 1.0


@bp.after_app_request
def _publish_cache_counts(response):
    """Add this process's new board-cache hits/misses to the cluster-wide Redis counters
    (at most once per ``CACHE_COUNTS_EVERY_S``: other processes' counts lag that much)."""
    _flush_cache_counts(force=False)
    return response


def _flush_cache_counts(*, force: bool) -> None:
    import time
    app = current_app._get_current_object()
    cache = app.extensions.get("lb_board_cache")
    if cache is None:
        return
    state = app.extensions.setdefault("lb_ops_cache_seen", {"hits": 0, "misses": 0,
                                                            "at": 0.0})
    now = time.monotonic()
    if not force and now - state["at"] < CACHE_COUNTS_EVERY_S:
        return
    conn = _probe_redis(app)
    if conn is None:
        return
    with _lock:
        hits, misses = cache.hits - state["hits"], cache.misses - state["misses"]
        state["at"] = now
        if hits <= 0 and misses <= 0:
            return
        try:
            pipe = conn.pipeline(transaction=False)
            pipe.incrby(CACHE_HITS_KEY, max(hits, 0))
            pipe.incrby(CACHE_MISSES_KEY, max(misses, 0))
            pipe.execute()
        except redis.exceptions.RedisError:
            return  # kept for the next request; a Redis outage must not fail pages
        state["hits"] += max(hits, 0)
        state["misses"] += max(misses, 0)


class OpsCollector:
    """The metric families, read at scrape time. A dependency that is down is reported through
    ``lb_dependency_up`` and its families are left out, instead of failing the scrape.

    ``lb_queue_jobs{queue,state}``  jobs per RQ queue: queued (waiting), started, scheduled,
                                    deferred, failed (RQ's registries).
    ``lb_submissions{status,kind}`` submissions by status (in flight: an indexed query; scored
                                    and failed: the counters).
    ``lb_scoring_duration_seconds{outcome}``  histogram of finished runs' time
                                    (``finished_at - started_at``; outcome scored or failed): job
                                    durations and outcomes, one observation per run that finished
                                    (a rescore adds one), so ``rate()`` works.
    ``lb_board_cache_{hits,misses}_total``  board-cache lookups (cluster-wide with Redis).
    ``lb_dependency_up{dependency}``  1 if reachable at scrape time.
    """

    def __init__(self, app: Flask):
        self.app = app

    def collect(self) -> Iterator:
        up = GaugeMetricFamily("lb_dependency_up", "1 if the dependency answered this scrape",
                               labels=["dependency"])
        db_ok = check_database(self.app) == "ok"
        up.add_metric(["database"], 1.0 if db_ok else 0.0)
        conn = _probe_redis(self.app)
        redis_ok = conn is not None and check_redis(self.app) == "ok"
        if conn is not None:
            up.add_metric(["redis"], 1.0 if redis_ok else 0.0)
        yield up
        if redis_ok:
            yield from self._queues(conn)
        if db_ok:
            yield from self._submissions(conn if redis_ok else None)
        yield from self._board_cache(conn if redis_ok else None)

    def _queues(self, conn: redis.Redis) -> Iterator:
        from rq import Queue
        from rq.serializers import JSONSerializer

        fam = GaugeMetricFamily("lb_queue_jobs", "Jobs per RQ queue and state",
                                labels=["queue", "state"])
        try:
            names = set(KNOWN_QUEUES) | {q.name for q in Queue.all(connection=conn,
                                                                    serializer=JSONSerializer)}
            for name in sorted(names):
                q = Queue(name, connection=conn, serializer=JSONSerializer)
                counts = {"queued": q.count, "started": q.started_job_registry.count,
                          "scheduled": q.scheduled_job_registry.count,
                          "deferred": q.deferred_job_registry.count,
                          "failed": q.failed_job_registry.count}
                for state, n in counts.items():
                    fam.add_metric([name, state], float(n))
        except redis.exceptions.RedisError:
            log.warning("metrics: queue depths unavailable", exc_info=True)
            return
        yield fam

    def _submissions(self, conn: redis.Redis | None) -> Iterator:
        """In-flight counts from an indexed query; finished counts and durations from the
        counters kept as commits happen (`leaderboard.server.ops_counters`) with Redis, else
        aggregated in the database. Never reads the finished rows themselves."""
        by_status = GaugeMetricFamily("lb_submissions", "Submissions by status and kind",
                                      labels=["status", "kind"])
        hist = HistogramMetricFamily("lb_scoring_duration_seconds",
                                     "Run time of finished submissions (started to finished)",
                                     labels=["outcome"])
        db = get_db(self.app)
        finished = None
        if conn is not None:
            try:
                finished = counters.ensure_initialised(conn, db)
            except redis.exceptions.RedisError:
                log.warning("metrics: submission counters unavailable in Redis; reading the "
                            "database", exc_info=True)
            except Exception:  # noqa: BLE001 - the database failed during an initialisation
                log.warning("metrics: submission counters not initialised", exc_info=True)
                return
        try:
            with db.scope() as session:
                counts = counters.in_flight(session)
                if finished is None:
                    finished = counters.from_database(session)
        except Exception:  # noqa: BLE001 - the database went away between probe and query
            log.warning("metrics: submission counts unavailable", exc_info=True)
            return
        counts.update({sk: n for sk, n in finished.counts.items() if n})
        kinds = sorted({k for _, k in counts} | {"predictions"})
        for status in STATUSES:
            for kind in kinds:
                by_status.add_metric([status, kind], float(counts.get((status, kind), 0)))
        yield by_status
        for outcome in counters.FINISHED:
            h = finished.durations[outcome]
            buckets = [(_bound(b), v) for b, v in zip(counters.DURATION_BUCKETS, h.buckets)]
            buckets.append(("+Inf", h.buckets[-1]))
            hist.add_metric([outcome], buckets, sum_value=h.total)
        yield hist

    def _board_cache(self, conn: redis.Redis | None) -> Iterator:
        hits = CounterMetricFamily("lb_board_cache_hits", "Board cache hits (cluster-wide "
                                   "with Redis, else this process)")
        misses = CounterMetricFamily("lb_board_cache_misses", "Board cache misses (cluster-wide "
                                     "with Redis, else this process)")
        if conn is not None:
            try:
                h, m = conn.mget([CACHE_HITS_KEY, CACHE_MISSES_KEY])
            except redis.exceptions.RedisError:
                return
            hits.add_metric([], float(h or 0))
            misses.add_metric([], float(m or 0))
        else:
            cache = self.app.extensions.get("lb_board_cache")
            hits.add_metric([], float(cache.hits if cache else 0))
            misses.add_metric([], float(cache.misses if cache else 0))
        yield hits
        yield misses


def _bound(b: float) -> str:
    return repr(float(b))
