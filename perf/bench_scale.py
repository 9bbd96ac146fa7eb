"""Boards at scale (issue 16): N scored submissions, two gunicorn workers, PostgreSQL + Redis.

    .venv/bin/python perf/bench_scale.py --submissions 50000 \\
        --redis-url redis://127.0.0.1:6402/5 [--duration 8] [--keep]
    # load once, then run against copies of it
    .venv/bin/python perf/bench_scale.py --submissions 500000 --load-only lb_scale_500k \\
        --redis-url redis://127.0.0.1:6402/5
    .venv/bin/python perf/bench_scale.py --from-template lb_scale_500k --redis-url ...

Creates its own PostgreSQL database (``lb_bench_scale_<random>``, dropped at the end unless
``--keep``), builds the schema with ``alembic upgrade head``, and bulk-loads (COPY) five
benchmarks named after the demo benchmarks (syncred, loki, tridf, uniaidet, vct2: synthetic
metadata, one detection task each over image/video/...), N scored submissions spread over them
(4 per team, public/private/all parts, overall + per-modality slices, 3 metrics: 27 score rows
per submission), then builds the standings and the modality boards with the set-based rebuild
(`leaderboard.server.boards.rebuild.rebuild`, issue 25), timed.
It starts ``gunicorn -w 2`` against that database and ``--redis-url`` and measures:

* cold reads (every board entry invalidated, first request): JSON board, HTML board, home,
  modality page;
* warm reads (requests/s, p50/p99) of each, with ``wrk`` (``apt-get install -y wrk``; 32
  connections by default) when it is installed, else a Python load generator (GIL-bound: a
  floor); "all submissions" mode at page 1 and at a deep page (1,000 when the board has it);
* JSON board reads while a new scored submission arrives every second (ORM write in one
  transaction: scores + standings, then ``invalidate_boards``), and the time from that commit
  until the submission is visible on the board;
* JSON board reads while the whole board cache is cleared every second;
* RSS of each gunicorn worker, Redis ``used_memory`` and the board entries' own memory.

Prints one JSON line per measurement.
"""
from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))

from bench_boards import free_port, run_python, run_wrk, wait_up  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/"
METRICS = {"accuracy": {"title": "Accuracy", "higher_is_better": True, "fmt": "pct",
                        "lower": 0.0, "upper": 1.0},
           "ap": {"title": "AP", "higher_is_better": True, "fmt": "pct", "lower": 0.0,
                  "upper": 1.0},
           "fpr": {"title": "FPR", "higher_is_better": False, "fmt": "pct", "lower": 0.0,
                   "upper": 1.0}}
BENCHES = {"syncred": ["text"], "loki": ["image", "video", "audio", "text", "3d"],
           "tridf": ["image", "video", "audio"], "uniaidet": ["image", "video", "text"],
           "vct2": ["image"]}
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def out(**kw) -> None:
    print(json.dumps(kw), flush=True)


