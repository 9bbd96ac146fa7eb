"""Every process of ``docker/compose.yaml`` starts as written (issue 36, item 9).

The file is resolved by compose itself (``config``, with an env file that points the services at
this test's PostgreSQL and Redis), and each service built from this repository is started the
way its container would start it: the image's ENTRYPOINT (``docker/boot.sh``, from the service's
Dockerfile) unless the service sets its own, then the service's command (else the image's CMD),
with the service's environment. Each must reach its first pass: the web answers ``/readyz``,
every worker passes the worker image's own HEALTHCHECK (registered in Redis), the reconciler logs
a pass, the reaper reports one, and Redis (the stock image's command) answers a ping.

What differs from a container, and why: the code runs from this checkout (``/app`` is the
repository root) with this virtual environment's ``python``; ``PORT`` and Redis's ``--port`` and
``--dir`` move to spare ones (the container's fixed ports would collide on a shared machine).
PostgreSQL's and pg-backup's commands are the stock image's own and are not run here.
The reaper's old command (``harness.reap(client)`` without its ``deployment``) died with a
TypeError at every start, and so would this test.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import redis
import yaml
from cryptography.fernet import Fernet
from rq import Worker
from sqlalchemy import create_engine, text

from tests.production.conftest import REPO, _missing, wait_for
from tests.production.services import free_port
from tests.production.test_compose import COMPOSE, _compose_cmd
from tests.redis_db import redis_test_url

PG_ADMIN_URL = os.environ.get("LB_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
#: the image's /app is this checkout
APP = "/app"


def _dockerfile(path: str) -> dict[str, list[str]]:
    """ENTRYPOINT, CMD and HEALTHCHECK's command (exec forms) of the Dockerfile at ``path``."""
    out, previous = {}, ""
    for line in (REPO / path).read_text().splitlines():
        for key in ("ENTRYPOINT", "CMD"):
            if line.startswith(key + " "):
                out[key] = json.loads(line[len(key) + 1:])
        match = re.search(r"\bCMD (\[.*\])\s*$", line)
        if match and previous.startswith("HEALTHCHECK"):
            out["HEALTHCHECK"] = json.loads(match[1])
        previous = line
    return out


def _local(args: list[str]) -> list[str]:
    return [str(REPO) + a[len(APP):] if a.startswith(APP + "/") else a for a in args]


@pytest.fixture
def database():
    """A fresh, empty PostgreSQL database (the web's boot.sh migrates it, as in production)."""
    try:
        admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            name = f"lb_compose_{secrets.token_hex(4)}"
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001
        _missing(f"PostgreSQL is not reachable at {PG_ADMIN_URL} ({exc})")
    yield PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_every_compose_command_starts_as_written(database, tmp_path):
    cmd = _compose_cmd()
    if cmd is None:
        _missing("neither `docker compose` nor `docker-compose` is installed")
    if shutil.which("redis-server") is None:
        _missing("redis-server is not installed")
    redis_url = redis_test_url(14)
    conn = redis.Redis.from_url(redis_url)
    conn.flushdb()
    data = tmp_path / "data"
    env_file = tmp_path / "env"
    env_file.write_text("\n".join([
        f"DATABASE_URL={database}", f"REDIS_URL={redis_url}",
        f"SECRET_KEY={secrets.token_hex(16)}", f"LABEL_KEYS={Fernet.generate_key().decode()}",
        f"LB_DATA_HOST_DIR={data}", f"DEPLOYMENT_ID=compose-{secrets.token_hex(3)}",
        "COOKIE_SECURE=0", "WEB_WORKERS=1", "RECONCILE_EVERY_S=1", "REAP_EVERY_S=1"]) + "\n")
    done = subprocess.run([*cmd, "-f", str(COMPOSE), "--env-file", str(env_file), "--profile",
                           "gpu", "--profile", "tools", "config"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    port = free_port()
    venv_bin = str(Path(sys.executable).parent)
    procs: dict[str, subprocess.Popen] = {}

    def start(name: str, args: list[str], environment: dict) -> None:
        env = {"PATH": f"{venv_bin}:{os.environ['PATH']}", "HOME": str(tmp_path),
               "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1",
               **{k: str(v) for k, v in (environment or {}).items()}}
        if name == "web":
            env["PORT"] = str(port)
        log = open(tmp_path / f"{name}.log", "wb")
        try:
            procs[name] = subprocess.Popen(args, cwd=REPO, env=env, stdout=log, stderr=log,
                                           start_new_session=True)
        finally:
            log.close()

    def logs(name: str) -> str:
        return (tmp_path / f"{name}.log").read_text(errors="replace")

    def alive(name: str):
        proc = procs[name]
        assert proc.poll() is None, f"{name} exited rc={proc.returncode}:\n{logs(name)[-3000:]}"

    ours = {n: s for n, s in services.items() if (s.get("build") or {}).get("dockerfile")}
    assert {"web", "scoring-worker", "judge-worker", "gpu-worker-0", "reconciler",
            "reaper"} <= set(ours)
    try:
        rport = free_port()
        start("redis", [*services["redis"]["command"], "--port", str(rport), "--dir",
                        str(tmp_path)], {})
        images = {}
        for name, svc in ours.items():
            image = images.setdefault(svc["build"]["dockerfile"],
                                      _dockerfile(svc["build"]["dockerfile"]))
            entry = svc.get("entrypoint") or image["ENTRYPOINT"]
            command = svc.get("command") or image.get("CMD", [])
            ours[name] = {**svc, "_args": _local([*entry, *command]), "_image": image}
        # the web migrates the database first (boot.sh), as `depends_on` + its health gate do
        start("web", ours["web"]["_args"], ours["web"]["environment"])
        wait_for(lambda: _ready(port) or procs["web"].poll() is not None, timeout_s=120,
                 what="the web to answer /readyz", context=lambda: logs("web")[-3000:])
        alive("web")
        for name, svc in ours.items():
            if name != "web":
                start(name, svc["_args"], svc["environment"])
        rconn = redis.Redis(port=rport)
        wait_for(lambda: _pings(rconn), timeout_s=30, what="redis (compose's command) to answer")
        for name, svc in ours.items():
            check = svc["_image"].get("HEALTHCHECK")
            if name.endswith("worker") or "worker-" in name:
                wait_for(lambda: procs[name].poll() is not None or subprocess.run(
                    _local(check), cwd=REPO, env={**os.environ, "REDIS_URL": redis_url,
                                                  "PATH": f"{venv_bin}:{os.environ['PATH']}"},
                    capture_output=True, timeout=30).returncode == 0,
                    timeout_s=90, what=f"{name}'s health check", context=lambda: logs(name))
        wait_for(lambda: "reconcile pass at=" in logs("reconciler")
                 or procs["reconciler"].poll() is not None, timeout_s=90,
                 what="the reconciler's first pass", context=lambda: logs("reconciler"))
        wait_for(lambda: "reaped containers=" in logs("reaper")
                 or procs["reaper"].poll() is not None, timeout_s=90,
                 what="the reaper's first pass", context=lambda: logs("reaper"))
        for name in procs:
            alive(name)
        workers = {w.name: [q.name for q in w.queues] for w in Worker.all(connection=conn)}
        # the GPU worker serves the platform's re-runs of new releases last (issue 37)
        assert sorted(q for qs in workers.values() for q in qs) == [
            "gpu", "judge", "mail", "rerun", "scoring"], workers
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        conn.flushdb()
        conn.close()


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


def _pings(conn: redis.Redis) -> bool:
    try:
        return bool(conn.ping())
    except redis.exceptions.RedisError:
        return False
