"""A stand-in scoring worker for perf/bench_scale.py: one scored submission a second, in its own
process, the way ``leaderboard worker`` writes one.

    python perf/scoring_stream.py --rate 1 --cpu-ms 150 --benchmark loki
    (DATABASE_URL, REDIS_URL and DATA_DIR from the environment, as the worker reads them)

Each job: an upload's row is committed ("queued", as the web does), then the job burns
``--cpu-ms`` of CPU (the metrics' computation; a demo-pack job's scoring phase is of that
order), then writes the scores and the status in one ORM transaction (the session hook updates
the standings and modality boards in it, as `leaderboard.server.jobs.scoring.store_scores`
does), commits, and invalidates the benchmark's boards. The process first lowers its priority
by ``WORKER_NICE`` exactly as the worker command does (`lower_priority`). Prints one line per
job: ``<submission id> <CLOCK_MONOTONIC of the commit> <write ms>``, flushed, so the parent can
time commit -> visible and line latency spikes up with commits.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time
from datetime import datetime, timezone

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def burn(ms: float) -> None:
    end = time.process_time() + ms / 1000
    x = 0
    while time.process_time() < end:
        for i in range(2000):
            x += i * i


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", type=float, default=1.0, help="jobs per second")
    ap.add_argument("--cpu-ms", type=float, default=150.0)
    ap.add_argument("--benchmark", default="loki")
    ap.add_argument("--teams", type=int, default=50,
                    help="job k scores for team 1 + k %% TEAMS (a new best of that team: a "
                         "board change every time)")
    args = ap.parse_args(argv)
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.config import load_config
    from leaderboard.server.db import Database
    from leaderboard.server.jobs.worker import lower_priority
    from leaderboard.server.models import Benchmark, Score, Submission

    cfg = load_config()
    lower_priority(cfg["WORKER_NICE"])
    db = Database(os.environ["DATABASE_URL"])
    with db.session() as s:
        bench = s.query(Benchmark).filter_by(key=args.benchmark).one()
        bench_id = bench.id
        metrics = list(bench.meta_json["metrics"])
        s.rollback()
        period = 1.0 / args.rate
        t_next = time.monotonic()
        k = 0
        while True:
            k += 1
            sub = Submission(benchmark_id=bench_id, split="test", team_id=1 + k % args.teams,
                             method_name="stream", status="queued",
                             created_at=datetime.now(timezone.utc))
            s.add(sub)
            s.commit()  # the upload
            burn(args.cpu_ms)  # the scoring itself, no session open
            t = time.perf_counter()
            for part in ("public", "private", "all"):
                for metric in metrics:
                    s.add(Score(submission_id=sub.id, part=part, task="detection",
                                metric=metric, slice_key="", slice_json={},
                                value=0.0 if metric == "fpr" else 1.0, n=1000))
            sub.status = "scored"
            s.commit()
            committed = time.monotonic()
            write_ms = 1000 * (time.perf_counter() - t)
            invalidate_boards(args.benchmark)
            print(sub.id, f"{committed:.6f}", f"{write_ms:.1f}", flush=True)
            t_next += period
            time.sleep(max(0.0, t_next - time.monotonic()))


if __name__ == "__main__":
    sys.exit(main())
