"""Board pages in-process (issue 25 item 4): where a cold page's time goes, CPU per warm request,
page weight, and deep "all submissions" pages by number vs by cursor.

    .venv/bin/python perf/bench_board_pages.py --database-url postgresql+psycopg://...  \\
        --redis-url redis://127.0.0.1:6383/6 [--profile PATH] [--repeat 300]

Reads a database that ``perf/bench_scale.py --keep`` left (benchmarks named after the demo
ones, a LOKI detection board of N/5 submissions). Flask's test client, one process: numbers are
the application's own cost, without the server, the network or a load generator. Prints JSON
lines; ``--profile PATH`` also prints the top of a cProfile of cold requests of PATH.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import pathlib
import pstats
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PATHS = {"json": "/api/v1/boards/loki/detection/test",
         "html": "/benchmarks/loki/boards/detection/test",
         "home": "/", "modality": "/modalities/image/detection",
         "modality_json": "/api/v1/modalities/image/detection"}
BOARD = "/api/v1/boards/loki/detection/test?mode=all"


def out(**kw) -> None:
    print(json.dumps(kw), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--database-url", required=True)
    ap.add_argument("--redis-url", required=True)
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--cold", type=int, default=5)
    ap.add_argument("--profile")
    args = ap.parse_args(argv)
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.web import create_app
    app = create_app({"DATABASE_URL": args.database_url,
                      "DATA_DIR": tempfile.mkdtemp(prefix="bench-pages-"),
                      "SECRET_KEY": "bench", "COOKIE_SECURE": "0", "REDIS_URL": args.redis_url,
                      "RATELIMIT_ENABLED": "0"})
    client = app.test_client()

    def get(path):
        r = client.get(path)
        assert r.status_code == 200, (path, r.status_code, r.data[:300])
        return r

    def clear():
        with app.app_context():
            invalidate_boards()

    for label, path in PATHS.items():
        cold = []
        for _ in range(args.cold):
            clear()
            t = time.perf_counter()
            body = get(path).data
            cold.append(round(1000 * (time.perf_counter() - t), 1))
        for _ in range(20):
            get(path)
        t = time.process_time()
        for _ in range(args.repeat):
            get(path)
        cpu = 1000 * (time.process_time() - t) / args.repeat
        out(page=label, path=path, cold_ms=cold, bytes=len(body), cpu_ms_per_warm_request=round(cpu, 3))
    # deep pages of "all submissions": by number (offset + count) vs by the cursor of the page
    # before (keyset), each computed for the first time (not served from the cache)
    total = get(BOARD + "&per_page=50").get_json()["pages"]
    deep = max(2, min(1000, total - 5))
    clear()
    by_number, by_cursor = [], []
    for p in range(deep, deep + 5):
        t = time.perf_counter()
        get(f"{BOARD}&per_page=50&page={p}")
        by_number.append(round(1000 * (time.perf_counter() - t), 1))
    first = [round(1000 * x, 1) for x in _timed(lambda: get(BOARD + "&per_page=50"), 1)]
    prev = get(f"{BOARD}&per_page=50&page={deep - 1}").get_json()
    for _ in range(5):
        t = time.perf_counter()
        prev = get(f"{BOARD}&per_page=50&cursor={prev['next_cursor']}").get_json()
        by_cursor.append(round(1000 * (time.perf_counter() - t), 1))
    out(measure="all_mode_pages", pages=total, first_page_ms=first,
        deep_pages=f"{deep}..{deep + 4}", by_number_ms=by_number, by_cursor_ms=by_cursor)
    if args.profile:
        pr = cProfile.Profile()
        for _ in range(args.cold):
            clear()
            pr.enable()
            get(args.profile)
            pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(40)
        print(s.getvalue())
    return 0


def _timed(fn, n):
    out_ = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out_.append(time.perf_counter() - t)
    return out_


if __name__ == "__main__":
    sys.exit(main())
