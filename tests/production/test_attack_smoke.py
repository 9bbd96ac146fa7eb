"""A short attack smoke (issue 24) against real gunicorn (the product's config, gevent workers)
and the deploy guide's nginx configuration in front of it (Debian's nginx), on loopback:

* a refused 1 GiB upload: answered, and its connection closed within 1 s (no draining);
* oversized bodies (a 21 GiB upload, a 2 MiB login form) and slow bodies;
* header floods (too many headers, one huge header);
* big, negative and malformed ids on the routes that take one: 400/404, never a 5xx;
* a compare flood from many threads: 429s with ``Retry-After``, while ``/healthz`` (probed from a
  process of its own) answers in under 50 ms at least 9 times in 10 and never near a second.

Bounded: one stack, two scored submissions, every check on both fronts (gunicorn directly and
nginx), ~30 s in all.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
import requests

from tests.production.conftest import REPO
from tests.production.rawhttp import MIB, Trickler, multipart_head
from tests.production.test_reverse_proxy import proxy  # noqa: F401 - a fixture

pytestmark = pytest.mark.slow
GIB = 1 << 30
HEALTHZ_S = 0.050


@pytest.fixture
def scored(stack, predictions, syncred_pack, tmp_path):
    """Two scored public submissions on the test split (what the compare routes need)."""
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack

    other = tmp_path / "other.jsonl"
    write_baseline(load_pack(syncred_pack), "test", "random", other, seed=7)
    a = stack.submit(predictions["test"], method="a")
    b = stack.submit(other, method="b")
    stack.drain(timeout_s=60)
    assert stack.status(a) == stack.status(b) == "scored", stack.logs()[-2000:]
    return a, b


def _refused_upload(port: int, benchmark: str) -> tuple[bytes, float]:
    """An anonymous 1 GiB upload: headers and a little body, then nothing more is sent.
    Returns (what came back, seconds from the answer's first byte to the connection's end)."""
    ctype, prefix, _ = multipart_head({"benchmark": benchmark, "split": "test",
                                       "method_name": "m"})
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\n{ctype}"
                     f"Content-Length: {GIB}\r\n\r\n".encode() + prefix + bytes(64 * 1024))
        reply = sock.recv(65536)
        answered = time.monotonic()
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except ConnectionResetError:
            pass
        return reply, time.monotonic() - answered


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        reply = b""
        try:
            while chunk := sock.recv(65536):
                reply += chunk
                if b"\r\n\r\n" in reply:
                    break
        except ConnectionResetError:
            pass
        return reply


def _status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.") else 0


def _load(mode: str, port: int, start: float, seconds: float, *paths: str):
    return subprocess.Popen([sys.executable, "-m", "tests.production.flood", mode, str(port),
                             str(start), str(seconds), *paths], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)


def _flood(port: int, benchmark: str, a: int, b: int, *, seconds: float,
           probe: bool = False) -> tuple[list, list[float]]:
    """Comparisons (both orders, the page and the API) from 12 threads of another process,
    and (``probe``) the ``/healthz`` times of a third process over the same window."""
    paths = [f"/api/v1/compare/{benchmark}/test?a={a}&b={b}",
             f"/api/v1/compare/{benchmark}/test?a={b}&b={a}",
             f"/compare/{benchmark}/test?a={a}&b={b}"]
    start = time.time() + 1.5  # after both processes have started and imported
    procs = [_load("flood", port, start, seconds, *paths)]
    if probe:
        procs.append(_load("probe", port, start, seconds))
    outs = [json.loads(p.communicate(timeout=seconds + 60)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    return outs[0], (outs[1] if probe else [])


def _quiet(port: int, seconds: float) -> list[float]:
    proc = _load("probe", port, time.time() + 1.0, seconds)
    return json.loads(proc.communicate(timeout=seconds + 60)[0])


def test_attack_smoke(stack, scored, proxy):  # noqa: F811
    a, b = scored
    fronts = {"gunicorn": proxy["upstream"], "nginx": proxy["port"]}
    bench = stack.benchmark
    for name, port in fronts.items():
        # a refused 1 GiB upload ends its connection at once
        reply, closing = _refused_upload(port, bench)
        assert _status(reply) == 401, (name, reply[:300])
        assert b"connection: close" in reply.lower(), (name, reply[:300])
        assert closing < 1.0, (name, closing)

        # oversized bodies: from the Content-Length, before the body
        ctype, prefix, _ = multipart_head({"benchmark": bench, "split": "test",
                                           "method_name": "m"})
        huge = _raw(port, f"POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: "
                          f"Bearer {stack.token}\r\n{ctype}Content-Length: {21 * GIB}\r\n\r\n"
                    .encode() + prefix)
        assert _status(huge) == 413, (name, huge[:300])
        form = requests.post(f"http://127.0.0.1:{port}/login", data={"password": "x" * (2 * MIB)})
        assert form.status_code == 413, (name, form.status_code)

        # header floods: too many headers, one huge header; then the server still answers
        many = b"".join(b"X-H%d: v\r\n" % i for i in range(150))
        assert _status(_raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")) \
            in (400, 431, 494), name
        big = b"X-Big: " + b"a" * 64 * 1024 + b"\r\n"
        assert _status(_raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + big + b"\r\n")) \
            in (400, 431, 494), name

        # big, negative and malformed ids: never a server error
        for path in (f"/api/v1/submissions/{10**30}", "/api/v1/submissions/-1",
                     f"/submissions/{2**63}", f"/api/v1/compare/{bench}/test?a={10**30}&b={a}",
                     f"/api/v1/compare/{bench}/test?a=1e9&b={a}",
                     f"/api/v1/boards/{bench}/detection/test?page={10**30}",
                     f"/api/v1/boards/{bench}/detection/test?per_page=-5",
                     f"/benchmarks/{'x' * 5000}", f"/teams/{10**30}"):
            got = requests.get(f"http://127.0.0.1:{port}{path}", timeout=10)
            assert got.status_code in (400, 401, 404, 414), (name, path, got.status_code)

    # slow bodies and headers held open while everything above and below runs
    slow = [Trickler(port, b"y" * 200, 0.5, fast=b"POST /login HTTP/1.1\r\nHost: x\r\nContent-"
                     b"Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\n")
            for port in fronts.values() for _ in range(16)]
    slow += [Trickler(port, b"X-Slow: " + b"z" * 100, 0.5, fast=b"GET /healthz HTTP/1.1\r\n")
             for port in fronts.values() for _ in range(8)]
    for client in slow:
        client.start()
    try:
        for name, port in fronts.items():
            # a running server has imported the comparison's modules and compiled its page in
            # each worker already; the flood measures what a comparison costs after that
            _flood(port, bench, a, b, seconds=0.2)
            quiet = _quiet(port, 1.0)  # the same probe without the flood: what the host allows
            answers, times = _flood(port, bench, a, b, seconds=3.0, probe=True)
            codes = [c for c, _ in answers]
            assert set(codes) <= {200, 429}, (name, sorted(set(codes)))
            assert codes.count(429) > len(codes) // 2, (name, codes.count(429), len(codes))
            assert all(r is not None and 0 < int(r) <= 60 for c, r in answers if c == 429), name
            times.sort()
            # 9 in 10 under 50 ms, none near a second: on a shared 2-vCPU host (load average
            # 10-13) the quiet probe's worst is ~20 ms and a flood adds one or two slower
            # answers in 50 from CPU scheduling alone (issue 24's flood: 0.54 s)
            slow_share = sum(t >= HEALTHZ_S for t in times) / max(1, len(times))
            assert len(times) >= 20 and slow_share <= 0.1 and times[-1] < 1.0, (
                name, len(codes), "flood", [round(t, 3) for t in times[-6:]], "quiet",
                [round(t, 3) for t in sorted(quiet)[-6:]])
    finally:
        for client in slow:
            client.stop.set()
    # the nginx timeouts (2 s here) ended the slow bodies; nothing was left broken
    assert requests.get(f"http://127.0.0.1:{fronts['nginx']}/healthz", timeout=3).ok
    assert "Traceback" not in stack.logs(), stack.logs()[-3000:]
