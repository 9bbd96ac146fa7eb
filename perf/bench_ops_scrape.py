"""Time of one ``GET /metrics`` against the number of finished submissions (issue 16). Not a
test: prints numbers.

    .venv/bin/python perf/bench_ops_scrape.py --redis-url redis://127.0.0.1:6379/13
        [--rows 100000] [--repeat 20]
        [--pg-admin-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres] [--db-prefix P]

Setup (nothing timed): ``--rows`` finished submissions (90% scored, 10% failed, durations
0.1-100 s) and 20 in flight, inserted in bulk into a fresh database (SQLite in a temporary
folder, or a PostgreSQL database ``<db-prefix>_<hex>`` dropped at the end). Timed, median of
``--repeat`` scrapes through the Flask test client: the scrape as it was before issue 16 (every
finished row read into Python; recomputed here by `old_figures`), the scrape without Redis
(aggregates in the database), and with Redis (counters; the first scrape, which fills them from
the database, is reported apart). The given Redis database is flushed before and after.
"""
from __future__ import annotations

import argparse
import json
import random
import secrets
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perf.bench_submit import drop_database  # noqa: E402
from perf.bench_worker_warm import create_database_named  # noqa: E402


def old_figures(session) -> int:
    """The scrape's database work before issue 16 (its GROUP BY and its read of every finished
    row, with the histogram built in Python); returns the rows read."""
    from sqlalchemy import func, select

    from leaderboard.server.models import Submission
    from leaderboard.server.ops_counters import DURATION_BUCKETS

    dict(((s, k), n) for s, k, n in session.execute(
        select(Submission.status, Submission.kind, func.count())
        .group_by(Submission.status, Submission.kind)))
    finished = session.execute(
        select(Submission.status, Submission.started_at, Submission.finished_at)
        .where(Submission.status.in_(("scored", "failed")), Submission.started_at.is_not(None),
               Submission.finished_at.is_not(None))).all()
    for outcome in ("scored", "failed"):
        durations = [max((f - s).total_seconds(), 0.0) for st, s, f in finished if st == outcome]
        [sum(d <= b for d in durations) for b in DURATION_BUCKETS]
    return len(finished)


def _fill(url: str, rows: int) -> None:
    from sqlalchemy import create_engine, insert

    from leaderboard.server.models import Base, Benchmark, Submission

    engine = create_engine(url)
    Base.metadata.create_all(engine)
    rnd = random.Random(0)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    with engine.begin() as conn:
        bid = conn.execute(insert(Benchmark).values(
            key="demo", title="Demo", version="1", pack_path="/nowhere", meta_json={},
            created_at=t0).returning(Benchmark.id)).scalar_one()
        batch = []
        for i in range(rows + 20):
            status = ("scored" if rnd.random() < 0.9 else "failed") if i < rows else \
                ("received", "queued", "scoring")[i % 3]
            start = t0 + timedelta(seconds=i)
            batch.append({"benchmark_id": bid, "split": "test", "method_name": f"m{i}",
                          "kind": "predictions", "status": status, "created_at": start,
                          "started_at": start,
                          "finished_at": start + timedelta(seconds=rnd.uniform(0.1, 100))
                          if i < rows else None})
            if len(batch) == 5000:
                conn.execute(insert(Submission), batch)
                batch = []
        if batch:
            conn.execute(insert(Submission), batch)
    engine.dispose()


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times) * 1000, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis-url", required=True, help="a Redis database this run may flush")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--pg-admin-url", default="")
    ap.add_argument("--db-prefix", default="lb_bench_scrape")
    args = ap.parse_args()

    import redis
    from cryptography.fernet import Fernet

    from leaderboard.server.web import create_app

    tmp = Path(tempfile.mkdtemp(prefix="lb-bench-scrape-"))
    if args.pg_admin_url:
        url = create_database_named(args.pg_admin_url, args.pg_admin_url.rsplit("/", 1)[0]
                                    + f"/{args.db_prefix}_{secrets.token_hex(4)}")
    else:
        url = f"sqlite:///{tmp / 'bench.db'}"
    conn = redis.Redis.from_url(args.redis_url)
    conn.flushdb()
    try:
        _fill(url, args.rows)
        base = {"DATABASE_URL": url, "DATA_DIR": str(tmp / "data"), "TESTING": True,
                "LABEL_KEYS": [Fernet.generate_key().decode()], "SECRET_KEY": "bench"}
        out = {"database": url.split(":")[0], "finished_rows": args.rows}
        embedded = create_app({**base, "REDIS_URL": None})
        db = embedded.extensions["lb_db"]

        def old():
            with db.scope() as s:
                old_figures(s)

        out["before_ms"] = _median_ms(old, args.repeat)
        client = embedded.test_client()
        out["embedded_ms"] = _median_ms(lambda: client.get("/metrics"), args.repeat)
        db.dispose()
        with_redis = create_app({**base, "REDIS_URL": args.redis_url})
        client = with_redis.test_client()
        out["redis_first_scrape_ms"] = _median_ms(lambda: client.get("/metrics"), 1)
        out["redis_ms"] = _median_ms(lambda: client.get("/metrics"), args.repeat)
        with_redis.extensions["lb_db"].dispose()
        print(json.dumps(out))
    finally:
        conn.flushdb()
        if args.pg_admin_url:
            drop_database(args.pg_admin_url, url)


if __name__ == "__main__":
    main()
