"""``docker/compose.yaml`` validates and has the services, checks and mounts deploy.md promises."""
from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from tests.production.conftest import REPO

COMPOSE = REPO / "docker" / "compose.yaml"


def _compose_cmd() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"],
                                 capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")  # Debian's docker-compose package
    return [legacy] if legacy else None


@pytest.mark.parametrize("env_file", [None, REPO / "docker" / "env.example"])
def test_compose_config_validates(env_file):
    cmd = _compose_cmd()
    if cmd is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    args = [*cmd, "-f", str(COMPOSE)] + (["--env-file", str(env_file)] if env_file else [])
    done = subprocess.run([*args, "--profile", "gpu", "--profile", "tools", "config", "-q"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_compose_services_and_checks():
    doc = yaml.safe_load(COMPOSE.read_text())
    services = doc["services"]
    assert {"postgres", "redis", "web", "scoring-worker", "gpu-worker-0", "judge-worker",
            "reconciler", "reaper"} <= set(services)
    for name in ("postgres", "redis", "web"):
        assert "test" in services[name]["healthcheck"], name
    assert services["scoring-worker"]["command"] == ["worker", "--queues", "scoring,mail"]
    assert services["judge-worker"]["command"] == ["worker", "--queues", "judge"]
    gpu = services["gpu-worker-0"]
    assert gpu["command"] == ["worker", "--queues", "gpu"]
    [device] = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert device["device_ids"] == ["0"] and gpu["environment"]["GPU_DEVICE"] == "0"
    assert any(v["target"] == "/var/run/docker.sock" for v in gpu["volumes"])
    # DATA_DIR is the same path inside as on the host: the host's engine resolves bind mounts
    for name in ("web", "scoring-worker", "gpu-worker-0", "judge-worker"):
        data = services[name]["volumes"][0]
        assert data["source"] == data["target"] == services[name]["environment"]["DATA_DIR"]


def test_every_process_comes_back():
    """Restart policies (issue 17): whatever stops a process, compose starts it again; the
    reconciler runs at the period the recovery times in docs/operations.md assume."""
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name in ("postgres", "redis", "web", "scoring-worker", "judge-worker", "gpu-worker-0",
                 "reconciler", "reaper"):
        assert services[name].get("restart") in ("always", "unless-stopped"), name
    assert services["reconciler"]["command"] == ["reconcile", "--every",
                                                 "${RECONCILE_EVERY_S:-10}"]


SYSTEMD = REPO / "docker" / "systemd"
UNITS = {  # unit (an instance for templates) -> what its ExecStart must run
    # what docker/boot.sh runs (gevent workers, refused bodies closed), not settings of its own
    "leaderboard-web.service": "gunicorn -c python:leaderboard.server.gunicorn_conf ",
    "leaderboard-worker@scoring.1.service": "-m leaderboard worker --queues",
    "leaderboard-gpu-worker@0.service": "-m leaderboard worker --queues gpu",
    "leaderboard-reconciler.service": "-m leaderboard reconcile --every 10",
    "leaderboard-reaper.service": "-m leaderboard reap --every",
}


def _template(unit: str) -> str:
    name, _, rest = unit.partition("@")
    return f"{name}@.service" if rest else unit


def test_systemd_units_restart_always(tmp_path):
    import configparser

    assert {_template(u) for u in UNITS} == {p.name for p in SYSTEMD.glob("*.service")}
    for unit, command in UNITS.items():
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        parser.optionxform = str
        parser.read(SYSTEMD / _template(unit))
        service = parser["Service"]
        assert service["Restart"] == "always", unit
        assert parser["Unit"]["StartLimitIntervalSec"] == "0", unit  # never gives up
        assert service["EnvironmentFile"] == "/etc/leaderboard/env", unit
        assert command in service["ExecStart"], unit
    boot = (REPO / "docker" / "boot.sh").read_text()
    assert "exec gunicorn -c python:leaderboard.server.gunicorn_conf app:app" in boot
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        return
    for unit in UNITS:  # syntax and keys, as systemd reads them (the code is not installed here)
        (tmp_path / unit).symlink_to(SYSTEMD / _template(unit))
        done = subprocess.run([analyze, "verify", str(tmp_path / unit)], capture_output=True,
                              text=True, timeout=60)
        problems = [line for line in (done.stdout + done.stderr).splitlines()
                    if line.strip() and "is not executable" not in line]
        assert problems == [], (unit, problems)
