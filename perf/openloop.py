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


class _Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer


async def _fetch(conn: _Conn, request: bytes, timeout: float) -> tuple[int, int]:
    """One request on a keep-alive connection: (status, body bytes)."""
    conn.writer.write(request)
    head = await asyncio.wait_for(conn.reader.readuntil(b"\r\n\r\n"), timeout)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    if "content-length" in headers:
        body = await asyncio.wait_for(conn.reader.readexactly(int(headers["content-length"])),
                                      timeout)
        size = len(body)
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        size = 0
        while True:
            n = int((await asyncio.wait_for(conn.reader.readuntil(b"\r\n"), timeout)).strip(),
                    16)
            await asyncio.wait_for(conn.reader.readexactly(n + 2), timeout)
            size += n
            if n == 0:
                break
    else:
        raise ConnectionError("response without a length: cannot keep the connection")
    if headers.get("connection", "").lower() == "close":
        raise _Closed(status, size)
    return status, size


class _Closed(Exception):
    """The server answered, then closes the connection (do not reuse it)."""

    def __init__(self, status: int, size: int):
        super().__init__(status)
        self.status, self.size = status, size


async def _run(host: str, port: int, paths: list[str], rate: float, start: float,
               duration: float, index: int, procs: int, timeout: float) -> dict:
    requests = [f"GET {p} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode() for p in paths]
    idle: list[_Conn] = []
    opened = [0]
    lat: list[float] = []      # ms from due time to the last body byte
    due_at: list[float] = []   # the due time of each completed request (seconds after start)
    lag: list[float] = []      # ms from due time to the send
    errors: dict[str, int] = {}
    pending: set[asyncio.Task] = set()

    async def one(i: int, due: float) -> None:
        conn = idle.pop() if idle else None
        try:
            if conn is None:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port, limit=2**22), timeout)
                conn = _Conn(reader, writer)
                opened[0] += 1
            lag.append(1000 * (time.monotonic() - due))
            try:
                try:
                    status, _size = await _fetch(conn, requests[i % len(requests)], timeout)
                except (asyncio.IncompleteReadError, ConnectionResetError, BrokenPipeError) as e:
                    # an idle keep-alive connection the server closed meanwhile (gunicorn's
                    # keepalive timeout): once, on a new connection, as a browser does
                    if isinstance(e, asyncio.IncompleteReadError) and e.partial:
                        raise
                    conn.writer.close()
                    reader, writer = await asyncio.wait_for(
                        asyncio.open_connection(host, port, limit=2**22), timeout)
                    conn = _Conn(reader, writer)
                    opened[0] += 1
                    status, _size = await _fetch(conn, requests[i % len(requests)], timeout)
            except _Closed as closed:
                status = closed.status
                conn.writer.close()
                conn = None
            done = time.monotonic()
            if status != 200:
                errors[f"http_{status}"] = errors.get(f"http_{status}", 0) + 1
            lat.append(1000 * (done - due))
            due_at.append(due - start)
            if conn is not None:
                idle.append(conn)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError,
                ConnectionError) as exc:
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            if conn is not None:
                conn.writer.close()

    total = int(rate * duration)
    interval = 1.0 / rate
    for i in range(index, total, procs):
        due = start + i * interval
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        else:
            await asyncio.sleep(0)  # behind: still let the requests in flight progress
        task = asyncio.ensure_future(one(i, due))
        pending.add(task)
        task.add_done_callback(pending.discard)
    if pending:
        await asyncio.wait(list(pending), timeout=timeout + 1)
    for conn in idle:
        conn.writer.close()
    return {"lat": lat, "due": due_at, "lag": lag, "errors": errors, "opened": opened[0],
            "scheduled": len(range(index, total, procs))}


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
