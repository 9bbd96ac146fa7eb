"""Fixtures for the production tests: private PostgreSQL and Redis servers, a full stack per test.

``pg`` and ``redis_server`` are started once per session on spare loopback ports (never the
shared 5432/6379) and may be stopped, restarted and flushed by the tests. ``stack`` gives each
test a fresh database (schema built by the real migrations), a flushed Redis, its own DATA_DIR,
the SynCred demo pack imported, and a team member with an API token; it starts worker processes
(`Stack.worker`) and kills whatever it started at the end.
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, select, text

from tests.production.services import PostgresServer, RedisServer, postgres_bin

REPO = Path(__file__).resolve().parents[2]
LABEL_KEY = Fernet.generate_key().decode()
PASSWORD = "correct horse battery staple"


def _missing(what: str) -> None:
    """Skip, or fail where the services are required (``make test`` sets LB_REQUIRE_SERVICES)."""
    if os.environ.get("LB_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{what} (LB_REQUIRE_SERVICES=1; run scripts/start-services.sh)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def pg():
    bindir = postgres_bin()
    if bindir is None:
        _missing("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    server = PostgresServer(bindir)
    server.init()
    yield server
    server.close()


@pytest.fixture(scope="session")
def redis_server():
    exe = shutil.which("redis-server")
    if exe is None:
        _missing("redis-server is not installed")
    server = RedisServer(exe)
    yield server
    server.close()


@pytest.fixture(scope="session")
def syncred_pack(tmp_path_factory):
    from leaderboard.demo import generate

    return generate("syncred", tmp_path_factory.mktemp("packs"), scale="small", seed=0)


@pytest.fixture(scope="session")
def predictions(syncred_pack, tmp_path_factory) -> dict[str, Path]:
    """A valid random-baseline predictions file per split of the SynCred demo pack."""
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack

    out = tmp_path_factory.mktemp("preds")
    pack = load_pack(syncred_pack)
    files = {}
    for split in pack.splits:
        files[split] = out / f"{split}.jsonl"
        write_baseline(pack, split, "random", files[split], seed=1)
    return files


def wait_for(predicate, *, timeout_s: float, interval_s: float = 0.1, what: str = "condition",
             context=None):
    """Poll ``predicate`` until it returns a truthy value (returned) or time runs out; then
    the message includes ``context()`` (e.g. the processes' logs) when given."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            extra = f"\n{context()}" if context is not None else ""
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}{extra}")
        time.sleep(interval_s)


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from /proc), children before grandchildren."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(0), [])
        out += kids
        todo += kids
    return out


def crash(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc`` and every process below it, as a host crash would.

    Killing the process group is not enough: RQ puts each work-horse in a group of its own
    (so that it can kill a job on timeout), and the horse is what runs the job.
    """
    pids = [proc.pid, *descendants(proc.pid)]  # listed first: orphans lose their parent link
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=10)
    wait_for(lambda: not any(_alive(pid) for pid in pids), timeout_s=10,
             what=f"processes {pids} to die")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has stopped running; its parent reaps it


@dataclass
class Stack:
    app: object
    env: dict[str, str]
    token: str
    benchmark: str
    data_dir: Path
    procs: list[subprocess.Popen] = field(default_factory=list)

    # -- database views --------------------------------------------------------------------
    def rows(self) -> dict[int, tuple[str, str | None, int]]:
        """id -> (status, failure_reason, attempts) of every submission (a fresh session)."""
        from leaderboard.server.models import Submission

        with self.app.extensions["lb_db"].scope() as s:
            return {i: (st, fr, a) for i, st, fr, a in s.execute(
                select(Submission.id, Submission.status, Submission.failure_reason,
                       Submission.attempts))}

    def status(self, sid: int) -> str:
        return self.rows()[sid][0]

    # -- actions ---------------------------------------------------------------------------
    def submit(self, path: Path, split: str = "test", method: str = "m") -> int:
        """Upload through the real endpoint (test client); returns the accepted id."""
        client = self.app.test_client()
        with path.open("rb") as fh:
            resp = client.post("/api/v1/submissions",
                               headers={"Authorization": f"Bearer {self.token}"},
                               data={"benchmark": self.benchmark, "split": split,
                                     "method_name": method, "file": (fh, path.name)})
        assert resp.status_code == 202, resp.get_data(as_text=True)
        return resp.get_json()["id"]

    def reconcile(self, *, after_s: float = 0.0):
        """One reconciler pass, as if ``after_s`` seconds had passed (deadlines are minutes)."""
        from datetime import timedelta

        from leaderboard.server.jobs.reconcile import reconcile
        from leaderboard.server.models import utcnow

        with self.app.app_context():
            return reconcile(now=utcnow() + timedelta(seconds=after_s))

    def worker(self, *, delay_s: float = 0.0, burst: bool = False, queues: str = "scoring",
               **extra_env: str) -> subprocess.Popen:
        """Start the real worker command in its own process group (killable as a whole)."""
        cmd = [sys.executable, str(REPO / "tests/production/worker_main.py"), "worker",
               "--queues", queues] + (["--burst"] if burst else [])
        return self.start(cmd, LB_TEST_SCORING_DELAY_S=str(delay_s), **extra_env)

    def drain(self, *, timeout_s: float = 90.0) -> None:
        """Run a burst worker until the scoring queue is empty."""
        proc = self.worker(burst=True)
        proc.wait(timeout=timeout_s)

    def member(self) -> str:
        """Another team member's API token (own team, own rate-limit bucket)."""
        return add_member(self.app)

    def start(self, cmd: list[str], **extra_env: str) -> subprocess.Popen:
        """Start ``cmd`` with the stack's environment in its own process group."""
        log = open(self.data_dir.parent / f"proc-{len(self.procs)}.log", "wb")
        try:
            proc = subprocess.Popen(cmd, cwd=REPO, env=dict(self.env, **extra_env),
                                    start_new_session=True, stdout=log, stderr=log)
        finally:
            log.close()  # the child holds its own copy
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        """The output of every process this stack started (for failure messages)."""
        return "\n".join(f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:]
                         for p in sorted(self.data_dir.parent.glob("proc-*.log")))

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                crash(proc)


