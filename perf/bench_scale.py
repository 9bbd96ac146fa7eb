"""Boards at scale (issues 16, 25, 39): N scored submissions, gunicorn, PostgreSQL + Redis.

    .venv/bin/python perf/bench_scale.py --submissions 50000 \\
        --redis-url redis://127.0.0.1:6402/5 [--duration 8] [--keep]
    # load once, then run against copies of it
    .venv/bin/python perf/bench_scale.py --submissions 500000 --load-only lb_scale_500k
    .venv/bin/python perf/bench_scale.py --from-template lb_scale_500k --redis-url ...
    # several sizes side by side in one run (issue 39)
    .venv/bin/python perf/bench_scale.py --sizes 5000,50000,500000 \\
        --from-templates lb_scale_5k,lb_scale_50k,lb_scale_500k [--only reads,writes,rounds]

Each size gets its own PostgreSQL database (``lb_bench_scale_boards_<random>``: a copy of its
template, ``CREATE DATABASE ... TEMPLATE``, or a fresh load; dropped at the end unless
``--keep``), its own Redis (``--redis-url`` for a single size, else a private ``redis-server``
per size, so that the sizes run side by side without sharing cache keys) and its own
``gunicorn -w 2 --threads 4`` (gthread). A fresh load builds the schema with ``alembic upgrade
head`` and bulk-loads (COPY) five benchmarks named after the demo benchmarks (syncred, loki,
tridf, uniaidet, vct2: synthetic metadata, one detection task each over image/video/...), N
scored submissions spread over them (4 per team, public/private/all parts, overall +
per-modality slices, 3 metrics: 27 score rows per submission), then builds the standings and
the modality boards with the set-based rebuild (`leaderboard.server.boards.rebuild.rebuild`,
issue 25), timed. Parts (``--only``):

* ``reads``: cold reads (every board entry invalidated, first request, 5 tries) and warm reads
  (``wrk``, 32 connections; a Python generator, a floor, without it) of the JSON board, HTML
  board, all-mode pages, home and the modality page; CPU per warm request in-process;
* ``writes``: open-loop JSON board reads (`perf/openloop.py`: a fixed rate, latency from each
  request's due time, so a stall counts for every request due during it) at half the warm
  maximum ``wrk`` measured, alone; while a separate scoring process (`perf/scoring_stream.py`:
  niced by ``WORKER_NICE`` as ``leaderboard worker`` is, a job's CPU, then the ORM write with
  the standings hook and the invalidation) scores one submission a second, with the time from
  its commit until the submission shows on the board and what PostgreSQL's backends wait on;
  and while the whole board cache is cleared every second;
* ``rounds``: warm JSON, HTML and home (``wrk``) at every size, ``--rounds`` times, the sizes
  alternating within each round (so the machine's drifting load falls on all alike); medians.

Prints one JSON line per measurement, then a table (a JSON line and markdown rows).
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
            cur.execute("INSERT INTO benchmark (key, family, title, version, pack_path, "
                        "meta_json, description_md, agreement_md, agreement_version, "
                        "private_revealed, submissions_open, created_at) VALUES (%s, %s, %s, "
                        "'1', '', %s, 'Synthetic.', '', '', false, true, now()) "
                        "RETURNING id",
                        (key, key, key.upper(), json.dumps({"tasks": tasks, "splits": ["test"],
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


PATHS = {"json": "/api/v1/boards/loki/detection/test",
         "html": "/benchmarks/loki/boards/detection/test",
         "json_all_p1": "/api/v1/boards/loki/detection/test?mode=all",
         "home": "/", "modality": "/modalities/image/detection",
         "modality_json": "/api/v1/modalities/image/detection"}


class Site:
    """One size: a copy of its template (or a fresh load), its own Redis, two gunicorn workers."""

    def __init__(self, admin, size: int, template: str | None, redis_url: str | None,
                 args, tmp: pathlib.Path):
        self.size, self.template, self.args = size, template, args
        self.name = f"lb_bench_scale_boards_{uuid.uuid4().hex[:8]}"
        self.url = PG + self.name
        self.admin = admin
        self.redis_proc = None
        if redis_url is None:  # a private Redis, so that several sizes can run side by side
            rport = free_port()
            self.redis_proc = subprocess.Popen(
                ["redis-server", "--port", str(rport), "--save", "", "--appendonly", "no",
                 "--loglevel", "warning"], stdout=subprocess.DEVNULL, start_new_session=True)
            redis_url = f"redis://127.0.0.1:{rport}/0"
        self.redis_url = redis_url
        self.data_dir = tmp / f"data-{size}"
        self.proc = None
        self.port = None

    def setup(self) -> None:
        from sqlalchemy import text
        with self.admin.connect() as c:
            if self.template:
                t = time.perf_counter()
                c.execute(text(f'CREATE DATABASE "{self.name}" TEMPLATE "{self.template}"'))
                out(setup="copy", size=self.size, template=self.template,
                    s=round(time.perf_counter() - t, 1))
            else:
                c.execute(text(f'CREATE DATABASE "{self.name}"'))
        if not self.template:
            out(setup="load", submissions=self.size,
                **load(self.url, self.size, self.args.seed))
        import redis
        for _ in range(50):
            try:
                self.redis = redis.Redis.from_url(self.redis_url)
                self.redis.flushdb()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.1)
        from leaderboard.server.boards.cache import cache_from_config
        self.cache = cache_from_config({"REDIS_URL": self.redis_url,
                                        "DATA_DIR": str(self.data_dir)})
        self.env = {**os.environ, "DATABASE_URL": self.url, "DATA_DIR": str(self.data_dir),
                    "SECRET_KEY": "bench", "COOKIE_SECURE": "0", "REDIS_URL": self.redis_url,
                    "RATELIMIT_ENABLED": "0", "PYTHONPATH": str(ROOT),
                    **dict(kv.split("=", 1) for kv in self.args.server_env)}
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-w", "2", "--threads", "4", "--worker-class",
             "gthread", "-b", f"127.0.0.1:{self.port}", "--log-level", "warning",
             "leaderboard.server.web:create_app()"], cwd=ROOT, env=self.env,
            start_new_session=True)
        wait_up(self.port, timeout=60)
        for path in PATHS.values():  # every worker warm on every page
            for _ in range(4):
                assert get(self.port, path)[0] == 200, path

    def link(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def teardown(self) -> None:
        from sqlalchemy import text
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
        if self.redis_proc is not None:
            os.killpg(self.redis_proc.pid, signal.SIGTERM)
            self.redis_proc.wait(timeout=10)
        elif hasattr(self, "redis"):
            self.redis.flushdb()
        if not self.args.keep:
            with self.admin.connect() as c:
                c.execute(text(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))


def measure_reads(site: Site, args) -> dict:
    """Cold (first request after invalidation, 5 tries) and warm (wrk) reads of every page."""
    deep = max(1, min(1000, site.size // 5 // 50))
    paths = {**PATHS, f"json_all_p{deep}":
             f"/api/v1/boards/loki/detection/test?mode=all&page={deep}"}
    res = {}
    for label, path in paths.items():
        cold = []
        for _ in range(5):
            site.cache.invalidate()
            time.sleep(0.6)  # the workers' generation memo (BOARD_CACHE_GEN_TTL_S)
            status, body, s = get(site.port, path)
            assert status == 200, (path, status, body[:300])
            cold.append(round(1000 * s, 1))
        get(site.port, path)
        warm = reader(site.port, path, duration=args.duration, connections=args.connections)
        res[label] = {"cold_ms": cold, "warm_rps": round(warm["requests_per_s"])}
        out(measure="read", size=site.size, page=label, path=path, cold_ms=cold,
            bytes=len(body), warm_rps=round(warm["requests_per_s"]),
            warm_p50_ms=round(warm["p50_ms"], 1), warm_p99_ms=round(warm["p99_ms"], 1),
            errors=warm["errors"], tool=warm["tool"], load=os.getloadavg()[0])
    return res


def measure_writes(site: Site, args) -> dict:
    """Open-loop JSON board reads at half the warm maximum: alone, while a scoring process
    scores one submission a second, and while the whole cache is cleared every second."""
    from openloop import run_openloop
    path = PATHS["json"]
    get(site.port, path)
    top = reader(site.port, path, duration=args.duration, connections=args.connections)
    rate = args.rate or max(50, round(top["requests_per_s"] / 2))
    out(measure="warm_max_for_rate", size=site.size, rps=round(top["requests_per_s"]),
        p99_ms=round(top["p99_ms"], 1), rate=rate, load=os.getloadavg()[0])
    res = {"rate": rate}

    def run(label: str, **extra) -> dict:
        trace = str(pathlib.Path(args.trace_dir) / f"{label}-{site.size}.csv") \
            if args.trace_dir else None
        r = run_openloop(site.link(path), rate=rate, duration=args.openloop_duration,
                         procs=args.openloop_procs, trace=trace)
        by_s = r.pop("p99_by_second")
        out(measure=label, size=site.size, **r, **extra, p99_by_second=by_s,
            load=os.getloadavg()[0])
        res[label] = r
        return r

    run("openloop_alone")
    # a scoring process: niced as `leaderboard worker` is (WORKER_NICE), commits 1/s
    env = dict(site.env)
    if args.worker_nice is not None:
        env["WORKER_NICE"] = str(args.worker_nice)
    scorer = subprocess.Popen([sys.executable, str(ROOT / "perf" / "scoring_stream.py"),
                               "--rate", "1", "--cpu-ms", str(args.scoring_cpu_ms)],
                              env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    waits: dict[str, int] = {}

    def sample_waits():
        """What the database's backends wait on while reads and scoring run (every 20 ms)."""
        import psycopg
        with psycopg.connect(site.url.replace("+psycopg", ""), autocommit=True) as conn:
            while not stop.wait(0.02):
                for kind, event in conn.execute(
                        "SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE "
                        "datname = current_database() AND pid <> pg_backend_pid() AND "
                        "state = 'active'"):
                    key = f"{kind}:{event}" if kind else "cpu"
                    waits[key] = waits.get(key, 0) + 1
    commits: list[tuple[int, float, float]] = []
    visible: list[float] = []
    stop = threading.Event()

    def watch():
        for line in scorer.stdout:
            sid, t_commit, write_ms = line.split()
            commits.append((int(sid), float(t_commit), float(write_ms)))
            while not stop.is_set() and time.monotonic() - float(t_commit) < 5:
                _st, body, _ = get(site.port, path + "?per_page=60")
                if int(sid) in [row["submission_id"] for row in json.loads(body)["rows"]]:
                    visible.append(round(1000 * (time.monotonic() - float(t_commit)), 1))
                    break
                time.sleep(0.01)

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    sampler = threading.Thread(target=sample_waits, daemon=True)
    sampler.start()
    time.sleep(2.5)  # the scorer's imports and first job
    n0 = len(commits)
    r = run("openloop_scoring_1_per_s", worker_nice=int(env.get("WORKER_NICE", 10)),
            scoring_cpu_ms=args.scoring_cpu_ms)
    stop.set()
    os.killpg(scorer.pid, signal.SIGTERM)
    scorer.wait(10)
    done = commits[n0:]
    out(measure="scoring_during_openloop", size=site.size, jobs=len(done),
        write_ms=sorted(c[2] for c in done), scored_to_visible_ms=sorted(visible),
        commits_s=[round(c[1] - r["start_monotonic"], 3) for c in done],
        pg_active_samples=dict(sorted(waits.items(), key=lambda kv: -kv[1])))
    res["scored_to_visible_ms"] = sorted(visible)
    stop = threading.Event()

    def clearer():
        while not stop.wait(1.0):
            site.cache.invalidate()

    th = threading.Thread(target=clearer)
    th.start()
    run("openloop_cache_clears_1_per_s")
    stop.set()
    th.join(10)
    return res


