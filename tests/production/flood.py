"""``python -m tests.production.flood PORT SECONDS PATH...``: 12 threads GET the paths in turn
for SECONDS, each at most 20 a second (240/s in all: issue 24's attack was 177 comparisons from
16 clients), in a process of their own (so that a latency probe in the test process does not
wait for this one's interpreter lock); prints one JSON list of [status, Retry-After] answers."""
from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import requests

THREADS = 12
PACE_S = 0.05


def flood(port: int, seconds: float, paths: list[str]) -> list[list]:
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


if __name__ == "__main__":
    print(json.dumps(flood(int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:])))
