"""The reverse-proxy configuration of the deploy guide (``docker/nginx-leaderboard.conf``), run in
a real nginx in front of real gunicorn: body limits per location, the client header and body
timeouts, uploads streamed (never buffered to the proxy's disk) and refused before they are read,
and slow clients held by nginx while ``/healthz`` answers."""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

from tests.production.conftest import REPO, _missing, descendants
from tests.production.rawhttp import MIB, Trickler, io_written, multipart_head, send_big
from tests.production.services import free_port, wait_port
from tests.production.test_upload_gate import _gunicorn

pytestmark = pytest.mark.slow
CONF = REPO / "docker" / "nginx-leaderboard.conf"
GIB = 1 << 30


def _site(upstream: int, port: int) -> str:
    """The committed file with its TLS lines dropped, listening on ``port``, its upstream on
    ``upstream``, and the timeouts short enough for a test (10 s and 60 s become 2 s)."""
    lines = [line for line in CONF.read_text().splitlines() if not line.rstrip().endswith("# TLS")]
    text = "\n".join(lines)
    text = text.replace("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream};")
    text = text.replace("server {\n", f"server {{\n    listen 127.0.0.1:{port};\n", 1)
    for directive in ("client_header_timeout 10s", "client_body_timeout 60s"):
        assert directive in text, directive
        text = text.replace(directive, directive.split()[0] + " 2s")
    return text


@pytest.fixture
def proxy(stack, tmp_path):
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        _missing("nginx is not installed (scripts/start-services.sh installs nginx-light)")
    web, upstream = _gunicorn(stack)
    port = free_port()
    root = tmp_path / "nginx"
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (root / sub).mkdir(parents=True)
    (root / "site.conf").write_text(_site(upstream, port))
    (root / "nginx.conf").write_text(f"""
daemon off; master_process off; worker_processes 1;
pid {root}/nginx.pid; error_log {root}/error.log info;
events {{ worker_connections 1024; }}
http {{
    access_log {root}/access.log;
    client_body_temp_path {root}/body; proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi; uwsgi_temp_path {root}/uwsgi; scgi_temp_path {root}/scgi;
    include {root}/site.conf;
}}
""")
    check = subprocess.run([nginx, "-t", "-p", str(root), "-c", str(root / "nginx.conf")],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    proc = subprocess.Popen([nginx, "-p", str(root), "-c", str(root / "nginx.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    yield {"port": port, "root": root, "web": web, "upstream": upstream}
    proc.terminate()
    proc.wait(timeout=10)


def _disk(root: Path) -> int:
    return sum(f.stat().st_size for f in (root / "body").rglob("*") if f.is_file())


def test_body_limits_and_unbuffered_refusals(stack, proxy):
    port, root = proxy["port"], proxy["root"]
    workers = descendants(proxy["web"].pid)
    # any other body over 1 MiB: nginx's 413, gunicorn never sees it
    resp = requests.post(f"http://127.0.0.1:{port}/login", data={"password": "x" * (2 * MIB)})
    assert resp.status_code == 413 and "nginx" in resp.text
    fields = {"benchmark": stack.benchmark, "split": "dev", "method_name": "m"}
    ctype, prefix, suffix = multipart_head(fields)
    # over the upload location's limit: nginx refuses from the Content-Length
    answer = send_big(port, "/api/v1/submissions", head_fields=ctype, body_prefix=prefix,
                      body_suffix=suffix, total=21 * GIB)
    assert answer.status == 413 and answer.sent < 64 * MIB
    # a 1 GiB anonymous upload streams through to the app, which refuses it unread
    before = io_written(workers)
    answer = send_big(port, "/api/v1/submissions", head_fields=ctype, body_prefix=prefix,
                      body_suffix=suffix, total=GIB)
    assert answer.status == 401, (answer, stack.logs()[-1500:])
    assert answer.sent < 64 * MIB and io_written(workers) - before < MIB
    assert _disk(root) == 0  # nothing buffered on the proxy's disk
    # an accepted upload goes through whole (streamed, chunked or not)
    body = b"".join(f'{{"id": "{i}", "score": 0.5}}\n'.encode() for i in range(10))
    resp = requests.post(f"http://127.0.0.1:{port}/api/v1/submissions",
                         headers={"Authorization": f"Bearer {stack.token}"},
                         data=fields, files={"file": ("p.jsonl", body)})
    assert resp.status_code == 202, resp.text
    assert _disk(root) == 0
    assert requests.get(f"http://127.0.0.1:{port}/metrics").status_code == 404


def test_client_header_and_body_timeouts(stack, proxy):
    port = proxy["port"]
    never_finish_headers = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
    never_finish_body = (b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
                         b"Content-Type: application/x-www-form-urlencoded\r\n\r\nemail=")
    for request in (never_finish_headers, never_finish_body):
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(request)
            started = time.monotonic()
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
            elapsed = time.monotonic() - started
        assert 1.5 < elapsed < 10, elapsed  # the 2 s timeouts of the test configuration
        assert reply == b"" or reply.startswith(b"HTTP/1.1 408"), reply[:100]


def test_slow_clients_wait_in_nginx(stack, proxy):
    port = proxy["port"]
    head = (b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded"
            b"\r\nContent-Length: 500\r\n\r\n")
    clients = [Trickler(port, b"y" * 500, 0.5, fast=head) for _ in range(48)]
    for client in clients:
        client.start()
    try:
        time.sleep(1.0)
        worst = 0.0
        for _ in range(8):
            started = time.monotonic()
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=3).raise_for_status()
            worst = max(worst, time.monotonic() - started)
            time.sleep(0.2)
    finally:
        for client in clients:
            client.stop.set()
    assert worst < 1.0, worst