def measure_rounds(sites: list[Site], args) -> dict:
    """Warm JSON / HTML / home (wrk) at every size, ``--rounds`` times, alternating the sizes
    within each round so that the machine's drifting load falls on all of them alike."""
    import statistics
    samples: dict[tuple[int, str], list[float]] = {}
    for rnd in range(args.rounds):
        order = sites if rnd % 2 == 0 else sites[::-1]
        for page in ("json", "html", "home"):
            for site in order:
                w = reader(site.port, PATHS[page], duration=args.duration,
                           connections=args.connections)
                samples.setdefault((site.size, page), []).append(w["requests_per_s"])
                out(measure="round", round=rnd, size=site.size, page=page,
                    rps=round(w["requests_per_s"]), p50_ms=round(w["p50_ms"], 1),
                    p99_ms=round(w["p99_ms"], 1), errors=w["errors"],
                    load=os.getloadavg()[0])
    med = {k: round(statistics.median(v)) for k, v in samples.items()}
    return {"medians": med, "samples": samples}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--submissions", type=int, default=50000)
    ap.add_argument("--sizes", help="several sizes in one run, e.g. 5000,50000,500000 (with "
                                    "--from-templates, one template per size)")
    ap.add_argument("--from-templates", help="templates of --sizes, comma-separated")
    ap.add_argument("--only", default="reads,writes,rounds",
                    help="which parts: reads (cold + warm of every page), writes (open-loop "
                         "reads alone / under scoring / under cache clears), rounds "
                         "(alternating warm JSON/HTML/home between sizes)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--rate", type=float, default=0,
                    help="open-loop rate (default: half the warm maximum measured with wrk)")
    ap.add_argument("--openloop-duration", type=float, default=15)
    ap.add_argument("--openloop-procs", type=int, default=1)
    ap.add_argument("--scoring-cpu-ms", type=float, default=150,
                    help="CPU each stand-in scoring job burns before its write")
    ap.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                    help="a setting for the web workers (and the scoring process), e.g. "
                         "BOARD_CACHE_STALE_RECHECK_S=0 for the cache's behaviour before "
                         "issue 39")
    ap.add_argument("--worker-nice", type=int, default=None,
                    help="WORKER_NICE of the scoring process (default: the config's, 10)")
    ap.add_argument("--trace-dir", help="write each open-loop run's per-request CSV here")
    ap.add_argument("--redis-url", help="Redis for a single size (default: a private "
                                        "redis-server per size)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", action="store_true", help="keep the database(s)")
    ap.add_argument("--load-only", metavar="NAME",
                    help="only load (COPY + rebuild) into database NAME and keep it: a template "
                         "for --from-template")
    ap.add_argument("--from-template", metavar="NAME",
                    help="copy the loaded database NAME (CREATE DATABASE ... TEMPLATE) instead of "
                         "loading: a 500,000 load takes minutes, a copy seconds")
    args = ap.parse_args(argv)
    from sqlalchemy import create_engine, text

    admin = create_engine(PG + "postgres", isolation_level="AUTOCOMMIT")
    if args.load_only:
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{args.load_only}"'))
        out(setup="load", submissions=args.submissions, database=args.load_only,
            **load(PG + args.load_only, args.submissions, args.seed))
        admin.dispose()
        return 0
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",")]
        templates = args.from_templates.split(",") if args.from_templates else [None] * len(
            sizes)
        if len(templates) != len(sizes):
            ap.error("--from-templates needs one template per size")
    else:
        sizes, templates = [args.submissions], [args.from_template]
    parts = set(args.only.split(","))
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-scale-"))
    redis_url = args.redis_url if len(sizes) == 1 else None
    sites = [Site(admin, n, t, redis_url, args, tmp) for n, t in zip(sizes, templates)]
    out(setup="start", sizes=sizes, templates=templates, load=os.getloadavg())
    summary: dict[int, dict] = {n: {} for n in sizes}
    try:
        for site in sites:
            site.setup()
        for site in sites:
            if "reads" in parts:
                summary[site.size]["reads"] = measure_reads(site, args)
            if "writes" in parts:
                summary[site.size]["writes"] = measure_writes(site, args)
        rounds = measure_rounds(sites, args) if "rounds" in parts and args.rounds else None
        if "reads" in parts:
            for site in sites:
                out(measure="cpu_per_warm_request_ms", size=site.size, **cpu_per_request(
                    {k: PATHS[k] for k in ("json", "html", "home", "modality")}, site.env))
        for site in sites:
            board_bytes = sum(site.redis.memory_usage(k) or 0
                              for k in site.redis.scan_iter("lb:boards:*"))
            out(measure="memory", size=site.size, worker_rss_mb=rss_mb(site.proc.pid),
                redis_used_memory_mb=round(site.redis.info("memory")["used_memory"] / 2**20, 1),
                redis_board_entries=sum(1 for _ in site.redis.scan_iter("lb:boards:v:*")),
                redis_board_entries_mb=round(board_bytes / 2**20, 2))
        table(sizes, summary, rounds)
    finally:
        for site in sites:
            try:
                site.teardown()
            except Exception as exc:  # noqa: BLE001 - tear the others down anyway
                print(f"teardown {site.size}: {exc}", file=sys.stderr)
        admin.dispose()
    out(setup="end", load=os.getloadavg())
    return 0


