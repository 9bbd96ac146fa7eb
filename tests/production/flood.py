"""Load for the attack smoke, each part in a process of its own (so that neither waits for the
test process's interpreter lock, held by its dozens of slow-client threads):

``python -m tests.production.flood flood PORT START SECONDS PATH...``: from the unix time START,
12 threads GET the paths in turn for SECONDS, each at most 5 a second (60/s in all; issue 24's
attack was 177 comparisons from 16 clients); prints a JSON list of [status, Retry-After].

``python -m tests.production.flood probe PORT START SECONDS``: from START, ``GET /healthz``
every 50 ms for SECONDS on one keep-alive connection; prints a JSON list of the seconds each
took (3.0 for a failure).
"""
from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import requests

THREADS = 12
PACE_S = 0.2


def flood(port: int, start: float, seconds: float, paths: list[str]) -> list[list]:
    time.sleep(max(0.0, start - time.time()))  # imports done: the window starts on time
    end = time.monotonic() + seconds

    def client(i: int) -> list[list]:
        http, out = requests.Session(), []
        while time.monotonic() < end:
            time.sleep(PACE_S)
            resp = http.get(f"http://127.0.0.1:{port}{paths[i % len(paths)]}", timeout=10)
            out.append([resp.status_code, resp.headers.get("Retry-After")])
        return out

    with ThreadPoolExecutor(THREADS) as pool:
        return [r for rs in pool.map(client, range(THREADS)) for r in rs]


def probe(port: int, start: float, seconds: float) -> list[float]:
    http = requests.Session()
    http.get(f"http://127.0.0.1:{port}/healthz", timeout=3)  # connect before the window
    time.sleep(max(0.0, start - time.time()))
    end, out = time.monotonic() + seconds, []
    while time.monotonic() < end:
        began = time.monotonic()
        try:
            ok = http.get(f"http://127.0.0.1:{port}/healthz", timeout=3).ok
        except requests.RequestException:
            ok = False
        out.append(time.monotonic() - began if ok else 3.0)
        time.sleep(0.05)
    return out


if __name__ == "__main__":
    mode, port, start, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
        float(sys.argv[4])
    result = flood(port, start, seconds, sys.argv[5:]) if mode == "flood" else \
        probe(port, start, seconds)
    print(json.dumps(result))