def make_env(*, db_url: str, redis_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment every process of one stack shares (web, workers, reconciler)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LB_", "DATABASE_", "REDIS_"))}
    env.update({"DATABASE_URL": db_url, "REDIS_URL": redis_url, "DATA_DIR": str(data_dir),
                "LABEL_KEYS": LABEL_KEY, "SECRET_KEY": "prod-test-" + uuid.uuid4().hex,
                "COOKIE_SECURE": "0", "DAILY_QUOTA": "10000", "SCORING_TIMEOUT_S": "120",
                "QUEUE_DEADLINE_S": "300", "MAX_ATTEMPTS": "3", "PYTHONPATH": str(REPO),
                # the fault tests upload as fast as one client can: on a quiet machine that is
                # past the default 30 per minute, and the limit is not what they test
                # (tests/production/test_hardening.py and the attack smoke test the limits)
                "SUBMIT_RATE_LIMIT": "1000 per minute"})
    env.update(extra)
    return env


def new_database(pg: PostgresServer) -> str:
    """A fresh database on the private server, with the schema built by the migrations."""
    from leaderboard.server.cli import upgrade_database

    name = f"lb_prod_{secrets.token_hex(4)}"
    admin = create_engine(pg.url(), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    url = pg.url(name)
    upgrade_database(url)
    return url


def add_member(app) -> str:
    """A new user in a new team, with an approved agreement for every imported benchmark
    (`tests.agreements.grant_all`); returns the user's API token."""
    from leaderboard.server.services import accounts, teams, tokens
    from tests.agreements import grant_all

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            user = accounts.register(s, email=f"u{secrets.token_hex(4)}@example.org",
                                     display_name="Member", password=PASSWORD)
            teams.create_team(s, user, name=f"team-{secrets.token_hex(4)}")
            grant_all(s, user)
            return tokens.create_token(s, user, name="prod")[1]


def seed(app, pack_dir: Path) -> tuple[str, str]:
    """Import the pack and create a team member; returns (benchmark key, API token)."""
    from leaderboard.server.services.benchmarks import import_pack

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            key = import_pack(s, pack_dir, data_dir=app.config["DATA_DIR"],
                              label_keys=app.config["LABEL_KEYS"]).key
    return key, add_member(app)


def make_app(tmp_path: Path, **extra):
    """A SQLite app with jobs inline and rate limits off unless ``extra`` says otherwise."""
    from leaderboard.server.models import Base
    from leaderboard.server.web import create_app

    url = f"sqlite:///{tmp_path / 'h.db'}"
    engine = create_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()
    cfg = {"TESTING": True, "DATABASE_URL": url, "DATA_DIR": str(tmp_path / "data"),
           "SECRET_KEY": uuid.uuid4().hex, "LABEL_KEYS": [LABEL_KEY], "REDIS_URL": None,
           "COOKIE_SECURE": "0", "WTF_CSRF_ENABLED": False, "RATELIMIT_ENABLED": False,
           "MAX_UPLOAD_MB": 3}
    cfg.update(extra)
    return create_app(cfg)


@contextmanager
def make_stack(pg, redis_server, pack_dir: Path, tmp_path: Path, **env_extra: str):
    """A `Stack` on a fresh database and a flushed ``redis_server`` (see `stack`)."""
    import redis

    from leaderboard.server.config import load_config
    from leaderboard.server.services.scoring_service import clear_caches
    from leaderboard.server.web import create_app

    conn = redis.Redis.from_url(redis_server.url())
    conn.flushall()
    conn.close()
    db_url = new_database(pg)
    env = make_env(db_url=db_url, redis_url=redis_server.url(), data_dir=tmp_path / "data",
                   **env_extra)
    clear_caches()
    app = create_app(dict(load_config(environ=env), TESTING=True, RATELIMIT_ENABLED=False))
    key, token = seed(app, pack_dir)
    st = Stack(app=app, env=env, token=token, benchmark=key, data_dir=tmp_path / "data")
    try:
        yield st
    finally:
        st.close()
        redis_conn = app.extensions.get("lb_redis")
        if redis_conn is not None:
            redis_conn.close()
        app.extensions["lb_db"].dispose()


@pytest.fixture
def stack(pg, redis_server, syncred_pack, tmp_path):
    with make_stack(pg, redis_server, syncred_pack, tmp_path) as st:
        yield st
