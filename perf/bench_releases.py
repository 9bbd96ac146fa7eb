"""Releases at scale (issue 37): 1,000 container submissions x 40 generators x 3 releases.

    flock /tmp/bench.lock .venv/bin/python perf/bench_releases.py [--submissions 1000]
        [--generators 40] [--releases 3] [--duration 10] [--database-url postgresql+...]

Builds a fresh database (SQLite in a temporary directory unless ``--database-url`` names an
empty PostgreSQL database) with ``alembic upgrade head`` and synthesises, directly in it, one
benchmark family ``bench`` with ``--releases`` releases (release r dates the first
``generators * r / releases`` generators, so each release adds generators), ``--submissions``
original container submissions on release 1 (two per team, made over 2023-2025), and the
platform's re-run of each on every later release (``rerun_of_id``). Every submission gets its
test split's public-part scores and a per-item outcome file (reals plus ``--per-generator``
fakes per generator of its release, 0/1 outcomes from a per-detector skill that decays on the
generators made public after it), then the standings are built in one pass.

Then ``gunicorn -w 2`` on 127.0.0.1 and, per URL, one cold request (the first read after a
change: the computation) and ``wrk`` on the warm (cached) URL:

* the matrix page of the latest release (``/benchmarks/bench-vN/boards/detection/test/
  generators``): targets cold <= 200 ms, warm >= 500 req/s;
* the decay page (``/benchmarks/bench/boards/detection/test/decay``) and its JSON.

Re-run scheduling is **not measured**: the scheduling service is built in parallel (issue 37,
item 2) and is not in this tree; `measure_scheduling` is the hook where it goes (it reports
"not measured"). Prints JSON lines.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from perf.bench_boards import free_port, run_python, run_wrk, wait_up, warm_up  # noqa: E402

METRICS = {"accuracy": {"title": "Accuracy", "higher_is_better": True, "fmt": "pct",
                        "lower": 0.0, "upper": 1.0},
           "fpr": {"title": "FPR", "higher_is_better": False, "fmt": "pct", "lower": 0.0,
                   "upper": 1.0}}
TASKS = [{"key": "detection", "kind": "detection", "modalities": ["image"],
          "headline": "accuracy", "title": "Detection", "secondary": ["fpr"]}]
T0 = datetime(2023, 1, 1, tzinfo=timezone.utc)


def generator_table(n: int) -> list[dict]:
    """``n`` generators made public one every 25 days from 2022-06-01."""
    start = datetime(2022, 6, 1)
    return [{"key": f"gen-{i:02d}", "name": f"Gen {i:02d}", "modality": "image",
             "date": (start + timedelta(days=25 * i)).date().isoformat()} for i in range(n)]


def build_db(url: str, data_dir: pathlib.Path, *, n_subs: int, n_gen: int, n_rel: int,
             reals: int, per_gen: int, seed: int) -> dict:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import insert
    from sqlalchemy.orm import Session

    from leaderboard.core.outcomes import Outcome
    from leaderboard.server.boards import rebuild
    from leaderboard.server.db import make_engine
    from leaderboard.server.models import Benchmark, Score, Submission, Team
    from leaderboard.server.services import outcome_store

    cfg = Config()
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    command.upgrade(cfg, "head")
    rng = np.random.default_rng(seed)
    py = random.Random(seed)
    gens = generator_table(n_gen)
    engine = make_engine(url)
    t = time.perf_counter()
    with engine.begin() as conn:
        rel_ids, rel_gens = [], []
        for r in range(1, n_rel + 1):
            mine = gens[:max(1, n_gen * r // n_rel)]
            rel_gens.append(mine)
            rel_ids.append(conn.execute(insert(Benchmark).returning(Benchmark.id), [{
                "key": "bench" if r == 1 else f"bench-v{r}", "family": "bench", "release": r,
                "released_at": datetime.fromisoformat(mine[-1]["date"]).replace(
                    tzinfo=timezone.utc) + timedelta(days=10),
                "title": "Bench", "version": str(r), "pack_path": "",
                "meta_json": {"tasks": TASKS, "splits": ["dev", "test"], "metrics": METRICS,
                              "modalities": ["image"], "generators": mine},
                "description_md": "A synthetic benchmark family for **load testing**."}]
            ).scalar_one())
        n_teams = max(1, n_subs // 2)
        team_ids = conn.execute(insert(Team).returning(Team.id), [
            {"name": f"team-{i:05d}", "invite_code": f"inv-{i:05d}", "created_at": T0}
            for i in range(n_teams)]).scalars().all()
        made = [T0 + timedelta(days=py.uniform(0, 900)) for _ in range(n_subs)]
        originals = conn.execute(insert(Submission).returning(Submission.id), [
            {"benchmark_id": rel_ids[0], "split": "test", "team_id": team_ids[i % n_teams],
             "method_name": f"method {i // n_teams}", "status": "scored", "is_public": True,
             "kind": "container", "created_at": made[i], "is_baseline": False}
            for i in range(n_subs)]).scalars().all()
        subs = [(sid, 0, i) for i, sid in enumerate(originals)]
        for r in range(1, n_rel):
            reruns = conn.execute(insert(Submission).returning(Submission.id), [
                {"benchmark_id": rel_ids[r], "split": "test", "team_id": team_ids[i % n_teams],
                 "method_name": f"method {i // n_teams}", "status": "scored",
                 "is_public": True, "kind": "container", "rerun_of_id": originals[i],
                 "created_at": datetime.fromisoformat(rel_gens[r][-1]["date"]).replace(
                     tzinfo=timezone.utc) + timedelta(days=11), "is_baseline": False}
                for i in range(n_subs)]).scalars().all()
            subs += [(sid, r, i) for i, sid in enumerate(reruns)]
        skill = rng.uniform(0.55, 0.95, n_subs)
        scores = []
        for sid, r, i in subs:
            mine = rel_gens[r]
            gen = np.concatenate([np.full(reals, -1), np.repeat(np.arange(len(mine)), per_gen)])
            later = np.array([g["date"] > made[i].date().isoformat() for g in mine])
            p = np.where(gen < 0, skill[i], np.where(later[np.maximum(gen, 0)],
                                                      skill[i] - 0.25, skill[i]))
            x = (rng.random(len(gen)) < p).astype(np.float32)
            o = Outcome("detection", "accuracy", "mean", x, (gen >= 0).astype(np.int16),
                        np.zeros(len(gen)), ("image",), {}, generator=gen.astype(np.int16),
                        generators=tuple(g["key"] for g in mine))
            outcome_store.write(data_dir, sid, {"public": {"detection": o}})
            acc = float(x.mean())
            fpr = float(1.0 - x[gen < 0].mean())
            for metric, v in (("accuracy", acc), ("fpr", fpr)):
                scores.append({"submission_id": sid, "part": "public", "task": "detection",
                               "metric": metric, "slice_key": "", "slice_json": {},
                               "value": round(v, 4), "ci_low": round(max(0.0, v - 0.02), 4),
                               "ci_high": round(min(1.0, v + 0.02), 4), "n": len(x),
                               "metric_version": "1"})
            if len(scores) >= 20000:
                conn.execute(insert(Score), scores)
                scores = []
        if scores:
            conn.execute(insert(Score), scores)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("ANALYZE")
    with Session(engine) as session:
        rebuild.rebuild(session)
        session.commit()
    engine.dispose()
    return {"setup": "database", "submissions": len(subs), "originals": n_subs,
            "generators": n_gen, "releases": n_rel,
            "items_latest": reals + per_gen * n_gen,
            "seconds": round(time.perf_counter() - t, 2), "database": url.split(":")[0]}


def measure_scheduling(url: str) -> dict:
    """HOOK (issue 37, item 2): time planning the re-runs of every allowed container
    submission on a new release (the re-runs service's plan/queue function) here once it is
    merged. Not measured in this tree: the service is not in it."""
    return {"measure": "rerun scheduling", "measured": False,
            "why": "the re-run scheduling service (issue 37, item 2) is not in this tree"}


def get(port: int, path: str) -> tuple[float, int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    return time.perf_counter() - t, resp.status, body


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--submissions", type=int, default=1000)
    ap.add_argument("--generators", type=int, default=40)
    ap.add_argument("--releases", type=int, default=3)
    ap.add_argument("--reals", type=int, default=400)
    ap.add_argument("--per-generator", type=int, default=20)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--database-url", default=None)
    ap.add_argument("--redis-url", default="")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-releases-"))
    url = args.database_url or f"sqlite:///{tmp / 'bench.db'}"
    data_dir = tmp / "data"
    print(json.dumps(build_db(url, data_dir, n_subs=args.submissions, n_gen=args.generators,
                              n_rel=args.releases, reals=args.reals,
                              per_gen=args.per_generator, seed=args.seed)), flush=True)
    print(json.dumps(measure_scheduling(url)), flush=True)
    port = free_port()
    env = {**os.environ, "DATABASE_URL": url, "DATA_DIR": str(data_dir), "SECRET_KEY": "bench",
           "COOKIE_SECURE": "0", "REDIS_URL": args.redis_url, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "gunicorn", "-w", "2", "--threads", "4", "-b",
           f"127.0.0.1:{port}", "--worker-class", "gthread", "--log-level", "warning",
           "--timeout", "600", "leaderboard.server.web:create_app()"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
    latest = "bench" if args.releases == 1 else f"bench-v{args.releases}"
    targets = {
        "matrix_page": (f"/benchmarks/{latest}/boards/detection/test/generators", 200, 500),
        "matrix_json": (f"/api/v1/boards/{latest}/detection/test/generators", None, None),
        "decay_page": ("/benchmarks/bench/boards/detection/test/decay", None, None),
        "decay_json": ("/api/v1/boards/bench/detection/test/decay", None, None)}
    try:
        wait_up(port)
        for name, (path, cold_target, rps_target) in targets.items():
            cold, status, body = get(port, path)
            if status != 200:
                raise RuntimeError(f"{path}: HTTP {status}: {body[:300]!r}")
            warm_up(port, path)
            if shutil.which("wrk"):
                res = run_wrk(f"http://127.0.0.1:{port}{path}", duration=args.duration,
                              connections=args.connections)
            else:
                res = run_python(port, path, duration=args.duration,
                                 connections=args.connections)
            res.update({"url": name, "path": path, "cold_first_request_ms":
                        round(1000 * cold, 1), "bytes": len(body), "workers": 2,
                        "connections": args.connections,
                        "load_average_1m": round(os.getloadavg()[0], 2),
                        "cpus": os.cpu_count()})
            if cold_target is not None:
                res.update({"target_cold_ms": cold_target, "target_rps": rps_target,
                            "meets_target": 1000 * cold <= cold_target
                            and res["requests_per_s"] >= rps_target and res["errors"] == 0})
            print(json.dumps(res), flush=True)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
