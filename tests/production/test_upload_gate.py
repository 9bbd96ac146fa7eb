"""Uploads against real gunicorn (the production settings: gevent workers) and PostgreSQL:

* a 1 GiB upload that is anonymous, carries a wrong token, comes from a user without a team,
  names an unknown benchmark, or fails the CSRF check is refused before its body is read: the
  web workers write less than 1 MiB (``/proc/<pid>/io``, every write: files and sockets);
* a ``Content-Length`` over the route's cap (predictions ``MAX_UPLOAD_MB``, images
  ``MAX_IMAGE_MB``) is a 413 before the file part is read; a chunked body is counted and cut at
  the cap;
* slow clients (dozens of connections sending a byte every half second, in their headers or
  their bodies) do not stop ``/healthz`` from answering at once; a thread-per-request server
  with the same load does stall (the control that shows the test can see it).
"""
from __future__ import annotations

import re
import sys
import time

import pytest
import requests

from tests.production.conftest import PASSWORD, descendants, wait_for
from tests.production.rawhttp import MIB, Trickler, io_written, multipart_head, send_big
from tests.production.services import free_port, wait_port

pytestmark = pytest.mark.slow
GIB = 1 << 30
CAPS = {"MAX_UPLOAD_MB": "5", "MAX_IMAGE_MB": "8"}


def _gunicorn(stack, **env):
    port = free_port()
    proc = stack.start([sys.executable, "-m", "gunicorn", "-c",
                        "python:leaderboard.server.gunicorn_conf", "app:app"],
                       PORT=str(port), WEB_WORKERS="2", **CAPS, **env)
    wait_port(port)

    def up() -> bool:
        try:
            return requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5).ok
        except requests.RequestException:
            return False

    wait_for(up, timeout_s=60, what="gunicorn up", context=stack.logs)
    return proc, port


def _no_team_token(app) -> str:
    from leaderboard.server.services import accounts, tokens

    with app.app_context(), app.extensions["lb_db"].scope() as s:
        user = accounts.register(s, email="loner@example.org", display_name="Loner",
                                 password=PASSWORD)
        return tokens.create_token(s, user, name="t")[1]


def _browser_session(port: int, email: str) -> requests.Session:
    http = requests.Session()
    page = http.get(f"http://127.0.0.1:{port}/login").text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    resp = http.post(f"http://127.0.0.1:{port}/login", allow_redirects=False,
                     data={"email": email, "password": PASSWORD, "csrf_token": csrf})
    assert resp.status_code == 302, resp.text[:300]
    return http


def _member_email(stack) -> str:
    from sqlalchemy import select

    from leaderboard.server.models import User
    with stack.app.extensions["lb_db"].scope() as s:
        return s.scalar(select(User.email).where(User.team_id.is_not(None)).order_by(User.id))


def test_refused_uploads_are_not_read(stack):
    web, port = _gunicorn(stack)
    workers = descendants(web.pid)
    assert workers, "no gunicorn workers"
    auth = f"Authorization: Bearer {stack.token}\r\n"
    fields = {"benchmark": stack.benchmark, "split": "dev", "method_name": "m"}
    # the browser's cookies and User-Agent (a session is bound to it: session_protection)
    cookie = "Cookie: " + "; ".join(
        f"{k}={v}" for k, v in _browser_session(port, _member_email(stack)).cookies.items()) \
        + f"\r\nUser-Agent: {requests.utils.default_user_agent()}\r\n"
    cases = {
        "anonymous form": ("/submit", "", fields, False, 302),
        "anonymous API": ("/api/v1/submissions", "", fields, False, 401),
        "wrong token": ("/api/v1/submissions", "Authorization: Bearer lb_nope\r\n", fields,
                        False, 401),
        "no team": ("/api/v1/submissions", f"Authorization: Bearer {_no_team_token(stack.app)}\r\n",
                    fields, False, 403),
        # a length over the route's cap is refused first; within it, the service's checks
        "unknown benchmark": ("/api/v1/submissions", auth, {**fields, "benchmark": "nosuch"},
                              False, 413),
        "unknown benchmark, 4 MB": ("/api/v1/submissions", auth,
                                    {**fields, "benchmark": "nosuch"}, False, 404),
        "unknown benchmark, chunked": ("/api/v1/submissions", auth,
                                       {**fields, "benchmark": "nosuch"}, True, 404),
        "form without CSRF token": ("/submit", cookie, fields, False, 413),
        "form without CSRF token, 4 MB": ("/submit", cookie, fields, False, 400),
        "form without CSRF token, chunked": ("/submit", cookie, fields, True, 400),
        "over the predictions cap": ("/api/v1/submissions", auth, fields, False, 413),
        "over the image cap": ("/api/v1/submissions", auth, {**fields, "kind": "container"},
                               False, 413),
    }
    data = stack.data_dir
    for name, (path, head, form, chunked, status) in cases.items():
        ctype, prefix, suffix = multipart_head(form)
        before = io_written(workers)
        answer = send_big(port, path, head_fields=head + ctype, body_prefix=prefix,
                          body_suffix=suffix, total=4 * MIB if "4 MB" in name else GIB,
                          chunked=chunked)
        written = io_written(workers) - before
        assert answer.status == status, (name, answer, stack.logs()[-2000:])
        assert written < MIB, (name, written)
        assert answer.sent < 64 * MIB, (name, answer.sent)  # answered long before the end
    assert not list((data / "uploads").glob("*")) if (data / "uploads").exists() else True
    assert not list((data / "images").glob("*")) if (data / "images").exists() else True
    assert stack.rows() == {}


