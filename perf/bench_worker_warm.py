"""Scoring job time, cold (a work-horse forked per job) vs warm (jobs in the worker's own
process, the default since issue 16). Not a test: prints numbers.

    .venv/bin/python perf/bench_worker_warm.py --redis-url redis://127.0.0.1:6379/13
        [--jobs 5] [--scale small|large] [--only syncred,loki]
        [--pg-admin-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres] [--db-prefix P]

Setup (nothing timed): the demo packs (``--scale``, every benchmark unless ``--only``) imported
into a fresh database (SQLite in a temporary folder, or with ``--pg-admin-url`` a PostgreSQL
database ``<db-prefix>_<hex>`` built by ``alembic upgrade head`` and dropped at the end); the
given Redis database is flushed before and after. For each pack, a random-baseline predictions
file of its test split, submitted ``--jobs`` times (rows straight into the database).

For each mode, every submission is (re)queued, round-robin over the packs so that consecutive
jobs never share a pack, and one real ``python -m leaderboard worker --queues scoring --burst``
(``--fork`` for cold) drains the queue. Numbers come from each job's own log line
(`leaderboard.server.jobs.scoring.score_submission`: ``total_s`` and one ``<phase>_s`` per
phase, ``labels=hit|miss``) and from the drain: wall time from the first job's start to the
last job's end (RQ's timestamps) over the number of jobs, which includes forking.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perf.bench_submit import drop_database  # noqa: E402

LINE = re.compile(r"job=score submission=(\d+) outcome=(\w+) (.*)$")


def _setup(env: dict, packs: list[Path], jobs: int, tmp: Path) -> dict[int, str]:
    """Import ``packs``, write one baseline file per pack, add ``jobs`` submissions each."""
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack
    from leaderboard.server.models import Submission
    from leaderboard.server.services.benchmarks import import_pack
    from leaderboard.server.web import create_app

    app = create_app(env)
    subs: dict[int, str] = {}
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        for path in packs:
            bench = import_pack(s, path, data_dir=env["DATA_DIR"], label_keys=env["LABEL_KEYS"],
                                check_media=False)
            split = "test" if "test" in load_pack(path).splits else load_pack(path).splits[0]
            rel = Path("uploads") / f"{bench.key}.jsonl"
            (Path(env["DATA_DIR"]) / rel).parent.mkdir(parents=True, exist_ok=True)
            write_baseline(load_pack(path), split, "random", Path(env["DATA_DIR"]) / rel, seed=1)
            for i in range(jobs):
                sub = Submission(benchmark_id=bench.id, split=split, method_name=f"b{i}",
                                 file_path=str(rel), status="received")
                s.add(sub)
                s.flush()
                subs[sub.id] = bench.key
    app.extensions["lb_db"].dispose()
    return subs


def _requeue(env: dict, subs: dict[int, str]) -> None:
    """Every submission back to "received", then enqueued round-robin over the packs."""
    from sqlalchemy import update

    from leaderboard.server.jobs.scoring import enqueue_scoring
    from leaderboard.server.models import Submission
    from leaderboard.server.web import create_app

    app = create_app(env)
    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            s.execute(update(Submission).values(status="received", attempts=0))
        by_pack: dict[str, list[int]] = {}
        for sid, key in subs.items():
            by_pack.setdefault(key, []).append(sid)
        order = [sid for group in zip(*by_pack.values(), strict=False) for sid in group]
        for sid in order:
            enqueue_scoring(sid)
    app.extensions["lb_db"].dispose()


def _span_per_job(redis_url: str) -> float:
    """(last end - first start) / jobs over the finished scoring jobs in Redis."""
    import redis
    from rq import Queue
    from rq.job import Job
    from rq.serializers import JSONSerializer

    conn = redis.Redis.from_url(redis_url)
    q = Queue("scoring", connection=conn, serializer=JSONSerializer)
    ids = q.finished_job_registry.get_job_ids()
    jobs = [j for j in Job.fetch_many(ids, connection=conn, serializer=JSONSerializer) if j]
    start = min(j.started_at for j in jobs)
    end = max(j.ended_at for j in jobs)
    return (end - start).total_seconds() / len(jobs)


def _run_mode(env: dict, subs: dict[int, str], fork: bool, log_path: Path) -> dict:
    import redis

    redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    _requeue(env, subs)
    cmd = [sys.executable, "-m", "leaderboard", "worker", "--queues", "scoring", "--burst"]
    cmd += ["--fork"] if fork else []
    t0 = time.perf_counter()
    with log_path.open("wb") as log:
        subprocess.run(cmd, cwd=ROOT, env={**os.environ, **_as_env(env)}, stdout=log,
                       stderr=subprocess.STDOUT, check=True, timeout=1800)
    wall = time.perf_counter() - t0
    rows = []
    for line in log_path.read_text(errors="replace").splitlines():
        m = LINE.search(line)
        if m:
            fields = dict(kv.split("=", 1) for kv in m.group(3).split())
            rows.append({"id": int(m.group(1)), "outcome": m.group(2), **fields})
    if len(rows) != len(subs) or any(r["outcome"] != "scored" for r in rows):
        raise SystemExit(f"{log_path}: expected {len(subs)} scored jobs, got {rows[:3]}...")

    def med(key, sel=rows):
        return statistics.median(float(r[key]) for r in sel)

    later = rows[len({*subs.values()}):]  # after each pack's first job
    return {"mode": "cold (--fork)" if fork else "warm", "jobs": len(rows),
            "labels_hits": sum(r.get("labels") == "hit" for r in rows),
            "median_total_s": med("total_s"), "median_load_labels_s": med("load_labels_s"),
            "median_total_s_after_first_per_pack": med("total_s", later),
            "median_load_labels_s_after_first_per_pack": med("load_labels_s", later),
            "median_parse_s": med("parse_s"), "median_score_s": med("score_s"),
            "median_write_s": med("write_s"), "median_invalidate_s": med("invalidate_s"),
            "drain_s_per_job": _span_per_job(env["REDIS_URL"]), "burst_wall_s": wall}


def _as_env(cfg: dict) -> dict[str, str]:
    return {"DATABASE_URL": cfg["DATABASE_URL"], "REDIS_URL": cfg["REDIS_URL"],
            "DATA_DIR": cfg["DATA_DIR"], "LABEL_KEYS": ",".join(cfg["LABEL_KEYS"]),
            "SECRET_KEY": cfg["SECRET_KEY"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis-url", required=True, help="a Redis database this run may flush")
    ap.add_argument("--jobs", type=int, default=5, help="submissions per pack (default 5)")
    ap.add_argument("--scale", default="small", choices=("small", "large"))
    ap.add_argument("--only", default="", help="comma-separated benchmark keys")
    ap.add_argument("--pg-admin-url", default="")
    ap.add_argument("--db-prefix", default="lb_bench_warm")
    args = ap.parse_args()

    from cryptography.fernet import Fernet

    from leaderboard.demo import BENCHMARKS, generate
    from leaderboard.server.cli import upgrade_database

    tmp = Path(tempfile.mkdtemp(prefix="lb-bench-warm-"))
    keys = [k for k in args.only.split(",") if k] or list(BENCHMARKS)
    packs = [generate(k, tmp / "packs", scale=args.scale, seed=0) for k in keys]
    if args.pg_admin_url:
        url = create_database_named(args.pg_admin_url, args.pg_admin_url.rsplit("/", 1)[0]
                                    + f"/{args.db_prefix}_{secrets.token_hex(4)}")
    else:
        url = f"sqlite:///{tmp / 'bench.db'}"
    env = {"DATABASE_URL": url, "REDIS_URL": args.redis_url, "DATA_DIR": str(tmp / "data"),
           "LABEL_KEYS": [Fernet.generate_key().decode()], "SECRET_KEY": secrets.token_hex(16)}
    try:
        upgrade_database(url)
        subs = _setup(env, packs, args.jobs, tmp)
        for fork in (True, False):
            out = _run_mode(env, subs, fork, tmp / f"worker-{'fork' if fork else 'warm'}.log")
            print(json.dumps({"scale": args.scale, "packs": keys, **out}))
    finally:
        import redis
        redis.Redis.from_url(args.redis_url).flushdb()
        if args.pg_admin_url:
            drop_database(args.pg_admin_url, url)


def create_database_named(admin_url: str, url: str) -> str:
    from sqlalchemy import create_engine, text

    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{url.rsplit("/", 1)[1]}"'))
    admin.dispose()
    return url


if __name__ == "__main__":
    main()
