"""Fixtures for the harness tests: a real Docker engine, tiny busybox images, small limits.

Docker-backed tests skip when no engine answers, unless ``HARNESS_REQUIRE_DOCKER=1`` (set in CI
after ``scripts/start-docker.sh``), in which case they fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import docker
import docker.errors
import pytest

from harness import Limits
from harness.sandbox import LABEL_DEPLOYMENT, LABEL_HARNESS
from tests.harness.images.build import build_script_image
from tests.harness.images.scenarios import SCENARIOS

TEST_IMAGE_REPO = "lb-harness-test"
#: this test session's deployment: other runs sharing the engine have their own containers
DEPLOYMENT = f"harness-test-{os.getpid()}"  # the same if this module is imported twice


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except (docker.errors.DockerException, OSError) as exc:
        if os.environ.get("HARNESS_REQUIRE_DOCKER") == "1":
            pytest.fail(f"Docker engine not reachable ({exc}); run scripts/start-docker.sh")
        pytest.skip(f"Docker engine not reachable ({exc}); run scripts/start-docker.sh")
    yield client
    client.close()


@pytest.fixture(scope="session")
def scenario_image(docker_client: docker.DockerClient) -> Iterator:
    """``scenario_image("good") -> image id``, each built once per session and removed after."""
    built: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in built:
            built[name] = build_script_image(docker_client, tag=f"{TEST_IMAGE_REPO}:{name}", script=SCENARIOS[name])
        return built[name]

    yield get
    for image_id in built.values():
        try:
            docker_client.images.remove(image_id, force=True)
        except docker.errors.APIError:
            pass


@pytest.fixture
def limits() -> Limits:
    return Limits(
        wall_s=3.0, memory_bytes=64 << 20, cpus=1.0, pids=64, open_files=256, tmp_bytes=8 << 20,
        shm_bytes=8 << 20, output_bytes=8 << 20, output_files=100, log_bytes=4096,
        tarball_bytes=64 << 20, image_bytes=128 << 20, poll_s=0.05,
    )


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """(input_dir with two public items, empty output_dir)."""
    input_dir, output_dir = tmp_path / "input", tmp_path / "output"
    (input_dir / "media").mkdir(parents=True)
    output_dir.mkdir()
    (input_dir / "items.jsonl").write_text('{"id": "a1", "task": "t"}\n{"id": "a2", "task": "t"}\n')
    return input_dir, output_dir


@pytest.fixture
def no_leftover_containers(docker_client: docker.DockerClient) -> Iterator[None]:
    """Fail the test if it leaves any harness container of this session behind."""
    yield
    left = docker_client.containers.list(all=True, filters={
        "label": [f"{LABEL_HARNESS}=1", f"{LABEL_DEPLOYMENT}={DEPLOYMENT}"]})
    assert left == [], f"containers left behind: {[c.name for c in left]}"