def test_chunked_bodies_are_cut_at_the_cap(stack):
    web, port = _gunicorn(stack)
    workers = descendants(web.pid)
    ctype, prefix, suffix = multipart_head({"benchmark": stack.benchmark, "split": "dev",
                                            "method_name": "m"})
    before = io_written(workers)
    answer = send_big(port, "/api/v1/submissions",
                      head_fields=f"Authorization: Bearer {stack.token}\r\n" + ctype,
                      body_prefix=prefix, body_suffix=suffix, total=GIB, chunked=True)
    written = io_written(workers) - before
    assert answer.status == 413, (answer, stack.logs()[-2000:])
    # the file went to DATA_DIR up to the 5 MB cap (then deleted), not to 1 GiB
    assert 5 * MIB <= written < 8 * MIB, written
    assert answer.sent < 64 * MIB
    assert not list((stack.data_dir / "uploads").glob("*"))
    assert stack.rows() == {}


def _healthz_latency(port: int, n: int = 8) -> float:
    worst = 0.0
    for _ in range(n):
        started = time.monotonic()
        try:
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=3).raise_for_status()
            worst = max(worst, time.monotonic() - started)
        except requests.RequestException:
            worst = max(worst, 3.0)
        time.sleep(0.2)
    return worst


def _slow_clients(port: int, n: int) -> list[Trickler]:
    body = b"email=a%40b.org&password=" + b"x" * 400
    head = (b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-"
                 b"urlencoded\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    slow_head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"y" * 400 + b"\r\n\r\n"
    clients = [Trickler(port, slow_head, 0.5) if i % 2 else
               Trickler(port, body, 0.5, fast=head) for i in range(n)]
    for client in clients:
        client.start()
    return clients


@pytest.mark.parametrize("worker_class, n, stalls", [("gthread", 16, True), ("gevent", 64, False)])
def test_slow_clients_do_not_starve_health_checks(stack, worker_class, n, stalls):
    _, port = _gunicorn(stack, WEB_WORKER_CLASS=worker_class, WEB_THREADS="4")
    assert _healthz_latency(port, 3) < 1.0
    clients = _slow_clients(port, n)
    try:
        time.sleep(2.0)  # every slow client is connected and holding what it can
        worst = _healthz_latency(port)
    finally:
        for client in clients:
            client.stop.set()
    if stalls:
        assert worst >= 3.0, f"{worker_class}: the control did not stall ({worst:.2f} s)"
    else:
        assert worst < 1.0, f"{worker_class}: /healthz took {worst:.2f} s with {n} slow clients"


def test_a_stalled_upload_body_times_out(stack):
    import socket

    _, port = _gunicorn(stack, CLIENT_BODY_TIMEOUT_S="2")
    ctype, prefix, _ = multipart_head({"benchmark": stack.benchmark, "split": "dev",
                                       "method_name": "m"})
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(f"POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     f"{stack.token}\r\n{ctype}Content-Length: {len(prefix) + MIB}\r\n\r\n"
                     .encode() + prefix + b'{"id": "x"')
        started = time.monotonic()
        reply = sock.recv(65536)  # then nothing more: the server gives up after 2 s
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert 1.5 < time.monotonic() - started < 10
    assert not list((stack.data_dir / "uploads").glob("*"))
    assert stack.rows() == {}
