"""Side by side with CTFd at 5,000 submissions (issue 39 item 6): same machine, same tool.

Get CTFd (not vendored here: its code and venv stay outside this repository)::

    git clone https://github.com/CTFd/CTFd /work/ctfd-src      # or any checkout of it
    python3.11 -m venv /work/ctfd-venv
    /work/ctfd-venv/bin/pip install -r /work/ctfd-src/requirements.txt psycopg2-binary

Then, with the PostgreSQL template ``lb_scale_5k`` (``perf/bench_scale.py --submissions 5000
--load-only lb_scale_5k``) loaded::

    flock /tmp/bench.lock .venv/bin/python perf/bench_ctfd.py \\
        --ctfd /work/ctfd-src --ctfd-venv /work/ctfd-venv \\
        --redis-url redis://127.0.0.1:6379/10 --rounds 5

Both servers run under ``gunicorn -w 2 --threads 4 --worker-class gthread`` (CTFd's own
image uses gevent; gthread is what ours runs, and CTFd runs under it unpatched) on
PostgreSQL and Redis (one Redis db for both: CTFd's keys are ``flask_cache_*``).

* **CTFd** gets a fresh database (``<prefix>_ctfd_<hex>``), goes through its real ``/setup``
  form (teams mode, scores and accounts public, theme ``--ctfd-theme``), then is seeded with
  core INSERTs: ``--teams`` teams of two users each, 40 challenges, and ``--submissions``
  solves (every team solves 4 distinct challenges: 5,000 solves for 1,250 teams), so its
  scoreboard ranks every team.
* **Ours** runs on a copy of the template (``<prefix>_ours_<hex>``: 5,000 scored
  submissions over five benchmarks, boards rebuilt; LOKI's detection test board has 1,000
  teams).

The pages differ in what they hold, as the products do: CTFd's ``/api/v1/scoreboard`` lists
every team (1,250) in one response; ours is the board's first page (50 rows of 1,000, with
intervals, columns and a cursor). The ``pages`` line prints each response's size.

Before each measured page both servers answer it with 200 and the page is checked to hold the
board (CTFd's JSON lists every team; its ``/scoreboard`` is the scoreboard page, not a
login or setup redirect: with the default ``core`` theme the rows are drawn by the browser
from ``/api/v1/scoreboard``, with ``core-deprecated`` they are in the HTML). Then alternating
rounds (CTFd first in odd rounds, ours first in even ones): ``wrk -t2 -c32 -d<duration>s`` on
each pair of pages; one JSON line per round, and a last line with the medians and the ratios
(ours / CTFd). Both databases are dropped at the end unless ``--keep``.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "perf"))

from bench_boards import free_port, run_wrk  # noqa: E402

PG_HOST = "postgres@127.0.0.1:5432"
PAGES = {"json": ("/api/v1/scoreboard", "/api/v1/boards/loki/detection/test"),
         "html": ("/scoreboard", "/benchmarks/loki/boards/detection/test"),
         "home": ("/", "/")}

# Runs inside CTFd's venv with CTFd's checkout as cwd: setup through its form, then the rows.
CTFD_SEED = r'''
import datetime, json, random, sys
from CTFd import create_app
from CTFd.cache import cache
from CTFd.models import db, Users, Teams, Challenges, Submissions, Solves
from CTFd.utils.crypto import hash_password

teams_n, subs_n, theme, seed = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rnd = random.Random(seed)
app = create_app()
with app.app_context():
    with app.test_client() as client:
        client.get("/setup")
        with client.session_transaction() as sess:
            nonce = sess.get("nonce")
        r = client.post("/setup", data={
            "ctf_name": "Bench CTF", "ctf_description": "5,000 solves", "name": "admin",
            "email": "admin@example.org", "password": "password", "user_mode": "teams",
            "ctf_theme": theme, "nonce": nonce, "score_visibility": "public",
            "account_visibility": "public", "challenge_visibility": "public"})
        assert r.status_code in (200, 302), r.status_code
    pw = hash_password("password")
    base = datetime.datetime(2026, 1, 1)
    n_chal = 40
    db.session.execute(Challenges.__table__.insert(), [
        {"id": c, "name": f"challenge {c}", "description": "d", "value": 100 + 10 * (c % 41),
         "category": "cat %d" % (c % 7), "type": "standard", "state": "visible",
         "logic": "any", "position": 0, "function": "static", "max_attempts": 0}
        for c in range(1, n_chal + 1)])
    uid0 = db.session.execute(db.text("SELECT max(id) FROM users")).scalar() + 1
    db.session.execute(Teams.__table__.insert(), [
        {"id": t, "name": f"team-{t:05d}", "email": f"team{t}@example.org", "password": pw,
         "hidden": False, "banned": False, "created": base} for t in range(1, teams_n + 1)])
    users = []
    for t in range(1, teams_n + 1):
        for k in range(2):
            users.append({"id": uid0 + 2 * (t - 1) + k, "name": f"user-{t:05d}-{k}",
                          "email": f"u{t}-{k}@example.org", "password": pw, "type": "user",
                          "team_id": t, "hidden": False, "banned": False, "verified": True,
                          "created": base})
    db.session.execute(Users.__table__.insert(), users)
    db.session.execute(Teams.__table__.update().values(
        captain_id=uid0 + 2 * (Teams.__table__.c.id - 1)))
    per_team = max(1, subs_n // teams_n)
    subs, solves, sid = [], [], 0
    for t in range(1, teams_n + 1):
        for c in rnd.sample(range(1, n_chal + 1), per_team):
            if sid == subs_n:
                break
            sid += 1
            u = uid0 + 2 * (t - 1) + rnd.randrange(2)
            subs.append({"id": sid, "challenge_id": c, "user_id": u, "team_id": t,
                         "ip": "127.0.0.1", "provided": "flag", "type": "correct",
                         "date": base + datetime.timedelta(seconds=rnd.randrange(86400 * 30))})
            solves.append({"id": sid, "challenge_id": c, "user_id": u, "team_id": t})
    db.session.execute(Submissions.__table__.insert(), subs)
    db.session.execute(Solves.__table__.insert(), solves)
    if db.engine.dialect.name == "postgresql":
        for table in ("challenges", "teams", "users", "submissions"):
            db.session.execute(db.text(
                f"SELECT setval('{table}_id_seq', (SELECT max(id) FROM {table}))"))
    db.session.commit()
    cache.clear()
    print(json.dumps({"teams": teams_n, "users": len(users), "challenges": n_chal,
                      "solves": len(solves), "dialect": db.engine.dialect.name}))
'''


def out(**kw) -> None:
    print(json.dumps(kw), flush=True)


def get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def check_ctfd(port: int, page: str, theme: str, teams: int) -> None:
    """The page answers 200 and holds the board (not a login/setup page)."""
    path = PAGES[page][0]
    status, body = get(port, path)
    assert status == 200, ("ctfd", path, status, body[:300])
    if page == "json":
        data = json.loads(body)
        assert data["success"] and len(data["data"]) == teams, ("ctfd json", len(data["data"]))
    elif page == "html":
        text = body.decode()
        assert "Scoreboard" in text and 'id="scoreboard"' in text, text[:500]
        if theme == "core-deprecated":
            assert text.count("/teams/") >= teams, "ctfd html lacks rows"
    else:
        assert b"Bench CTF" in body and b"/setup" not in body, body[:500]


def check_ours(port: int, page: str, team: str) -> None:
    path = PAGES[page][1]
    status, body = get(port, path)
    assert status == 200, ("ours", path, status, body[:300])
    if page in ("json", "html"):
        assert team.encode() in body, ("ours", path, "lacks the leader", team)


def wait_up(port: int, path: str, timeout: float) -> None:
    """Until ``path`` answers 200 (CTFd has no ``/api/v1/benchmarks``)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if get(port, path)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"gunicorn did not answer {path} on port {port} within {timeout} s")


