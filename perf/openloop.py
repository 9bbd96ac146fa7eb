"""An open-loop HTTP load generator: requests at a fixed rate, whatever the server answers.

    .venv/bin/python perf/openloop.py http://127.0.0.1:8000/api/v1/boards/loki/detection/test \\
        --rate 800 --duration 10 [--procs 2] [--trace trace.csv]

``wrk`` and ``hey`` keep N connections busy (a closed loop): when the server stalls, they stop
sending, and the stall shows as one slow request instead of every request a user would have
sent meanwhile ("coordinated omission"). Here request *i* is due at ``start + i / rate``; it is
sent then on an idle keep-alive connection (a new one is opened when all are busy), and its
latency is measured **from the time it was due**, not from when it went out, so the generator's
own lateness counts against the server's numbers rather than hiding them. The generator reports
that lateness (``lag_p99_ms``, ``lag_max_ms``, ``late_sends``: sent more than 5 ms after due),
so a run where it could not keep up is visible as such.

``--procs`` splits the schedule between processes (request *i* goes to process ``i % procs``;
CLOCK_MONOTONIC is shared by every process on Linux), for rates one Python event loop cannot
drive. Prints one JSON line. `run_openloop` is the same from Python (perf/bench_scale.py).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import sys
import time
from urllib.parse import urlsplit

LATE_MS = 5.0


class _Client(asyncio.Protocol):
    """One keep-alive connection; answers are parsed as they arrive (no task per request:
    a generator that costs less CPU per request leaves more of a small machine to the server)."""

    def __init__(self, gen: "_Gen"):
        self.gen, self.buf, self.transport = gen, bytearray(), None
        self.current = None   # (request index, due time, retried) in flight
        self.used = False     # has answered before: a failure may be the server's idle close

    def connection_made(self, transport) -> None:
        self.transport = transport
        if self.current is not None:
            transport.write(self.gen.requests[self.current[0] % len(self.gen.requests)])

    def send(self, i: int, due: float, retried: bool = False) -> None:
        self.current = (i, due, retried)
        if self.transport is not None:
            self.transport.write(self.gen.requests[i % len(self.gen.requests)])

    def data_received(self, data: bytes) -> None:
        self.buf += data
        end = self.buf.find(b"\r\n\r\n")
        if end < 0 or self.current is None:
            return
        head = bytes(self.buf[:end]).decode("latin-1").lower()
        status = int(head.split(None, 2)[1])
        length = None
        for line in head.split("\r\n")[1:]:
            if line.startswith("content-length:"):
                length = int(line.split(":", 1)[1])
        if length is None:
            self.gen.failed(self, "no_content_length")
            return
        if len(self.buf) < end + 4 + length:
            return
        del self.buf[:end + 4 + length]
        i, due, _ = self.current
        self.current = None
        self.used = True
        self.gen.done(self, due, status, keep="connection: close" not in head)

    def connection_lost(self, exc) -> None:
        self.transport = None
        if self.current is not None:
            i, due, retried = self.current
            self.current = None
            if self.used and not self.buf and not retried:
                self.gen.fire(i, due, retried=True)  # the server closed an idle connection
            else:
                self.gen.error(type(exc).__name__ if exc else "closed")
        self.gen.forget(self)


class _Gen:
    def __init__(self, loop, host: str, port: int, paths: list[str], start: float):
        self.loop, self.host, self.port, self.start = loop, host, port, start
        self.requests = [f"GET {p} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
                         for p in paths]
        self.idle: list[_Client] = []
        self.all: set[_Client] = set()
        self.opened = 0
        self.lat: list[float] = []
        self.due_at: list[float] = []
        self.lag: list[float] = []
        self.errors: dict[str, int] = {}
        self.in_flight = 0

    def fire(self, i: int, due: float, retried: bool = False) -> None:
        if not retried:
            self.lag.append(1000 * (time.monotonic() - due))
            self.in_flight += 1
        if self.idle:
            self.idle.pop().send(i, due, retried)
            return
        client = _Client(self)
        client.current = (i, due, retried)
        self.all.add(client)
        self.opened += 1
        task = self.loop.create_task(self.loop.create_connection(lambda: client, self.host,
                                                                 self.port))
        task.add_done_callback(lambda t, c=client: self._connected(t, c))

    def _connected(self, task, client: _Client) -> None:
        if task.exception() is not None:
            client.current = None
            self.forget(client)
            self.error(type(task.exception()).__name__)

    def done(self, client: _Client, due: float, status: int, keep: bool) -> None:
        self.in_flight -= 1
        self.lat.append(1000 * (time.monotonic() - due))
        self.due_at.append(due - self.start)
        if status != 200:
            self.errors[f"http_{status}"] = self.errors.get(f"http_{status}", 0) + 1
        if keep:
            self.idle.append(client)
        elif client.transport is not None:
            client.transport.close()

    def failed(self, client: _Client, kind: str) -> None:
        client.current = None
        self.error(kind)
        if client.transport is not None:
            client.transport.close()

    def error(self, kind: str) -> None:
        self.in_flight -= 1
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def forget(self, client: _Client) -> None:
        self.all.discard(client)
        if client in self.idle:
            self.idle.remove(client)


async def _run(host: str, port: int, paths: list[str], rate: float, start: float,
               duration: float, index: int, procs: int, timeout: float) -> dict:
    gen = _Gen(asyncio.get_running_loop(), host, port, paths, start)
    total = int(rate * duration)
    interval = 1.0 / rate
    mine = range(index, total, procs)
    for i in mine:
        due = start + i * interval
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        gen.fire(i, due)
    end = time.monotonic() + timeout
    while gen.in_flight > 0 and time.monotonic() < end:
        await asyncio.sleep(0.01)
    if gen.in_flight > 0:
        gen.errors["timeout"] = gen.errors.get("timeout", 0) + gen.in_flight
    for client in list(gen.all):
        if client.transport is not None:
            client.transport.close()
    return {"lat": gen.lat, "due": gen.due_at, "lag": gen.lag, "errors": gen.errors,
            "opened": gen.opened, "scheduled": len(mine)}


def _child(args: tuple, queue) -> None:
    queue.put(asyncio.run(_run(*args)))


def _pct(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(p * len(sorted_values)))]


def run_openloop(url: str | list[str], *, rate: float, duration: float, procs: int = 1,
                 timeout: float = 10.0, trace: str | None = None) -> dict:
    """Open-loop GETs of ``url`` (or round-robin over several URLs on one host) at ``rate``
    requests/s for ``duration`` s. Returns the latency percentiles from each request's due
    time, the generator's own lag, errors by kind, and ``p99_by_second``. ``trace``: also
    write ``due_s,latency_ms`` per request to that CSV file."""
    urls = [url] if isinstance(url, str) else list(url)
    parts = [urlsplit(u) for u in urls]
    host, port = parts[0].hostname, parts[0].port or 80
    paths = [(p.path or "/") + (f"?{p.query}" if p.query else "") for p in parts]
    start = time.monotonic() + 0.3 + 0.2 * procs
    if procs <= 1:
        results = [asyncio.run(_run(host, port, paths, rate, start, duration, 0, 1, timeout))]
    else:
        ctx = mp.get_context("fork")
        queue = ctx.Queue()
        children = [ctx.Process(target=_child, args=((host, port, paths, rate, start, duration,
                                                      k, procs, timeout), queue))
                    for k in range(procs)]
        for c in children:
            c.start()
        results = [queue.get() for _ in children]
        for c in children:
            c.join()
    pairs = sorted((d, v) for r in results for d, v in zip(r["due"], r["lat"]))
    lat = sorted(v for _d, v in pairs)
    lag = sorted(v for r in results for v in r["lag"])
    errors: dict[str, int] = {}
    for r in results:
        for k, v in r["errors"].items():
            errors[k] = errors.get(k, 0) + v
    by_second: dict[int, list[float]] = {}
    for d, v in pairs:
        by_second.setdefault(int(d), []).append(v)
    if trace:
        with open(trace, "w") as fh:
            fh.write("due_s,latency_ms\n")
            fh.writelines(f"{d:.4f},{v:.2f}\n" for d, v in pairs)
    scheduled = sum(r["scheduled"] for r in results)
    return {"tool": "openloop", "rate": rate, "duration_s": duration, "procs": procs,
            "start_monotonic": round(start, 4),
            "scheduled": scheduled, "completed": len(lat),
            "achieved_rps": round(len(lat) / duration, 1),
            "p50_ms": round(_pct(lat, 0.50), 1), "p90_ms": round(_pct(lat, 0.90), 1),
            "p99_ms": round(_pct(lat, 0.99), 1), "p999_ms": round(_pct(lat, 0.999), 1),
            "max_ms": round(lat[-1], 1) if lat else None,
            "errors": sum(errors.values()), "errors_by_kind": errors,
            "lag_p99_ms": round(_pct(lag, 0.99), 1),
            "lag_max_ms": round(lag[-1], 1) if lag else None,
            "late_sends": sum(1 for v in lag if v > LATE_MS),
            "connections_opened": sum(r["opened"] for r in results),
            "p99_by_second": [round(_pct(sorted(v), 0.99), 1)
                              for _s, v in sorted(by_second.items())]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("url", nargs="+")
    ap.add_argument("--rate", type=float, required=True, help="requests per second")
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--procs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--trace", help="CSV of due_s,latency_ms per request")
    args = ap.parse_args(argv)
    print(json.dumps(run_openloop(args.url, rate=args.rate, duration=args.duration,
                                  procs=args.procs, timeout=args.timeout, trace=args.trace)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
