"""Fixtures for container submissions end to end: the real Docker engine, a real RQ worker
process on the ``gpu`` queue (Redis db 11), SQLite (the worker is another process), tiny limits,
and ``docker save`` tarballs of busybox test images built once per session.

Reuses the server fixtures (`tests.server.conftest`): app, client, session, auth, demo packs.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import docker
import docker.errors
import pytest

from leaderboard.server.config import REPO_ROOT
from tests.harness.images.build import build_script_image, save_image
from tests.redis_db import clean_redis_db, redis_test_url
from tests.server.conftest import (  # noqa: F401
    app,
    auth,
    client,
    demo_packs,
    imported,
    make_config,
    session,
    sqlite_url,
)

REDIS_URL = os.environ.get("LB_TEST_REDIS_CONTAINERS") or redis_test_url(11)
LIMITS = {"HARNESS_WALL_S": "20", "HARNESS_MEMORY_BYTES": str(128 << 20), "HARNESS_CPUS": "1",
          "HARNESS_PIDS": "64", "HARNESS_OPEN_FILES": "256", "HARNESS_TMP_BYTES": str(8 << 20),
          "HARNESS_SHM_BYTES": str(8 << 20), "HARNESS_OUTPUT_BYTES": str(8 << 20),
          "HARNESS_LOG_BYTES": "4096", "HARNESS_TARBALL_BYTES": str(64 << 20),
          "HARNESS_IMAGE_BYTES": str(128 << 20), "HARNESS_POLL_S": "0.05"}


@pytest.fixture(scope="session")
def docker_client():
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except (docker.errors.DockerException, OSError) as exc:
        pytest.skip(f"Docker engine not reachable ({exc}); run scripts/start-docker.sh")
    yield client
    client.close()


@pytest.fixture
def redis_url():
    with clean_redis_db(REDIS_URL) as url:
        yield url


@pytest.fixture
def app_config(sqlite_url, tmp_path, redis_url):  # noqa: F811
    return make_config(sqlite_url, tmp_path, REDIS_URL=redis_url, MAX_IMAGE_MB=32,
                       CONTAINER_MARGIN_S=60, **LIMITS)


def correct_predictions(pack_dir, split: str) -> str:
    """The split's right answers as predictions JSONL (what a perfect detector writes)."""
    rows = []
    with open(pack_dir / "splits" / split / "labels.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                label = json.loads(line)
                rows.append(json.dumps({"id": label["id"], "label": label["label"],
                                        "score": 1.0 if label["label"] == "fake" else 0.0}))
    return "\n".join(rows) + "\n"


def _scripts(demo_packs) -> dict[str, str]:  # noqa: F811
    answers = correct_predictions(demo_packs["syncred"], "dev")
    return {
        # reads its input, refuses to run if labels were mounted, writes the baked-in answers
        "correct": ("set -e\n[ -e /input/labels.jsonl ] && exit 9\n"
                    "echo \"items: $(wc -l < /input/items.jsonl) on $LB_BENCHMARK/$LB_SPLIT "
                    "tasks=$LB_TASKS\"\n"
                    "cat > /output/predictions.jsonl <<'EOF'\n" + answers + "EOF\n"),
        "exit3": "echo 'loading model'\necho 'cannot find weights' >&2\nexit 3\n",
        "malformed": ("printf '{\"id\": \"nope\", \"label\": \"maybe\"}\\nnot json\\n' "
                      "> /output/predictions.jsonl\n"),
        "sleeper": "sleep 1000\n",
    }


@pytest.fixture(scope="session")
def tarballs(docker_client, demo_packs, tmp_path_factory):  # noqa: F811
    """``{name: path}`` of ``docker save`` tarballs; the built images are removed again so that
    every run really loads its image from the upload."""
    out = tmp_path_factory.mktemp("tarballs")
    paths = {}
    for name, script in _scripts(demo_packs).items():
        image_id = build_script_image(docker_client, tag=f"lb-containers-test:{name}", script=script)
        paths[name] = save_image(docker_client, image_id, out / f"{name}.tar")
        docker_client.images.remove(image_id, force=True)
    return paths


@pytest.fixture
def sleeper_image(docker_client, tarballs):
    """The sleeper image loaded under a test tag (for the reaper test); removed after."""
    with open(tarballs["sleeper"], "rb") as fh:
        (image,) = docker_client.images.load(fh)
    yield image.id
    try:
        docker_client.images.remove(image.id, force=True)
    except docker.errors.APIError:
        pass


def run_worker(app) -> subprocess.CompletedProcess:
    """One real worker process on the ``gpu`` queue, until the queue is empty."""
    cfg = app.config
    env = {**os.environ, "DATABASE_URL": cfg["DATABASE_URL"], "REDIS_URL": cfg["REDIS_URL"],
           "DATA_DIR": cfg["DATA_DIR"], "LABEL_KEYS": ",".join(cfg["LABEL_KEYS"]),
           "SECRET_KEY": cfg["SECRET_KEY"], "CONTAINER_MARGIN_S": "60", **LIMITS}
    return subprocess.run([sys.executable, "-m", "leaderboard", "worker", "--queues", "gpu",
                           "--burst"], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=180)