def table(sizes: list[int], summary: dict, rounds: dict | None) -> None:
    """The final table: one JSON line, then markdown rows for docs/performance.md."""
    rows: list[tuple[str, list[str]]] = []

    def cell(size, *keys, fmt=str):
        v = summary[size]
        for k in keys:
            if not isinstance(v, dict) or k not in v:
                return "—"
            v = v[k]
        return fmt(v)

    def span(xs):
        return f"{min(xs):.0f}-{max(xs):.0f} ms"

    if any("reads" in summary[n] for n in sizes):
        for page in ("json", "html", "home", "modality"):
            rows.append((f"cold {page}", [cell(n, "reads", page, "cold_ms", fmt=span)
                                          for n in sizes]))
    if rounds:
        for page in ("json", "html", "home"):
            base = rounds["medians"][(sizes[0], page)]
            rows.append((f"warm {page} (wrk, median of rounds)",
                         [f"{rounds['medians'][(n, page)]:,} req/s "
                          f"({100 * rounds['medians'][(n, page)] / base:.0f}%)"
                          for n in sizes]))
    if any("writes" in summary[n] for n in sizes):
        rows.append(("open-loop rate (half the warm max)",
                     [cell(n, "writes", "rate", fmt=lambda v: f"{v:.0f}/s") for n in sizes]))
        for label in ("openloop_alone", "openloop_scoring_1_per_s",
                      "openloop_cache_clears_1_per_s"):
            rows.append((f"{label}: p50 / p99 / max",
                         [cell(n, "writes", label, fmt=lambda r: (
                             f"{r['p50_ms']} / {r['p99_ms']} / {r['max_ms']} ms, "
                             f"{r['errors']} err, {r['late_sends']} late"))
                          for n in sizes]))
        rows.append(("scored -> visible", [cell(n, "writes", "scored_to_visible_ms",
                                                fmt=lambda v: span(v) if v else "—")
                                           for n in sizes]))
    out(measure="table", sizes=sizes, rows={k: v for k, v in rows})
    print("| what | " + " | ".join(f"{n:,}" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for label, cells in rows:
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
