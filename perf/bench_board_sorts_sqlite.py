"""Board re-sorts (issue 38) on SQLite: one benchmark, N submissions (default 10,000) on one
board, each read cold, then the same reads through the every-row read (the board tools' first
implementation), each page compared with the light read's (``same_page``).

    flock /tmp/bench.lock .venv/bin/python perf/bench_board_sorts_sqlite.py [--submissions N]
        [--tries 5] [--redis-url redis://127.0.0.1:6379/11]

Loads a fresh SQLite file in a temporary folder (schema by Alembic, teams, submissions and
public/private scores by bulk insert as `perf/bench_scale.py` draws them, standings by the
set-based rebuild); in-process Flask test client, the board cache cleared right before each
try. Prints one JSON line per read, with the 1-minute load average (the machine is shared).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))

from bench_method_pages import cold_reads  # noqa: E402
from bench_scale import METRICS, T0  # noqa: E402

BOARD = "/api/v1/boards/loki/detection/test"
READS = {
    "plain": BOARD,
    "sort_ap": f"{BOARD}?sort=ap",  # a ranking column (the secondary): sorted on the keys
    "sort_fpr": f"{BOARD}?sort=fpr",  # another column: values picked out of the cells
    "sort_fpr_all_last": f"{BOARD}?sort=fpr&dir=desc&mode=all&page=200",
    "filtered_sort": f"{BOARD}?q=team-00001&sort=fpr",
}


def load(url: str, n: int, seed: int) -> dict:
    """Schema, rows and standings; returns the standing rows and the seconds it took."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import insert
    from sqlalchemy.orm import Session

    from leaderboard.server.boards import rebuild
    from leaderboard.server.db import make_engine
    from leaderboard.server.models import Benchmark, Score, Submission, Team

    cfg = Config()
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    command.upgrade(cfg, "head")
    engine = make_engine(url)
    rng = random.Random(seed)
    tasks = [{"key": "detection", "kind": "detection", "modalities": ["image"],
              "headline": "accuracy", "title": "Detection", "secondary": ["ap"]}]
    t = time.perf_counter()
    with engine.begin() as conn:
        conn.execute(insert(Benchmark), [dict(
            id=1, key="loki", family="loki", title="LOKI", version="1", pack_path="",
            meta_json={"tasks": tasks, "splits": ["test"], "metrics": METRICS,
                       "modalities": ["image"]},
            description_md="", agreement_md="", agreement_version="", private_revealed=False,
            submissions_open=True, created_at=T0)])
        conn.execute(insert(Team), [dict(id=i, name=f"team-{i:06d}", invite_code=f"inv-{i}",
                                         created_at=T0) for i in range(1, n + 1)])
        conn.execute(insert(Submission), [dict(
            id=i, benchmark_id=1, split="test", team_id=i, kind="predictions",
            method_name=f"method {i}", description="", paper_url="", code_url="",
            is_public=True, status="scored", file_path="", file_sha256="", file_size=0,
            created_at=T0 + timedelta(seconds=i), attempts=1, hidden=False, is_baseline=False,
            selected=False, counts_toward_quota=True) for i in range(1, n + 1)])
        scores = []
        for i in range(1, n + 1):
            skill = rng.random()
            for part in ("public", "private"):
                for metric in METRICS:
                    v = round(min(0.99, max(0.0, skill + rng.gauss(0, 0.05))), 4)
                    v = round(1 - v, 4) if metric == "fpr" else v
                    scores.append(dict(submission_id=i, part=part, task="detection",
                                       metric=metric, slice_key="", slice_json={}, value=v,
                                       ci_low=max(0.0, v - 0.03), ci_high=min(1.0, v + 0.03),
                                       n=1000, metric_version="1"))
        conn.execute(insert(Score), scores)
    with Session(engine) as session:
        rows = rebuild.rebuild(session)
        session.commit()
    engine.dispose()
    return {"standing_rows": rows, "load_s": round(time.perf_counter() - t, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--submissions", type=int, default=10_000)
    ap.add_argument("--tries", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--redis-url", default="")
    args = ap.parse_args(argv)
    from cryptography.fernet import Fernet

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-sorts-sqlite-"))
    url = f"sqlite:///{tmp / 'lb.db'}"
    print(json.dumps({"n": args.submissions, **load(url, args.submissions, args.seed)}),
          flush=True)
    from leaderboard.server.web import create_app
    app = create_app({"DATABASE_URL": url, "DATA_DIR": str(tmp / "data"),
                      "SECRET_KEY": "bench", "COOKIE_SECURE": "0",
                      "REDIS_URL": args.redis_url, "RATELIMIT_ENABLED": "0",
                      "LABEL_KEYS": Fernet.generate_key().decode()})
    client = app.test_client()

    def timed(path: str) -> tuple[list[float], dict]:
        cold, resp = cold_reads(app, client, path, args.tries)
        return cold, resp.get_json()

    def line(label: str, cold: list[float], **extra) -> None:
        print(json.dumps({"read": label, "cold_median_ms": round(statistics.median(cold), 1),
                          "cold_min_ms": round(min(cold), 1),
                          "cold_max_ms": round(max(cold), 1),
                          "load": round(os.getloadavg()[0], 2), **extra}), flush=True)

    pages = {}
    for label, path in READS.items():
        cold, pages[label] = timed(path)
        line(label, cold, path=path)
    from leaderboard.server.boards import tooled
    tooled.tooled_page = lambda *_a, **_kw: None  # this process only: the every-row read
    for label in [k for k in READS if k != "plain"]:
        cold, body = timed(READS[label])
        same = body["rows"] == pages[label]["rows"] and body["total"] == pages[label]["total"]
        line(label + "_every_row", cold, same_page=same)
        assert same, label
    app.extensions["lb_db"].dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
