"""Load test: N concurrent users against a gunicorn server on loopback (issue 7).

Each user is a thread with its own team, API token and HTTP session, looping for ``--duration``
seconds over a mix of board reads (API JSON, CSV and the HTML board page), status polls of its own
submissions, and predictions uploads (at most one every ``--upload-every`` seconds per user, under
the per-user SUBMIT_RATE_LIMIT). Any answer other than the expected status, and any connection
error, is an error. After the run it waits (bounded) until every accepted submission is scored.

    .venv/bin/python perf/load_test.py                      # 50 users, 60 s, private PG+Redis
    .venv/bin/python perf/load_test.py --users 10 --duration 10

Without ``--database-url``/``--redis-url`` it starts a private PostgreSQL and Redis on spare
loopback ports (the fault tests' helpers, `tests.production.services`); the web server is
``gunicorn app:app`` (gthread workers) plus ``--scoring-workers`` RQ workers, all on this host.
Prints requests, errors, throughput and latency percentiles per kind; exit code 1 on any error.
`Traffic` is reused by the PostgreSQL-restart fault test.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

EXPECTED = {"board": 200, "board_csv": 200, "board_page": 200, "status": 200, "upload": 202}


@dataclass
class Result:
    kind: str
    status: int | None  # None: no HTTP answer (connection refused/reset, timeout)
    latency_s: float
    started: float
    body: str = ""
    submission: int | None = None


@dataclass
class User:
    token: str
    submissions: list[int] = field(default_factory=list)
    last_upload: float = float("-inf")


class Traffic:
    """Closed-loop users: each does one request after the other until ``stop_at``."""

    def __init__(self, base_url: str, *, users: list[User], benchmark: str, task: str,
                 predictions: dict[str, Path], upload_every_s: float = 5.0, seed: int = 0,
                 timeout_s: float = 30.0):
        if not users:
            raise ValueError("users must not be empty")
        if upload_every_s <= 0:
            raise ValueError(f"upload_every_s must be > 0, got {upload_every_s!r}")
        self.base = base_url.rstrip("/")
        self.users, self.benchmark, self.task = users, benchmark, task
        self.splits = sorted(predictions)
        self.payloads = {s: p.read_bytes() for s, p in predictions.items()}
        self.upload_every_s, self.seed, self.timeout_s = upload_every_s, seed, timeout_s
        self.results: list[Result] = []
        self._lock = threading.Lock()

    def run(self, duration_s: float) -> list[Result]:
        """Run every user for ``duration_s`` seconds; returns this run's results."""
        stop_at = time.monotonic() + duration_s
        threads = [threading.Thread(target=self._user, args=(u, i, stop_at), daemon=True)
                   for i, u in enumerate(self.users)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=duration_s + 2 * self.timeout_s + 5)
        return list(self.results)

    def _user(self, user: User, index: int, stop_at: float) -> None:
        rng = random.Random(self.seed * 1000 + index)
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {user.token}"
        try:
            while time.monotonic() < stop_at:
                self._record(self._one(http, user, rng))
        finally:
            http.close()

    def _one(self, http: requests.Session, user: User, rng: random.Random) -> Result:
        now = time.monotonic()
        split = rng.choice(self.splits)
        if now - user.last_upload >= self.upload_every_s:
            user.last_upload = now
            return self._request(http, "upload", "POST", "/api/v1/submissions",
                                 data={"benchmark": self.benchmark, "split": split,
                                       "method_name": f"load-{rng.randrange(10**6)}"},
                                 files={"file": ("preds.jsonl", self.payloads[split])},
                                 user=user)
        roll = rng.random()
        if roll < 0.35 and user.submissions:
            sid = rng.choice(user.submissions[-5:])
            return self._request(http, "status", "GET", f"/api/v1/submissions/{sid}")
        if roll < 0.75:
            return self._request(http, "board", "GET",
                                 f"/api/v1/boards/{self.benchmark}/{self.task}/{split}")
        if roll < 0.85:
            return self._request(http, "board_csv", "GET",
                                 f"/api/v1/boards/{self.benchmark}/{self.task}/{split}.csv")
        return self._request(http, "board_page", "GET",
                             f"/benchmarks/{self.benchmark}/boards/{self.task}/{split}")

    def _request(self, http, kind, method, path, *, user: User | None = None, **kwargs) -> Result:
        started = time.monotonic()
        try:
            resp = http.request(method, self.base + path, timeout=self.timeout_s, **kwargs)
        except requests.RequestException as exc:
            return Result(kind, None, time.monotonic() - started, started, repr(exc)[:300])
        result = Result(kind, resp.status_code, time.monotonic() - started, started,
                        resp.text[:300] if resp.status_code != EXPECTED[kind] else "")
        if kind == "upload" and resp.status_code == 202 and user is not None:
            result.submission = resp.json()["id"]
            user.submissions.append(result.submission)
        return result

    def _record(self, result: Result) -> None:
        with self._lock:
            self.results.append(result)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in [0, 100]) of a non-empty list."""
    if not values:
        raise ValueError("percentile of an empty list")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def summarize(results: list[Result], duration_s: float) -> dict:
    """Requests, errors, throughput and latency percentiles (ms), overall and per kind."""
    def stats(rs: list[Result]) -> dict:
        lat = [r.latency_s * 1000 for r in rs]
        errors = [r for r in rs if r.status != EXPECTED[r.kind]]
        return {"requests": len(rs), "errors": len(errors),
                "rps": round(len(rs) / duration_s, 1),
                "p50_ms": round(percentile(lat, 50), 1), "p90_ms": round(percentile(lat, 90), 1),
                "p99_ms": round(percentile(lat, 99), 1), "max_ms": round(max(lat), 1),
                "mean_ms": round(statistics.fmean(lat), 1)}

    out = {"all": stats(results)} if results else {"all": {"requests": 0, "errors": 0}}
    for kind in sorted({r.kind for r in results}):
        out[kind] = stats([r for r in results if r.kind == kind])
    return out


# -- a self-contained server (used when no --url is given) ---------------------------------------
class LocalServer:
    """Private PostgreSQL + Redis (unless URLs are given), gunicorn and RQ scoring workers."""

    def __init__(self, *, users: int, web_workers: int, threads: int, scoring_workers: int,
                 database_url: str | None, redis_url: str | None):
        self._owned: list = []
        self.procs: list[subprocess.Popen] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="lb-load-"))
        self._log = open(self.tmp / "gunicorn.log", "wb")
        try:
            self._start(users, web_workers, threads, scoring_workers, database_url, redis_url)
        except BaseException:
            self.close()
            raise

    def _start(self, users, web_workers, threads, scoring_workers, database_url, redis_url):
        from cryptography.fernet import Fernet

        from tests.production.services import PostgresServer, RedisServer, free_port, postgres_bin
        if database_url is None:
            bindir = postgres_bin()
            if bindir is None:
                raise SystemExit("no PostgreSQL binaries: pass --database-url")
            pg = PostgresServer(bindir)
            self._owned.append(pg)
            pg.init()
            database_url = self._new_db(pg)
        if redis_url is None:
            rs = RedisServer(shutil.which("redis-server") or "redis-server")
            self._owned.append(rs)
            redis_url = rs.url()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url,
                    "DATA_DIR": str(self.tmp / "data"),
                    "LABEL_KEYS": Fernet.generate_key().decode(),
                    "SECRET_KEY": secrets.token_urlsafe(32), "COOKIE_SECURE": "0",
                    "DAILY_QUOTA": "100000", "PYTHONPATH": str(REPO)}
        self.benchmark, self.task, self.predictions, self.tokens = self._seed(users)
        self.procs.append(subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--workers", str(web_workers), "--threads",
             str(threads), "--worker-class", "gthread", "--bind", f"127.0.0.1:{self.port}",
             "--timeout", "60", "--graceful-timeout", "10", "app:app"],
            cwd=REPO, env=self.env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=self._log))
        for _ in range(scoring_workers):
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "leaderboard", "worker", "--queues", "scoring"],
                cwd=REPO, env=self.env, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self._wait_ready()

    @staticmethod
    def _new_db(pg) -> str:
        from sqlalchemy import create_engine, text

        from leaderboard.server.cli import upgrade_database
        admin = create_engine(pg.url(), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text('CREATE DATABASE "lb_load"'))
        admin.dispose()
        upgrade_database(pg.url("lb_load"))
        return pg.url("lb_load")

    def _seed(self, users: int):
        from leaderboard.core.baselines import write_baseline
        from leaderboard.core.packs import load_pack
        from leaderboard.demo import generate
        from leaderboard.server.config import load_config
        from leaderboard.server.services import accounts, teams, tokens
        from leaderboard.server.services.benchmarks import import_pack
        from leaderboard.server.web import create_app

        pack_dir = generate("syncred", self.tmp / "packs", scale="small", seed=0)
        pack = load_pack(pack_dir)
        preds = {}
        for split in pack.splits:
            preds[split] = self.tmp / f"{split}.jsonl"
            write_baseline(pack, split, "random", preds[split], seed=1)
        app = create_app(load_config(environ=self.env))
        plain = []
        with app.app_context(), app.extensions["lb_db"].scope() as s:
            import_pack(s, pack_dir, data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
            for i in range(users):
                user = accounts.register(s, email=f"load{i}@example.org",
                                         display_name=f"load{i}", password="load test password")
                teams.create_team(s, user, name=f"load team {i}")
                plain.append(tokens.create_token(s, user, name="load")[1])
        app.extensions["lb_db"].dispose()
        return pack.key, pack.tasks[0].key, preds, plain

    def _wait_ready(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        self._log.flush()
        tail = (self.tmp / "gunicorn.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"gunicorn did not become ready in {timeout_s}s; its log ends:\n{tail}")

    def statuses(self) -> dict[str, int]:
        from sqlalchemy import create_engine, func, select

        from leaderboard.server.models import Submission
        engine = create_engine(self.env["DATABASE_URL"])
        with engine.connect() as conn:
            rows = conn.execute(select(Submission.status, func.count())
                                .group_by(Submission.status)).all()
        engine.dispose()
        return {s: n for s, n in rows}

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for owned in reversed(self._owned):
            owned.close()
        self._log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--users", type=int, default=50)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    ap.add_argument("--upload-every", type=float, default=5.0, help="seconds between a user's "
                    "uploads")
    ap.add_argument("--web-workers", type=int, default=4)
    ap.add_argument("--threads", type=int, default=8, help="gthread threads per web worker")
    ap.add_argument("--scoring-workers", type=int, default=2)
    ap.add_argument("--database-url")
    ap.add_argument("--redis-url")
    ap.add_argument("--drain-timeout", type=float, default=300.0,
                    help="seconds to wait for every accepted submission to be scored")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON only")
    args = ap.parse_args(argv)
    if args.users < 1 or args.duration <= 0:
        ap.error("--users must be >= 1 and --duration > 0")
    server = LocalServer(users=args.users, web_workers=args.web_workers, threads=args.threads,
                         scoring_workers=args.scoring_workers, database_url=args.database_url,
                         redis_url=args.redis_url)
    try:
        traffic = Traffic(server.url, users=[User(t) for t in server.tokens],
                          benchmark=server.benchmark, task=server.task,
                          predictions=server.predictions, upload_every_s=args.upload_every)
        started = time.monotonic()
        results = traffic.run(args.duration)
        summary = summarize(results, time.monotonic() - started)
        accepted = sum(1 for r in results if r.submission is not None)
        drain_until = time.monotonic() + args.drain_timeout
        statuses = server.statuses()
        while time.monotonic() < drain_until and statuses.get("scored", 0) < accepted \
                and statuses.get("failed", 0) == 0:
            time.sleep(1)
            statuses = server.statuses()
        summary["submissions"] = {"accepted": accepted, **statuses}
        summary["config"] = {"users": args.users, "duration_s": args.duration,
                             "web_workers": args.web_workers, "threads": args.threads,
                             "scoring_workers": args.scoring_workers, "cpus": os.cpu_count()}
        errors = [r for r in results if r.status != EXPECTED[r.kind]]
        summary["error_samples"] = [(r.kind, r.status, r.body) for r in errors[:5]]
    finally:
        server.close()
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"{'kind':<11} {'requests':>8} {'errors':>6} {'req/s':>7} {'p50':>7} {'p90':>7} "
              f"{'p99':>7} {'max':>7}  (ms)")
        for kind, st in summary.items():
            if isinstance(st, dict) and "p50_ms" in st:
                print(f"{kind:<11} {st['requests']:>8} {st['errors']:>6} {st['rps']:>7} "
                      f"{st['p50_ms']:>7} {st['p90_ms']:>7} {st['p99_ms']:>7} {st['max_ms']:>7}")
        print("submissions:", summary["submissions"])
        print("config:", summary["config"])
        for sample in summary["error_samples"]:
            print("error:", sample)
    ok = summary["all"]["errors"] == 0 and summary["submissions"].get("scored", 0) == accepted
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
