"""gunicorn's settings for the web process: ``gunicorn -c python:leaderboard.server.gunicorn_conf
app:app`` (what `docker/boot.sh` runs). Environment variables override each one.

**Slow clients.** A thread-per-request worker (``sync``, ``gthread``) is held for as long as a
client takes to send its request: 16 connections sending a byte every 2 s kept every thread of
a 2 x 8 gthread server busy, and ``/healthz`` timed out. The default worker class here is
``gevent``: each connection is a greenlet parked on its socket, so thousands of slow clients
cost memory, not the workers the health check needs (``worker_connections`` per worker caps
them). Psycopg 3 (>= 3.1.14), redis-py and RQ's enqueue cooperate with gevent's monkey-patching;
CPU-bound work never runs in the web process (scoring, container runs and judging are queue
jobs; image inspection at upload is bounded by the image cap). An upload's body additionally
has an idle timeout (``CLIENT_BODY_TIMEOUT_S``, `leaderboard.server.web.uploads`).

The reverse proxy in front (docs/deploy.md) stays required in production: it buffers request
bodies, caps their size (``client_max_body_size``) and times out slow ones
(``client_body_timeout``, ``client_header_timeout``) before gunicorn sees them.

**Refused bodies.** An answer to a refused request body closes its connection
(`leaderboard.server.web.hardening.close_refused`): `post_request` then stops sending (FIN),
reads and discards what the client still has in flight for at most ``LINGER_S`` (0.5 s, and
``LINGER_BYTES``), so the client reads the answer rather than a reset, and gunicorn closes the
socket: a refused 1 GiB upload costs half a second of a greenlet, not the minute it takes to
read it.

**Garbage collection.** Each worker freezes its heap once the application is loaded
(`post_worker_init`: ``gc.freeze()``): the modules, the app and its configuration, about 154,000
long-lived objects, move to a permanent generation that a full collection no longer
walks. Issue 37 measured a full collection inside ~1 in 6 cold matrix-page requests (~200 ms
of a 1.4 MB view's objects plus the app's); after the freeze a full pass walks only what the
requests made.

=======================  =======================================================================
``PORT``                 8000
``WEB_WORKER_CLASS``     ``gevent`` (``gthread`` is the fallback if gevent cannot be used)
``WEB_WORKERS``          4 processes
``WEB_CONNECTIONS``      1000 connections per gevent worker
``WEB_THREADS``          8 threads per gthread worker (ignored by gevent)
``WEB_TIMEOUT_S``        300: a worker silent this long is restarted
``FORWARDED_ALLOW_IPS``  127.0.0.1: the proxy whose X-Forwarded-* headers are trusted
``WEB_ACCESS_LOG``       ``-`` (stdout); empty: no access log
=======================  =======================================================================
"""
import gc
import os
import socket
import time

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
worker_class = os.environ.get("WEB_WORKER_CLASS", "gevent")
workers = int(os.environ.get("WEB_WORKERS", "4"))
worker_connections = int(os.environ.get("WEB_CONNECTIONS", "1000"))
threads = int(os.environ.get("WEB_THREADS", "8"))
timeout = int(os.environ.get("WEB_TIMEOUT_S", "300"))
graceful_timeout = 30
keepalive = 5
# request line and headers: gunicorn's defaults, stated (anything longer is a 400)
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190
max_requests = int(os.environ.get("WEB_MAX_REQUESTS", "5000"))
max_requests_jitter = 500
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
# WEB_ACCESS_LOG empty: no access log (the benches: a log line per request is not what they time)
accesslog = os.environ.get("WEB_ACCESS_LOG", "-") or None
errorlog = "-"
# no runtime-management socket (gunicornc): nothing to attack, nothing shared between instances
control_socket_disable = True

LINGER_S = 0.5
LINGER_BYTES = 16 * 1024 * 1024


def post_request(worker, req, environ, resp):
    """Lingering close of a connection whose answer refused its body (see the docstring)."""
    if not environ.get("lb.close_connection"):
        return
    req.must_close = True  # never parse (drain) another request on this connection
    sock = environ.get("gunicorn.socket")
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + LINGER_S
        read = 0
        while read < LINGER_BYTES:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            chunk = sock.recv(256 * 1024)
            if not chunk:
                break
            read += len(chunk)
    except OSError:
        pass  # the client went first: nothing left to do


def post_worker_init(worker):
    """Freeze what the worker loaded (see the docstring): later full collections skip it."""
    gc.collect()  # what loading left unreachable is freed, not frozen
    gc.freeze()
