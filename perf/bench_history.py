"""A board's history (issue 38, item 2), cold and warm, on a board of N submissions.

Builds a throwaway SQLite database (``alembic upgrade head``), one benchmark with N scored public
submissions spread over 200 teams, then times `board_history` cold (cache cleared before each
read) and warm, and one submission's ranks cold. In-process, file cache (no Redis).

    PYTHONPATH=$PWD python perf/bench_history.py [--n 5000] [--cold 3]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import random
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--cold", type=int, default=3)
    args = ap.parse_args(argv)
    from cryptography.fernet import Fernet

    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.boards.history import board_history, submission_ranks
    from leaderboard.server.cli import upgrade_database
    from leaderboard.server.db import get_db
    from leaderboard.server.web import create_app
    from tests.server.boards.conftest import Factory

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-history-"))
    url = f"sqlite:///{tmp / 'lb.db'}"
    upgrade_database(url)
    app = create_app({"DATABASE_URL": url, "DATA_DIR": str(tmp / "data"), "SECRET_KEY": "b",
                      "COOKIE_SECURE": "0", "REDIS_URL": "", "RATELIMIT_ENABLED": "0",
                      "LABEL_KEYS": Fernet.generate_key().decode()})
    rng = random.Random(0)
    t = time.perf_counter()
    with app.app_context():
        with get_db(app).scope() as s:
            make = Factory(s)
            bench = make.benchmark()
            teams = [make.team() for _ in range(200)]
            for i in range(args.n):
                make.submission(bench, teams[i % 200], minutes=i,
                                scores={"public": {"accuracy": round(rng.random(), 3),
                                                   "fpr": 0.1}})
        seeded = time.perf_counter() - t
        cold = []
        last = None
        for _ in range(args.cold):
            invalidate_boards("demo")
            with get_db(app).scope() as s:
                t = time.perf_counter()
                h = board_history(s, benchmark_key="demo", task="detection", split="test")
                cold.append(time.perf_counter() - t)
                last = h["best"][-1]["submission_id"]
        with get_db(app).scope() as s:
            t = time.perf_counter()
            board_history(s, benchmark_key="demo", task="detection", split="test")
            warm = time.perf_counter() - t
            t = time.perf_counter()
            submission_ranks(s, benchmark_key="demo", task="detection", split="test",
                             submission_id=last)
            rank_first = time.perf_counter() - t
            t = time.perf_counter()
            submission_ranks(s, benchmark_key="demo", task="detection", split="test",
                             submission_id=last)
            rank_warm = time.perf_counter() - t
    print(json.dumps({"n": args.n, "seed_s": round(seeded, 1),
                      "history_cold_ms": round(1000 * statistics.median(cold), 1),
                      "history_warm_ms": round(1000 * warm, 2),
                      "ranks_first_ms": round(1000 * rank_first, 2),
                      "ranks_warm_ms": round(1000 * rank_warm, 2)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
