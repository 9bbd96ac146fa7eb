"""Board serving speed: 5,000 scored submissions, two gunicorn workers, loopback (not a test).

    .venv/bin/python perf/bench_boards.py [--submissions 5000] [--duration 10]
        [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/lb_bench] [--redis-url ...]

Builds a fresh database (SQLite in a temporary directory unless ``--database-url`` names an
empty PostgreSQL database) with ``alembic upgrade head``, inserts one benchmark whose test split
has ``--submissions`` scored submissions (4 per team, public/private/all parts, overall and
per-modality slices, 6 metrics each, so ~100 score rows per submission), starts
``gunicorn -w 2`` on 127.0.0.1, requests each board once (the cold, uncached computation),
then drives the cached board as JSON (``/api/v1/boards/...``) and as HTML (the board page) with
``wrk`` when it is installed (``apt-get install -y wrk``), else with a small Python load generator
(threads, http.client keep-alive). Prints requests/s and p50/p99 latency per URL as JSON lines.
Targets (issue 3): >= 1,000 req/s JSON, >= 500 req/s HTML, p99 <= 100 ms.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

METRICS = {name: {"title": title, "higher_is_better": hib, "fmt": "pct", "lower": 0.0,
                  "upper": 1.0}
           for name, title, hib in [("accuracy", "Accuracy", True), ("fpr", "FPR", False),
                                    ("ap", "AP", True), ("f_acc", "f.Acc", True),
                                    ("r_acc", "r.Acc", True), ("roc_auc", "ROC-AUC", True)]}
TASKS = [{"key": "detection", "kind": "detection", "modalities": ["image", "video"],
          "headline": "accuracy", "title": "Detection", "secondary": ["ap", "fpr"]}]


def build_db(url: str, n_subs: int, seed: int) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import insert

    from leaderboard.server.db import make_engine
    from leaderboard.server.models import Benchmark, Score, Submission, Team

    cfg = Config()
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    command.upgrade(cfg, "head")
    rng = random.Random(seed)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    engine = make_engine(url)
    with engine.begin() as conn:
        bench_id = conn.execute(insert(Benchmark).returning(Benchmark.id), [{
            "key": "bench", "title": "Bench", "version": "1", "pack_path": "",
            "meta_json": {"tasks": TASKS, "splits": ["dev", "test"], "metrics": METRICS,
                          "modalities": ["image", "video"]},
            "description_md": "A synthetic benchmark for **load testing**."}]).scalar_one()
        n_teams = max(1, n_subs // 4)
        team_ids = conn.execute(insert(Team).returning(Team.id), [
            {"name": f"team-{i:05d}", "invite_code": f"inv-{i:05d}", "created_at": t0}
            for i in range(n_teams)]).scalars().all()
        sub_ids = conn.execute(insert(Submission).returning(Submission.id), [
            {"benchmark_id": bench_id, "split": "test", "team_id": team_ids[i % n_teams],
             "method_name": f"method {i}", "status": "scored", "is_public": True,
             "created_at": t0 + timedelta(seconds=i), "is_baseline": False}
            for i in range(n_subs)]).scalars().all()
        rows = []
        for sid in sub_ids:
            skill = rng.random()
            for part in ("public", "private", "all"):
                for slice_key in ("", "modality=image", "modality=video"):
                    sl = dict([slice_key.split("=")]) if slice_key else {}
                    for metric in METRICS:
                        v = min(1.0, max(0.0, skill + rng.gauss(0, 0.05)))
                        v = 1.0 - v if metric == "fpr" else v
                        rows.append({"submission_id": sid, "part": part, "task": "detection",
                                     "metric": metric, "slice_key": slice_key,
                                     "slice_json": sl, "value": round(v, 4),
                                     "ci_low": round(max(0.0, v - 0.03), 4),
                                     "ci_high": round(min(1.0, v + 0.03), 4), "n": 1000,
                                     "metric_version": "1"})
            if len(rows) >= 20000:
                conn.execute(insert(Score), rows)
                rows = []
        if rows:
            conn.execute(insert(Score), rows)
    # Fresh statistics, as autovacuum (PostgreSQL) would have them on a live database: right
    # after a bulk load the planner believes the tables are empty and picks nested loops.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("ANALYZE")
    # the bulk insert bypassed the ORM, so the standings (issue 16) are built in one pass
    from sqlalchemy.orm import Session

    from leaderboard.server.boards import rebuild
    with Session(engine) as session:
        rebuild.rebuild(session)
        session.commit()
    engine.dispose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(port: int, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/v1/benchmarks")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer on port {port} within {timeout} s")


def warm_up(port: int, path: str, *, clients: int = 8, each: int = 5) -> None:
    """Concurrent requests, so that every worker computes and caches the board once (the
    cold cost is reported separately as ``cold_first_request_ms``)."""
    def one():
        for _ in range(each):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            c.request("GET", path)
            c.getresponse().read()
            c.close()

    threads = [threading.Thread(target=one) for _ in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def run_wrk(url: str, *, duration: int, connections: int) -> dict:
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency", url],
                         capture_output=True, text=True, check=True).stdout

    def ms(label: str) -> float:
        m = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"requests_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50_ms": ms("50%"), "p99_ms": ms("99%"),
            "errors": int(non2xx.group(1)) if non2xx else 0, "tool": "wrk"}


def run_python(port: int, path: str, *, duration: int, connections: int) -> dict:
    """Fallback load generator: threads with keep-alive connections (GIL-bound: a floor)."""
    lat: list[float] = []
    errors = [0]
    stop = time.monotonic() + duration

    def worker():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        local = []
        while time.monotonic() < stop:
            t = time.perf_counter()
            try:
                conn.request("GET", path)
                resp = conn.getresponse()
                resp.read()
                if resp.status != 200:
                    errors[0] += 1
            except OSError:
                errors[0] += 1
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                continue
            local.append(time.perf_counter() - t)
        lat.extend(local)

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    start = time.monotonic()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    lat.sort()
    q = lambda p: 1000 * lat[min(len(lat) - 1, int(p * len(lat)))]  # noqa: E731
    return {"requests_per_s": len(lat) / (time.monotonic() - start), "p50_ms": q(0.50),
            "p99_ms": q(0.99), "errors": errors[0], "tool": "python"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--submissions", type=int, default=5000)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--worker-class", default="gthread", choices=["sync", "gthread", "gevent"])
    ap.add_argument("--threads", type=int, default=4, help="threads per gthread worker")
    ap.add_argument("--database-url", default=None)
    ap.add_argument("--redis-url", default="")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-boards-"))
    url = args.database_url or f"sqlite:///{tmp / 'bench.db'}"
    t = time.perf_counter()
    build_db(url, args.submissions, args.seed)
    print(json.dumps({"setup": "database", "submissions": args.submissions,
                      "seconds": round(time.perf_counter() - t, 2), "database": url.split(":")[0]}))
    port = free_port()
    env = {**os.environ, "DATABASE_URL": url, "DATA_DIR": str(tmp / "data"),
           "SECRET_KEY": "bench", "COOKIE_SECURE": "0", "REDIS_URL": args.redis_url}
    cmd = [sys.executable, "-m", "gunicorn", "-w", "2", "-b", f"127.0.0.1:{port}",
           "--worker-class", args.worker_class, "--log-level", "warning",
           "leaderboard.server.web:create_app()"]
    if args.worker_class == "gthread":
        cmd[5:5] = ["--threads", str(args.threads)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
    try:
        wait_up(port)
        targets = {"json": ("/api/v1/boards/bench/detection/test", 1000),
                   "html": ("/benchmarks/bench/boards/detection/test", 500)}
        for name, (path, target) in targets.items():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            t = time.perf_counter()
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read()
            cold = time.perf_counter() - t
            if resp.status != 200:
                raise RuntimeError(f"{path}: HTTP {resp.status}: {body[:300]!r}")
            warm_up(port, path)
            if shutil.which("wrk"):
                res = run_wrk(f"http://127.0.0.1:{port}{path}", duration=args.duration,
                              connections=args.connections)
            else:
                res = run_python(port, path, duration=args.duration,
                                 connections=args.connections)
            res.update({"board": name, "path": path, "cold_first_request_ms":
                        round(1000 * cold, 1), "bytes": len(body),
                        "workers": 2, "worker_class": args.worker_class,
                        "connections": args.connections, "target_rps": target,
                        "load_average_1m": round(os.getloadavg()[0], 2),
                        "cpus": os.cpu_count(),
                        "meets_target": res["requests_per_s"] >= target
                        and res["p99_ms"] <= 100 and res["errors"] == 0})
            print(json.dumps(res))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
