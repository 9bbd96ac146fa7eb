"""Submission latency with a real worker (issue 3): "a 10,000-row upload is scored and visible
within 3 s". Not a test: prints numbers.

    .venv/bin/python perf/bench_submit.py [--rows 10000] [--runs 3]
        [--pg-admin-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres]
        [--redis-url redis://127.0.0.1:6379/12]

Setup (nothing timed): the UniAIDet demo pack at ``--scale large`` (one block, detection x image;
its dev split has 23,794 rows), with the dev split cut to its first ``--rows`` items so that one
whole block is exactly ``--rows`` rows (``--rows 0`` keeps the whole block); a fresh PostgreSQL
database (``lb_bench_<hex>``, built by ``alembic upgrade head``, dropped at the end); Redis db 12
(flushed before and after); ``python -m leaderboard import-pack``; one user, team and API token;
``gunicorn -w 2`` on 127.0.0.1 and one ``python -m leaderboard worker --queues scoring`` process.

Each run writes a fresh random-baseline predictions file (a new seed, so every upload differs),
then times, from just before ``POST /api/v1/submissions`` (token, multipart):
upload (the 202 answer), scored (``GET /api/v1/submissions/<id>`` polled every ``--poll-ms``
says "scored") and visible (the board JSON, ``mode=all``, lists the submission). Every run is
reported, the first (cold worker) included; one JSON line per run, then a summary line.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BENCHMARK, TASK, SPLIT = "uniaidet", "detection", "dev"
TARGET_S = 3.0


def build_pack(out: Path, rows: int) -> tuple[Path, int]:
    """The large UniAIDet demo pack with its dev split cut to ``rows`` items (0: all)."""
    from leaderboard.demo import generate

    pack = generate(BENCHMARK, out, scale="large", seed=0)
    split_dir = pack / "splits" / SPLIT
    items = (split_dir / "items.jsonl").read_text().splitlines()
    if rows:
        if rows > len(items):
            raise SystemExit(f"--rows {rows} exceeds the {len(items)} rows of the {SPLIT} split")
        items = items[:rows]
        keep = {json.loads(line)["id"] for line in items}
        labels = [line for line in (split_dir / "labels.jsonl").read_text().splitlines()
                  if json.loads(line)["id"] in keep]
        (split_dir / "items.jsonl").write_text("\n".join(items) + "\n")
        (split_dir / "labels.jsonl").write_text("\n".join(labels) + "\n")
    return pack, len(items)


def create_database(admin_url: str) -> str:
    from sqlalchemy import create_engine, text

    name = f"lb_bench_{secrets.token_hex(4)}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def drop_database(admin_url: str, url: str) -> None:
    from sqlalchemy import create_engine, text

    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)'))
    admin.dispose()


def make_member(env: dict) -> str:
    """A user in a team with an API token (through the services, as the pages would)."""
    from leaderboard.server.services import accounts, teams, tokens
    from leaderboard.server.web import create_app

    app = create_app(env)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        user = accounts.register(s, email="bench@example.org", display_name="Bench",
                                 password="correct horse battery")
        s.flush()
        teams.create_team(s, user, name="Bench Team")
        _, plain = tokens.create_token(s, user, name="bench")
    app.extensions["lb_db"].dispose()
    return plain


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(base: str, procs: list[subprocess.Popen], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            raise SystemExit("a server process exited during start-up (see its log)")
        try:
            if requests.get(f"{base}/healthz", timeout=5).status_code == 200:
                return
        except requests.RequestException:  # not listening yet, or still starting
            pass
        time.sleep(0.2)
    raise SystemExit(f"{base} did not answer /healthz within {timeout_s} s")


def one_run(base: str, token: str, path: Path, *, poll_s: float, timeout_s: float) -> dict:
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {token}"
    board = f"{base}/api/v1/boards/{BENCHMARK}/{TASK}/{SPLIT}"
    t0 = time.perf_counter()
    with open(path, "rb") as fh:
        resp = http.post(f"{base}/api/v1/submissions",
                         data={"benchmark": BENCHMARK, "split": SPLIT,
                               "method_name": path.stem, "is_public": "1"},
                         files={"file": (path.name, fh, "application/jsonl")})
    t_upload = time.perf_counter() - t0
    if resp.status_code != 202:
        raise SystemExit(f"upload answered {resp.status_code}: {resp.text[:500]}")
    sid = resp.json()["id"]
    t_scored = t_visible = None
    stamps = {}
    while time.perf_counter() - t0 < timeout_s:
        if t_scored is None:
            status = http.get(f"{base}/api/v1/submissions/{sid}").json()
            if status["status"] == "failed":
                raise SystemExit(f"submission {sid} failed: {status.get('failure_lines')}")
            if status["status"] == "scored":
                t_scored = time.perf_counter() - t0
                stamps = {k: datetime.fromisoformat(status[k])
                          for k in ("created_at", "started_at", "finished_at")}
        if t_scored is not None:
            rows = requests.get(board, params={"mode": "all", "per_page": 500}).json()["rows"]
            if any(r.get("submission_id") == sid for r in rows):
                t_visible = time.perf_counter() - t0
                break
        time.sleep(poll_s)
    return {"submission": sid, "upload_s": round(t_upload, 3),
            "scored_s": None if t_scored is None else round(t_scored, 3),
            "visible_s": None if t_visible is None else round(t_visible, 3),
            "file_mb": round(path.stat().st_size / 2**20, 2),
            # from the row's own timestamps: waiting for the worker, then the job itself
            "wait_s": _delta(stamps, "created_at", "started_at"),
            "job_s": _delta(stamps, "started_at", "finished_at")}


def _delta(stamps: dict, start: str, end: str) -> float | None:
    if start not in stamps or end not in stamps:
        return None
    return round((stamps[end] - stamps[start]).total_seconds(), 3)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000, help="rows of the one block (0: all)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--poll-ms", type=int, default=20)
    ap.add_argument("--timeout-s", type=float, default=60.0, help="give up on one run after this")
    ap.add_argument("--pg-admin-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/12")
    ap.add_argument("--simple-worker", action="store_true",
                    help="run jobs in the worker process (--simple: no fork per job)")
    args = ap.parse_args(argv)
    if args.rows < 0 or args.runs < 1 or args.poll_ms < 1:
        ap.error(f"need --rows >= 0, --runs >= 1, --poll-ms >= 1; got {args.rows}, "
                 f"{args.runs}, {args.poll_ms}")

    import redis
    from cryptography.fernet import Fernet

    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack
    from leaderboard.server.cli import upgrade_database

    tmp = Path(tempfile.mkdtemp(prefix="lb_bench_submit_"))
    pack, n_rows = build_pack(tmp / "packs", args.rows)
    conn = redis.Redis.from_url(args.redis_url)
    conn.flushdb()
    db_url = create_database(args.pg_admin_url)
    procs: list[subprocess.Popen] = []
    logs = []
    try:
        upgrade_database(db_url)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "DATABASE_URL": db_url,
               "REDIS_URL": args.redis_url, "DATA_DIR": str(tmp / "data"),
               "SECRET_KEY": secrets.token_urlsafe(32), "LABEL_KEYS": Fernet.generate_key().decode(),
               "COOKIE_SECURE": "0", "DAILY_QUOTA": str(args.runs + 5)}
        py = sys.executable
        subprocess.run([py, "-m", "leaderboard", "import-pack", str(pack), "--no-media"],
                       cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        token = make_member(env)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        for name, cmd in (
                ("gunicorn", [str(Path(py).parent / "gunicorn"), "-w", "2", "-b",
                              f"127.0.0.1:{port}", "app:app"]),
                ("worker", [py, "-m", "leaderboard", "worker", "--queues", "scoring"]
                 + (["--simple"] if args.simple_worker else []))):
            log = open(tmp / f"{name}.log", "wb")  # noqa: SIM115 - closed in finally
            logs.append(log)
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log,
                                          stderr=subprocess.STDOUT))
        wait_up(base, procs)
        loaded = load_pack(pack)
        results = []
        for i in range(args.runs):
            path = tmp / f"random-seed{i + 1}.jsonl"
            write_baseline(loaded, SPLIT, "random", path, seed=i + 1)
            result = {"run": i + 1, "rows": n_rows,
                      **one_run(base, token, path, poll_s=args.poll_ms / 1000,
                                timeout_s=args.timeout_s)}
            results.append(result)
            print(json.dumps(result), flush=True)
        visible = [r["visible_s"] for r in results]
        print(json.dumps({"summary": True, "rows": n_rows, "runs": args.runs,
                          "worker": "simple" if args.simple_worker else "fork per job",
                          "max_visible_s": None if None in visible else max(visible),
                          "target_s": TARGET_S,
                          "met": None not in visible and max(visible) <= TARGET_S}))
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for log in logs:
            log.close()
        conn.flushdb()
        conn.close()
        drop_database(args.pg_admin_url, db_url)
        for bulky in ("packs", "data"):  # tens of MB; the logs and predictions stay
            shutil.rmtree(tmp / bulky, ignore_errors=True)
        print(f"logs: {tmp}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