def load(url: str, n: int, seed: int) -> dict:
    """Schema + COPY of benchmarks, teams, submissions and scores; returns timings."""
    import psycopg
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    command.upgrade(cfg, "head")
    rng = random.Random(seed)
    t = time.perf_counter()
    with psycopg.connect(url.replace("+psycopg", "")) as conn, conn.cursor() as cur:
        bench_ids = {}
        for key, mods in BENCHES.items():
            tasks = [{"key": "detection", "kind": "detection", "modalities": mods,
                      "headline": "accuracy", "title": "Detection", "secondary": ["ap"]}]
            cur.execute("INSERT INTO benchmark (key, title, version, pack_path, meta_json, "
                        "description_md, agreement_md, agreement_version, private_revealed, "
                        "submissions_open, created_at) VALUES (%s, %s, '1', '', %s, "
                        "'Synthetic.', '', '', false, true, now()) "
                        "RETURNING id",
                        (key, key.upper(), json.dumps({"tasks": tasks, "splits": ["test"],
                                                       "metrics": METRICS,
                                                       "modalities": mods})))
            bench_ids[key] = cur.fetchone()[0]
        n_teams = max(1, n // 4)
        with cur.copy("COPY team (id, name, invite_code, created_at) FROM STDIN") as cp:
            for i in range(1, n_teams + 1):
                cp.write_row((i, f"team-{i:06d}", f"inv-{i:06d}", T0))
        keys = list(BENCHES)
        with cur.copy("COPY submission (id, benchmark_id, split, team_id, kind, method_name, "
                      "description, paper_url, code_url, is_public, status, file_path, "
                      "file_sha256, file_size, created_at, attempts, hidden, is_baseline, "
                      "selected, counts_toward_quota) FROM STDIN") as cp:
            for i in range(1, n + 1):
                cp.write_row((i, bench_ids[keys[i % 5]], "test", 1 + (i // 5) % n_teams,
                              "predictions", f"method {i}", "", "", "", True, "scored", "", "",
                              0, T0 + timedelta(seconds=i), 1, False, False, False, True))
        buf = io.StringIO()
        rows = 0
        with cur.copy("COPY score (submission_id, part, task, metric, slice_key, slice_json, "
                      "value, ci_low, ci_high, n, metric_version) FROM STDIN") as cp:
            for i in range(1, n + 1):
                skill = rng.random()
                mods = BENCHES[keys[i % 5]]
                for part in ("public", "private", "all"):
                    for skey in ("", f"modality={mods[0]}", f"modality={mods[-1]}"):
                        sl = json.dumps(dict([skey.split("=")]) if skey else {})
                        for metric in METRICS:
                            # below 1.0: a streamed submission (1.0) then leads the board
                            v = round(min(0.99, max(0.0, skill + rng.gauss(0, 0.05))), 4)
                            v = round(1 - v, 4) if metric == "fpr" else v
                            cp.write_row((i, part, "detection", metric, skey, sl, v,
                                          max(0.0, v - 0.03), min(1.0, v + 0.03), 1000, "1"))
                            rows += 1
        del buf
        for table in ("team", "submission", "score"):
            cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"(SELECT max(id) FROM {table}))")
        conn.commit()
        conn.autocommit = True
        cur.execute("ANALYZE")
    copy_s = time.perf_counter() - t
    from sqlalchemy.orm import Session

    from leaderboard.server.boards import rebuild
    from leaderboard.server.db import make_engine
    engine = make_engine(url)
    t = time.perf_counter()
    cpu = time.process_time()
    with Session(engine) as session:
        standing_rows = rebuild.rebuild(session)
        session.commit()
    rebuild_s, rebuild_cpu = time.perf_counter() - t, time.process_time() - cpu
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM ANALYZE")  # as autovacuum would leave a live database
    engine.dispose()
    return {"score_rows": rows, "copy_s": round(copy_s, 1), "standing_rows": standing_rows,
            "rebuild_standings_s": round(rebuild_s, 1),
            "rebuild_python_cpu_s": round(rebuild_cpu, 1),
            "vacuum_analyze_s": round(time.perf_counter() - t - rebuild_s, 1)}


def get(port: int, path: str) -> tuple[int, bytes, float]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    t = time.perf_counter()
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body, time.perf_counter() - t


def rss_mb(master_pid: int) -> list[float]:
    kids = subprocess.run(["pgrep", "-P", str(master_pid)], capture_output=True,
                          text=True).stdout.split()
    res = []
    for pid in kids:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                res.append(round(int(line.split()[1]) / 1024, 1))
    return res


def reader(port: int, path: str, *, duration: int, connections: int) -> dict:
    """Warm reads of ``path``: wrk when installed, else the Python generator (a floor)."""
    import shutil
    if shutil.which("wrk"):
        return run_wrk(f"http://127.0.0.1:{port}{path}", duration=duration,
                       connections=connections)
    return {**run_python(port, path, duration=duration, connections=connections),
            "tool": "python"}


def cpu_per_request(paths: dict, env: dict, *, n: int = 300) -> dict:
    """CPU per warm request in this process (Flask's test client against the same database and
    Redis): the page's own cost, without the server's or the network's."""
    from leaderboard.server.web import create_app
    app = create_app({"DATABASE_URL": env["DATABASE_URL"], "DATA_DIR": env["DATA_DIR"],
                      "SECRET_KEY": "bench", "COOKIE_SECURE": "0",
                      "REDIS_URL": env["REDIS_URL"], "RATELIMIT_ENABLED": "0"})
    client = app.test_client()
    out_ = {}
    for label, path in paths.items():
        for _ in range(20):  # warm: the cache filled, the generations memoised
            assert client.get(path).status_code == 200
        t = time.process_time()
        for _ in range(n):
            client.get(path)
        out_[label] = round(1000 * (time.process_time() - t) / n, 3)
    return out_


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--submissions", type=int, default=50000)
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--redis-url", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", action="store_true", help="keep the database")
    ap.add_argument("--load-only", metavar="NAME",
                    help="only load (COPY + rebuild) into database NAME and keep it: a template "
                         "for --from-template")
    ap.add_argument("--from-template", metavar="NAME",
                    help="copy the loaded database NAME (CREATE DATABASE ... TEMPLATE) instead of "
                         "loading: a 500,000 load takes minutes, a copy seconds")
    args = ap.parse_args(argv)
    import redis
    from sqlalchemy import create_engine, text

    name = args.load_only or f"lb_bench_scale_boards_{uuid.uuid4().hex[:8]}"
    admin = create_engine(PG + "postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        if args.from_template:
            t = time.perf_counter()
            c.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{args.from_template}"'))
            out(setup="copy", template=args.from_template, s=round(time.perf_counter() - t, 1))
        else:
            c.execute(text(f'CREATE DATABASE "{name}"'))
    url = PG + name
    if args.load_only:
        out(setup="load", submissions=args.submissions, database=name,
            **load(url, args.submissions, args.seed))
        admin.dispose()
        return 0
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-scale-"))
    r = redis.Redis.from_url(args.redis_url)
    r.flushdb()
    proc = None
    try:
        if not args.from_template:
            out(setup="load", submissions=args.submissions,
                **load(url, args.submissions, args.seed))
        port = free_port()
        env = {**os.environ, "DATABASE_URL": url, "DATA_DIR": str(tmp / "data"),
               "SECRET_KEY": "bench", "COOKIE_SECURE": "0", "REDIS_URL": args.redis_url,
               "RATELIMIT_ENABLED": "0"}
        proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-w", "2", "--threads", "4",
                                 "--worker-class", "gthread", "-b", f"127.0.0.1:{port}",
                                 "--log-level", "warning", "leaderboard.server.web:create_app()"],
                                cwd=ROOT, env=env, start_new_session=True)
        wait_up(port, timeout=60)
        os.environ.update({k: env[k] for k in ("DATABASE_URL", "REDIS_URL", "DATA_DIR")})
        from leaderboard.server.boards.cache import invalidate_boards
        deep = max(1, min(1000, args.submissions // 5 // 50))
        paths = {"json": "/api/v1/boards/loki/detection/test",
                 "html": "/benchmarks/loki/boards/detection/test",
                 "json_all_p1": "/api/v1/boards/loki/detection/test?mode=all",
                 f"json_all_p{deep}": f"/api/v1/boards/loki/detection/test?mode=all&page={deep}",
                 "home": "/", "modality": "/modalities/image/detection",
                 "modality_json": "/api/v1/modalities/image/detection"}
        for label, path in paths.items():
            cold = []
            for _ in range(5):
                invalidate_boards()
                time.sleep(0.6)  # the workers' generation memo (BOARD_CACHE_GEN_TTL_S)
                status, body, s = get(port, path)
                assert status == 200, (path, status, body[:300])
                cold.append(round(1000 * s, 1))
            get(port, path)
            warm = reader(port, path, duration=args.duration, connections=args.connections)
            out(measure="read", page=label, path=path, cold_ms=cold, bytes=len(body),
                warm_rps=round(warm["requests_per_s"]), warm_p50_ms=round(warm["p50_ms"], 1),
                warm_p99_ms=round(warm["p99_ms"], 1), errors=warm["errors"], tool=warm["tool"])
        # a stream of new scored submissions (1/s) while the JSON board is read
        stop = threading.Event()
        visible: list[float] = []

        def scorer():
            from leaderboard.server.db import Database
            from leaderboard.server.models import Benchmark, Score, Submission
            db = Database(url)  # its sessions keep the standings (the server's only kind)
            with db.session() as s:
                loki = s.query(Benchmark).filter_by(key="loki").one()
                while not stop.is_set():
                    t = time.perf_counter()
                    sub = Submission(benchmark_id=loki.id, split="test", team_id=1,
                                     method_name="stream", status="scored",
                                     created_at=datetime.now(timezone.utc))
                    s.add(sub)
                    s.flush()
                    for part in ("public", "private", "all"):
                        for metric in METRICS:
                            s.add(Score(submission_id=sub.id, part=part, task="detection",
                                        metric=metric, slice_key="", slice_json={},
                                        value=0.0 if metric == "fpr" else 1.0, n=1000))
                    s.commit()
                    invalidate_boards("loki")
                    committed = time.perf_counter()
                    while time.perf_counter() - committed < 5:
                        _st, body, _ = get(port, paths["json"] + "?per_page=5")
                        if sub.id in [row["submission_id"] for row in
                                      json.loads(body)["rows"]]:
                            visible.append(round(1000 * (time.perf_counter() - committed), 1))
                            break
                        time.sleep(0.01)
                    stop.wait(max(0.0, 1.0 - (time.perf_counter() - t)))
            db.dispose()

        th = threading.Thread(target=scorer)
        th.start()
        res = reader(port, paths["json"], duration=args.duration, connections=args.connections)
        stop.set()
        th.join(30)
        out(measure="reads_during_scoring_1_per_s", rps=round(res["requests_per_s"]),
            p50_ms=round(res["p50_ms"], 1), p99_ms=round(res["p99_ms"], 1),
            errors=res["errors"], scored_to_visible_ms=visible)
        stop.clear()

        def clearer():
            while not stop.wait(1.0):
                invalidate_boards()

        th = threading.Thread(target=clearer)
        th.start()
        res = reader(port, paths["json"], duration=args.duration, connections=args.connections)
        stop.set()
        th.join(10)
        out(measure="reads_during_cache_clears_1_per_s", rps=round(res["requests_per_s"]),
            p50_ms=round(res["p50_ms"], 1), p99_ms=round(res["p99_ms"], 1),
            errors=res["errors"])
        out(measure="cpu_per_warm_request_ms", **cpu_per_request(
            {k: paths[k] for k in ("json", "html", "home", "modality", "modality_json")}, env))
        board_bytes = sum(r.memory_usage(k) or 0 for k in r.scan_iter("lb:boards:*"))
        out(measure="memory", worker_rss_mb=rss_mb(proc.pid),
            redis_used_memory_mb=round(r.info("memory")["used_memory"] / 2**20, 1),
            redis_board_entries=sum(1 for _ in r.scan_iter("lb:boards:v:*")),
            redis_board_entries_mb=round(board_bytes / 2**20, 2))
    finally:
        if proc is not None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        r.flushdb()
        if not args.keep:
            with admin.connect() as c:
                c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
