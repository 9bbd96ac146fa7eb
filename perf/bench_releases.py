"""Releases at scale (issue 37): 1,000 container submissions x 40 generators x 3 releases.

    flock /tmp/bench.lock .venv/bin/python perf/bench_releases.py [--submissions 1000]
        [--generators 40] [--releases 3] [--duration 10] [--database-url postgresql+...]
        [--redis-url redis://127.0.0.1:6379/14] [--scheduling-only]

Builds a fresh database (SQLite in a temporary directory unless ``--database-url`` names an
empty PostgreSQL database) with ``alembic upgrade head`` and synthesises, directly in it, one
benchmark family ``bench`` with ``--releases`` releases (release r dates the first
``generators * r / releases`` generators, so each release adds generators), ``--submissions``
original container submissions on release 1 (two per team, made over 2023-2025), and the
platform's re-run of each on every later release (``rerun_of_id``). Every submission gets its
test split's public-part scores and a per-item outcome file (reals plus ``--per-generator``
fakes per generator of its release, 0/1 outcomes from a per-detector skill that decays on the
generators made public after it), then the standings are built in one pass.

Then the step the scoring job adds per submission since the matrix was paged (issue 37): its rows
of the detectors x generators matrix (`generators.prepare_rows`, bootstrapped once and stored),
for every submission of the measured (latest) release, timed. Then ``gunicorn -w 2`` on
127.0.0.1 (the production config, `leaderboard.server.gunicorn_conf`, with 2 gthread workers,
no access log) and, per URL, one cold request (the first read after the server started: empty board
caches) and ``wrk`` on the warm (cached) URL:

* the matrix page of the latest release (``/benchmarks/bench-vN/boards/detection/test/
  generators``, its first page of rows): targets cold <= 200 ms, warm >= 500 req/s; then its
  first read after a new submission (a scored row added, its matrix rows prepared as the
  scoring job does, the boards invalidated: the new row's preparation is timed apart) and after
  a bare cache clear; a deep page ranked by the unseen score;
* the matrix JSON (a page) and CSV (every row);
* the decay page (``/benchmarks/bench/boards/detection/test/decay``) and its JSON.

Before all that, re-run scheduling (issue 37, item 2; `measure_scheduling`): the planning pass
of a release-3 campaign over ``--submissions`` container methods and the reconciler's pass over
the open campaign, on a family of its own, rolled back. ``--scheduling-only`` measures only
that (on a migrated, empty database). Prints JSON lines.
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


def migrate(url: str) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(ROOT / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url)
    command.upgrade(cfg, "head")


def build_db(url: str, data_dir: pathlib.Path, *, n_subs: int, n_gen: int, n_rel: int,
             reals: int, per_gen: int, seed: int) -> dict:
    from sqlalchemy import insert
    from sqlalchemy.orm import Session

    from leaderboard.core.outcomes import Outcome
    from leaderboard.server.boards import rebuild
    from leaderboard.server.db import make_engine
    from leaderboard.server.models import Benchmark, Score, Submission, Team
    from leaderboard.server.services import outcome_store

    migrate(url)
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


def measure_scheduling(url: str, *, n_subs: int, seed: int) -> dict:
    """Re-run scheduling (issue 37, item 2) on its own family ``sched`` of 3 releases, in one
    transaction that is rolled back (the boards measured next never see it): ``n_subs``
    container methods, each its own uploader with an approved data-use agreement and a kept
    image, scored on release 1, 30 % of them submitted again (an original) on release 2; 5 %
    of the teams opted out, 5 % of the agreements revoked (skips with reasons). Timed: the
    planning pass an import runs on release 3 (`reruns.plan`, as `jobs.reruns.after_import`
    calls it: the campaign made, prediction-file teams told, the window's rows added), then the
    reconciler's pass over the open campaign (`reruns.open_campaigns` + `plan`, as
    `jobs.reruns.advance` runs it: every candidate asked at the gate again). No Docker and no
    queue: the rows are planned and flushed, never enqueued (enqueueing is one RQ call per row
    of the window)."""
    from sqlalchemy import event, insert
    from sqlalchemy.orm import Session

    from leaderboard.server.db import make_engine
    from leaderboard.server.models import Benchmark, Submission, Team, User
    from leaderboard.server.models.access import AccessRequest
    from leaderboard.server.services import reruns

    py = random.Random(seed)
    engine = make_engine(url)
    queries = [0]

    @event.listens_for(engine, "before_cursor_execute")
    def _count(*_args):
        queries[0] += 1

    images = pathlib.Path(tempfile.mkdtemp(prefix="bench-sched-"))
    out = {"measure": "rerun scheduling", "database": url.split(":")[0], "methods": n_subs,
           "window": 4}
    try:
        with Session(engine) as s:
            rel = [s.scalar(insert(Benchmark).returning(Benchmark.id), {
                "key": "sched" if r == 1 else f"sched-v{r}", "family": "sched", "release": r,
                "released_at": T0 + timedelta(days=300 * r), "title": "Sched",
                "version": str(r), "pack_path": "", "meta_json": {"tasks": TASKS},
                "description_md": ""}) for r in (1, 2, 3)]
            n_teams = n_subs
            teams = s.scalars(insert(Team).returning(Team.id), [
                {"name": f"sched-team-{i:05d}", "invite_code": f"sched-{i:05d}",
                 "created_at": T0} for i in range(n_teams)]).all()
            users = s.scalars(insert(User).returning(User.id), [
                {"email": f"u{i}@sched.example", "display_name": f"u{i}", "password_hash": "x",
                 "team_id": teams[i], "created_at": T0} for i in range(n_subs)]).all()
            s.execute(insert(AccessRequest), [
                {"user_id": users[i], "benchmark_id": rel[0], "agreement_version": "",
                 "full_name": f"u{i}", "affiliation": "x", "intended_use": "x",
                 "accepted_at": T0, "status": "revoked" if py.random() < 0.05 else "approved"}
                for i in range(n_subs)])
            (images / "img").mkdir()
            rows = []
            for i in range(n_subs):
                (images / "img" / f"{i}.tar").write_bytes(b"x")
                for r in ((0, 1) if py.random() < 0.3 else (0,)):
                    rows.append({"benchmark_id": rel[r], "split": "test", "team_id": teams[i],
                                 "user_id": users[i], "kind": "container",
                                 "method_name": f"method {i}", "status": "scored",
                                 "is_public": True, "is_baseline": False,
                                 "file_path": "", "image_path": f"img/{i}.tar",
                                 "allow_rerun": py.random() >= 0.05,
                                 "created_at": T0 + timedelta(days=300 * r + py.uniform(0, 200))})
            s.execute(insert(Submission), rows)
            out["container_submissions"] = len(rows)
            s.flush()
            release3 = s.get(Benchmark, rel[2])
            s.expire_all()  # a planner starts from a cold session
            for name, step in (("import_plan", "import"), ("reconciler_pass", "reconcile")):
                queries[0] = 0
                t = time.perf_counter()
                if step == "import":
                    added = reruns.plan(s, release3, data_dir=str(images), window=4)
                else:
                    added = []
                    for bench in reruns.open_campaigns(s):
                        added += reruns.plan(s, bench, data_dir=str(images), window=4)
                s.flush()
                out[f"{name}_ms"] = round(1000 * (time.perf_counter() - t), 1)
                out[f"{name}_queries"] = queries[0]
                out[f"{name}_added"] = len(added)
                s.expire_all()
            prog = reruns.progress(s, release3)
            out.update({"skipped": prog["counts"]["skipped"],
                        "waiting": prog["counts"]["waiting"],
                        "queued": prog["counts"]["queued"]})
            s.rollback()
    finally:
        engine.dispose()
        shutil.rmtree(images, ignore_errors=True)
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    return out


def make_app(url: str, data_dir: pathlib.Path, redis_url: str):
    """The application in this process, configured as the server is (the same database, data
    directory and board cache), for the steps a scoring job does."""
    from leaderboard.server.web import create_app

    return create_app({"DATABASE_URL": url, "DATA_DIR": str(data_dir), "SECRET_KEY": "bench",
                       "REDIS_URL": redis_url, "COOKIE_SECURE": "0"})


def prepare_rows(app, key: str) -> dict:
    """The scoring job's matrix step (`generators.prepare_rows`) for every submission of
    benchmark ``key``, as if each had just been scored: bootstrap its row, store it."""
    from sqlalchemy import select

    from leaderboard.server.boards import generators as gen_view
    from leaderboard.server.models import Benchmark, Submission

    times = []
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        bid = s.scalar(select(Benchmark.id).where(Benchmark.key == key))
        subs = s.execute(select(Submission.id, Submission.created_at)
                         .where(Submission.benchmark_id == bid)).all()
        for sid, created in subs:
            t = time.perf_counter()
            gen_view.prepare_rows(s, benchmark_key=key, submission_id=sid,
                                  created_at=created.isoformat(),
                                  blocks=[("public", "detection")],
                                  directory=app.config["DATA_DIR"])
            times.append(time.perf_counter() - t)
    return {"setup": "matrix rows prepared (the scoring job's step)", "benchmark": key,
            "rows": len(times), "seconds": round(sum(times), 2),
            "ms_per_row_p50": round(1000 * float(np.median(times)), 1),
            "load_average_1m": round(os.getloadavg()[0], 2)}


def add_submission(app, key: str, *, reals: int, per_gen: int, seed: int,
                   warm: bool = False) -> dict:
    """A new scored submission on benchmark ``key`` as the scoring job leaves it: its row and
    scores committed (the standings hook updates the board), its outcome file written, its
    matrix rows prepared (timed), the benchmark's boards invalidated; with ``warm`` (a shared
    cache only) also the job's warm of the pages readers ask for (`jobs/board_warm.py`, timed),
    as a worker with an empty queue does."""
    from sqlalchemy import select

    from leaderboard.core.outcomes import Outcome
    from leaderboard.server.boards import generators as gen_view
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.models import Benchmark, Score, Submission, Team
    from leaderboard.server.services import outcome_store

    rng = np.random.default_rng(seed + 1)
    with app.app_context():
        db = app.extensions["lb_db"]
        with db.scope() as s:
            bench = s.scalar(select(Benchmark).where(Benchmark.key == key))
            gens = bench.meta_json["generators"]
            team = Team(name=f"new-team-{seed}", invite_code=f"new-{seed}", created_at=T0)
            s.add(team)
            s.flush()
            sub = Submission(benchmark_id=bench.id, split="test", team_id=team.id,
                             method_name="new method", status="scored", is_public=True,
                             kind="container", is_baseline=False,
                             created_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
            s.add(sub)
            s.flush()
            gen = np.concatenate([np.full(reals, -1), np.repeat(np.arange(len(gens)), per_gen)])
            x = (rng.random(len(gen)) < 0.97).astype(np.float32)  # a leader: page 1
            for metric, v in (("accuracy", float(x.mean())),
                              ("fpr", float(1.0 - x[gen < 0].mean()))):
                s.add(Score(submission_id=sub.id, part="public", task="detection",
                            metric=metric, slice_key="", slice_json={}, value=round(v, 4),
                            ci_low=round(max(0.0, v - 0.02), 4),
                            ci_high=round(min(1.0, v + 0.02), 4), n=len(x),
                            metric_version="1"))
            sid, created = sub.id, sub.created_at
        o = Outcome("detection", "accuracy", "mean", x, (gen >= 0).astype(np.int16),
                    np.zeros(len(gen)), ("image",), {}, generator=gen.astype(np.int16),
                    generators=tuple(g["key"] for g in gens))
        outcome_store.write(app.config["DATA_DIR"], sid, {"public": {"detection": o}})
        t = time.perf_counter()
        with db.scope() as s:
            gen_view.prepare_rows(s, benchmark_key=key, submission_id=sid,
                                  created_at=created.isoformat(),
                                  blocks=[("public", "detection")],
                                  directory=app.config["DATA_DIR"])
        prepared = time.perf_counter() - t
        invalidate_boards(key)
        out = {"step": "new submission scored", "submission_id": sid,
               "rows_prepared_ms": round(1000 * prepared, 1)}
        if warm:
            from leaderboard.server.jobs import board_warm

            t = time.perf_counter()
            out["pages_warmed"] = board_warm.warm(sid, key, every_s=False)
            out["warm_ms"] = round(1000 * (time.perf_counter() - t), 1)
    return out


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
    ap.add_argument("--rounds", type=int, default=3,
                    help="cold reads after a new submission and after a cache clear, each")
    ap.add_argument("--scheduling-only", action="store_true",
                    help="only the re-run scheduling measurement (no boards, no server)")
    args = ap.parse_args(argv)

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-releases-"))
    url = args.database_url or f"sqlite:///{tmp / 'bench.db'}"
    if args.scheduling_only:
        try:
            migrate(url)
            print(json.dumps(measure_scheduling(url, n_subs=args.submissions, seed=args.seed)),
                  flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return 0
    data_dir = tmp / "data"
    print(json.dumps(build_db(url, data_dir, n_subs=args.submissions, n_gen=args.generators,
                              n_rel=args.releases, reals=args.reals,
                              per_gen=args.per_generator, seed=args.seed)), flush=True)
    print(json.dumps(measure_scheduling(url, n_subs=args.submissions, seed=args.seed)),
          flush=True)
    latest = "bench" if args.releases == 1 else f"bench-v{args.releases}"
    app = make_app(url, data_dir, args.redis_url)
    with app.app_context():
        from leaderboard.server.boards.cache import invalidate_boards
        invalidate_boards()  # a Redis db keeps the entries of an earlier run's same keys
    print(json.dumps(prepare_rows(app, latest)), flush=True)
    port = free_port()
    env = {**os.environ, "DATABASE_URL": url, "DATA_DIR": str(data_dir), "SECRET_KEY": "bench",
           "COOKIE_SECURE": "0", "REDIS_URL": args.redis_url, "PYTHONPATH": str(ROOT),
           "WEB_ACCESS_LOG": ""}
    # the production settings and hooks (`leaderboard.server.gunicorn_conf`: the heap frozen
    # after the app loads), with the bench's workers, threads and quiet logs
    cmd = [sys.executable, "-m", "gunicorn", "-c", "python:leaderboard.server.gunicorn_conf",
           "-w", "2", "--threads", "4", "-b", f"127.0.0.1:{port}", "--worker-class", "gthread",
           "--log-level", "warning", "--timeout", "600",
           "--max-requests", "0", "leaderboard.server.web:create_app()"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
    matrix = f"/benchmarks/{latest}/boards/detection/test/generators"
    api = f"/api/v1/boards/{latest}/detection/test/generators"

    def cold(name: str, path: str, shows: int | None = None, **extra) -> None:
        t, status, body = get(port, path)
        if status != 200:
            raise RuntimeError(f"{path}: HTTP {status}: {body[:300]!r}")
        if shows is not None:  # the new submission's row is on the page: it was recomputed
            extra["shows_new_row"] = f'data-submission="{shows}"'.encode() in body
        print(json.dumps({"url": name, "path": path, "cold_first_request_ms":
                          round(1000 * t, 1), "bytes": len(body),
                          "load_average_1m": round(os.getloadavg()[0], 2), **extra}),
              flush=True)

    def settle() -> None:
        # the web processes reuse the board cache's generations for BOARD_CACHE_GEN_TTL_S
        # (0.5 s): a request sooner after an invalidation may still be served the old page
        time.sleep(1.0)

    def measure(name: str, path: str, cold_target=None, rps_target=None) -> None:
        t, status, body = get(port, path)
        if status != 200:
            raise RuntimeError(f"{path}: HTTP {status}: {body[:300]!r}")
        warm_up(port, path)
        if shutil.which("wrk"):
            res = run_wrk(f"http://127.0.0.1:{port}{path}", duration=args.duration,
                          connections=args.connections)
        else:
            res = run_python(port, path, duration=args.duration,
                             connections=args.connections)
        res.update({"url": name, "path": path, "cold_first_request_ms": round(1000 * t, 1),
                    "bytes": len(body), "workers": 2, "connections": args.connections,
                    "load_average_1m": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()})
        if cold_target is not None:
            res.update({"target_cold_ms": cold_target, "target_rps": rps_target,
                        "meets_target": 1000 * t <= cold_target
                        and res["requests_per_s"] >= rps_target and res["errors"] == 0})
        print(json.dumps(res), flush=True)

    try:
        wait_up(port)
        measure("matrix_page", matrix, 200, 500)
        for i in range(args.rounds):  # single cold requests are noisy on a shared machine
            added = add_submission(app, latest, reals=args.reals, per_gen=args.per_generator,
                                   seed=args.seed + i)
            print(json.dumps(added), flush=True)
            settle()
            cold("matrix_page after a new submission", matrix, shows=added["submission_id"],
                 target_cold_ms=200, round=i + 1)
        for i in range(args.rounds if args.redis_url else 0):
            added = add_submission(app, latest, reals=args.reals, per_gen=args.per_generator,
                                   seed=args.seed + 100 + i, warm=True)
            print(json.dumps(added), flush=True)
            settle()
            cold("matrix_page after a new submission and the job's warm", matrix,
                 shows=added["submission_id"], target_cold_ms=200, round=i + 1)
        for i in range(args.rounds):
            with app.app_context():
                invalidate_boards(latest)
            settle()
            cold("matrix_page after a cache clear", matrix, target_cold_ms=200, round=i + 1)
        cold("matrix_page ranked by unseen, page 10", f"{matrix}?rank_by=unseen&page=10")
        measure("matrix_json", api)
        cold("matrix_csv (every row)", f"{api}.csv")
        measure("decay_page", "/benchmarks/bench/boards/detection/test/decay")
        measure("decay_json", "/api/v1/boards/bench/detection/test/decay")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