def start(cmd: list[str], *, cwd: pathlib.Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen(cmd, cwd=cwd, env=env, start_new_session=True)


def stop(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ctfd", type=pathlib.Path, required=True, help="CTFd checkout")
    ap.add_argument("--ctfd-venv", type=pathlib.Path, required=True, help="CTFd's venv")
    ap.add_argument("--ctfd-commit", help="CTFd's commit when --ctfd is not a git checkout")
    ap.add_argument("--ctfd-theme", default="core", choices=["core", "core-deprecated"])
    ap.add_argument("--ctfd-sqlite", action="store_true", help="CTFd on SQLite, not PostgreSQL")
    ap.add_argument("--template", default="lb_scale_5k", help="our PostgreSQL template")
    ap.add_argument("--redis-url", required=True)
    ap.add_argument("--db-prefix", default="ctfd")
    ap.add_argument("--teams", type=int, default=1250)
    ap.add_argument("--submissions", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()

    import redis
    from sqlalchemy import create_engine, text

    tag = uuid.uuid4().hex[:8]
    ours_db, ctfd_db = f"{args.db_prefix}_ours_{tag}", f"{args.db_prefix}_ctfd_{tag}"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-ctfd-"))
    admin = create_engine(f"postgresql+psycopg://{PG_HOST}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{ours_db}" TEMPLATE "{args.template}"'))
        if not args.ctfd_sqlite:
            c.execute(text(f'CREATE DATABASE "{ctfd_db}"'))
    redis.Redis.from_url(args.redis_url).flushdb()
    ctfd_url = (f"sqlite:///{tmp / 'ctfd.db'}" if args.ctfd_sqlite
                else f"postgresql://{PG_HOST}/{ctfd_db}")
    ctfd_env = {**os.environ, "DATABASE_URL": ctfd_url, "REDIS_URL": args.redis_url,
                "SECRET_KEY": "bench-ctfd", "UPLOAD_FOLDER": str(tmp / "uploads"),
                "LOG_FOLDER": str(tmp / "logs")}
    ctfd_env.pop("PYTHONPATH", None)
    ours_env = {**os.environ, "DATABASE_URL": f"postgresql+psycopg://{PG_HOST}/{ours_db}",
                "DATA_DIR": str(tmp / "data"), "SECRET_KEY": "bench", "COOKIE_SECURE": "0",
                "REDIS_URL": args.redis_url, "RATELIMIT_ENABLED": "0"}
    ctfd_py = str(args.ctfd_venv / "bin" / "python")
    commit = args.ctfd_commit or subprocess.run(
        ["git", "-C", str(args.ctfd), "rev-parse", "HEAD"],
        capture_output=True, text=True).stdout.strip() or None
    procs: list[subprocess.Popen] = []
    try:
        t = time.perf_counter()
        seeded = subprocess.run([ctfd_py, "-c", CTFD_SEED, str(args.teams), str(args.submissions),
                                 args.ctfd_theme, str(args.seed)], cwd=args.ctfd, env=ctfd_env,
                                capture_output=True, text=True)
        if seeded.returncode != 0:
            sys.stderr.write(seeded.stderr[-4000:])
            raise SystemExit("CTFd seed failed")
        out(setup="ctfd", commit=commit, theme=args.ctfd_theme, database=ctfd_url.split(":")[0],
            s=round(time.perf_counter() - t, 1),
            **json.loads(seeded.stdout.strip().splitlines()[-1]))
        gun = ["-m", "gunicorn", "-w", "2", "--threads", "4", "--worker-class", "gthread",
               "--log-level", "warning"]
        ctfd_port, ours_port = free_port(), free_port()
        procs.append(start([ctfd_py, *gun, "-b", f"127.0.0.1:{ctfd_port}", "CTFd:create_app()"],
                           cwd=args.ctfd, env=ctfd_env))
        procs.append(start([sys.executable, *gun, "-b", f"127.0.0.1:{ours_port}",
                            "leaderboard.server.web:create_app()"], cwd=ROOT, env=ours_env))
        wait_up(ctfd_port, "/", timeout=120)
        wait_up(ours_port, "/", timeout=60)
        status, body = get(ours_port, PAGES["json"][1])
        assert status == 200, body[:300]
        board = json.loads(body)
        team = board["rows"][0]["team"]["name"]  # the leader: every board check looks for it
        out(setup="ours", template=args.template, database=ours_db, leader=team,
            rows=len(board["rows"]), total=board["total"], per_page=board["per_page"])
        servers = {"ctfd": ctfd_port, "ours": ours_port}
        out(setup="pages", **{f"{side}_{page}_bytes": len(get(port, PAGES[page][side == "ours"])[1])
                              for side, port in servers.items() for page in PAGES},
            ctfd_json_rows=len(json.loads(get(ctfd_port, PAGES["json"][0])[1])["data"]))
        rounds = []
        for r in range(1, args.rounds + 1):
            order = ["ctfd", "ours"] if r % 2 else ["ours", "ctfd"]
            row = {"round": r, "order": order, "load": os.getloadavg()[0]}
            for page in PAGES:
                for side in order:
                    port = servers[side]
                    path = PAGES[page][0 if side == "ctfd" else 1]
                    for _ in range(3):  # warm: memo, template, connection pools
                        get(port, path)
                    check = (lambda: check_ctfd(port, page, args.ctfd_theme, args.teams)) \
                        if side == "ctfd" else (lambda: check_ours(port, page, team))
                    check()
                    res = run_wrk(f"http://127.0.0.1:{port}{path}", duration=args.duration,
                                  connections=args.connections)
                    check()
                    assert res["errors"] == 0, (side, path, res)
                    row[f"{side}_{page}_rps"] = res["requests_per_s"]
                    row[f"{side}_{page}_p99_ms"] = round(res["p99_ms"], 1)
                row[f"ratio_{page}"] = round(row[f"ours_{page}_rps"] / row[f"ctfd_{page}_rps"], 2)
            out(**row)
            rounds.append(row)
        final = {"final": True, "rounds": len(rounds), "ctfd_commit": commit,
                 "ctfd_theme": args.ctfd_theme, "ctfd_db": ctfd_url.split(":")[0],
                 "submissions": args.submissions, "connections": args.connections,
                 "duration_s": args.duration, "load_after": [round(x, 2) for x in os.getloadavg()]}
        targets = {"json": 12, "html": 20, "home": 15}
        for page in PAGES:
            c = statistics.median(x[f"ctfd_{page}_rps"] for x in rounds)
            o = statistics.median(x[f"ours_{page}_rps"] for x in rounds)
            final[f"ctfd_{page}_rps"], final[f"ours_{page}_rps"] = round(c), round(o)
            final[f"ratio_{page}"] = round(o / c, 1)
            final[f"median_round_ratio_{page}"] = statistics.median(
                x[f"ratio_{page}"] for x in rounds)
            final[f"target_{page}"] = f">= {targets[page]}x: " + (
                "met" if o / c >= targets[page] else "not met")
        out(**final)
    finally:
        for p in procs:
            stop(p)
        if not args.keep:
            with admin.connect() as c:
                for name in (ours_db, ctfd_db):
                    c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
