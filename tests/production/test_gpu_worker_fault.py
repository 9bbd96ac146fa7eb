"""A GPU worker SIGKILLed while its submission's container runs: the reaper and the reconciler.

Real pieces throughout: a container submission uploaded through ``POST /api/v1/submissions``
(``kind=container``, a ``docker save`` tarball of a busybox ``FROM scratch`` image that sleeps),
the real ``python -m leaderboard worker --queues gpu`` running `container_jobs` with the harness
on this machine's Docker engine, the harness reaper, the reconciler. Killing the worker leaves an
orphaned container and a row stuck in "scoring". Proven: the reaper leaves the container alone
before its ``lb.deadline`` label and removes it after; the reconciler leaves the row alone before
its deadline, then re-queues it on the ``gpu`` queue (a run left: a new worker runs it to an end
with a reason) or fails it with the reason (``CONTAINER_MAX_ATTEMPTS`` used up). The reaper's
clock is its ``now`` argument and the reconciler's is moved forward, instead of sleeping through
the wall limit.
"""
from __future__ import annotations

import io
import os
import time

import pytest

from tests.production.conftest import crash, wait_for

docker = pytest.importorskip("docker")

pytestmark = [pytest.mark.slow, pytest.mark.docker]

WALL_S = 30  # the killed run's wall limit (the sleeper would run until it)
# small limits that fit a 2-core CI machine (the defaults assume a GPU host: 4 CPUs, 16 GiB)
LIMITS = {"HARNESS_CPUS": "1", "HARNESS_MEMORY_BYTES": str(64 << 20), "HARNESS_PIDS": "64",
          "HARNESS_REAP_GRACE_S": "1"}
PAST_DEADLINES_S = WALL_S + 600 + 60 + 30  # wall + CONTAINER_MARGIN_S + claim grace + slack


@pytest.fixture(scope="module")
def docker_client():
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except (docker.errors.DockerException, OSError) as exc:
        if os.environ.get("HARNESS_REQUIRE_DOCKER") == "1":
            pytest.fail(f"Docker engine not reachable ({exc}); run scripts/start-docker.sh")
        pytest.skip(f"Docker engine not reachable ({exc}); run scripts/start-docker.sh")
    yield client
    client.close()


@pytest.fixture(scope="module")
def sleeper_tar(docker_client, tmp_path_factory):
    """A ``docker save`` tarball of an image that sleeps forever (the image itself removed)."""
    from tests.harness.images.build import build_script_image, save_image
    from tests.harness.images.scenarios import SLEEP_FOREVER

    image_id = build_script_image(docker_client, tag="lb-prod-test:sleep", script=SLEEP_FOREVER)
    path = save_image(docker_client, image_id, tmp_path_factory.mktemp("img") / "sleeper.tar")
    docker_client.images.remove(image_id, force=True)
    return path


def _labelled(client, sid: int, deployment: str):
    """The submission's containers (this deployment's: other runs may share the engine).
    Sparse: the listing's own fields, not an inspection of each container, which fails with
    NotFound when one is removed between the listing and its inspection (the harness removes
    finished runs while the test polls)."""
    return client.containers.list(all=True, sparse=True, filters={
        "label": [f"lb.submission={sid}", f"lb.deployment={deployment}"]})


def _upload_container(stack, tar) -> int:
    from werkzeug.datastructures import FileStorage
    from werkzeug.test import encode_multipart

    # encoded in memory: the test client's own spooled encoder leaves its temp file unclosed
    boundary, body = encode_multipart({
        "benchmark": stack.benchmark, "split": "dev", "kind": "container",
        "method_name": "sleeper",
        "file": FileStorage(io.BytesIO(tar.read_bytes()), filename="sleeper.tar")})
    resp = stack.app.test_client().post(
        "/api/v1/submissions", headers={"Authorization": f"Bearer {stack.token}"}, data=body,
        content_type=f"multipart/form-data; boundary={boundary}")
    assert resp.status_code == 202, resp.get_data(as_text=True)
    return resp.get_json()["id"]


@pytest.mark.parametrize("max_attempts, outcome", [(2, "requeued"), (1, "failed")])
def test_gpu_worker_killed_mid_container_run(stack, docker_client, sleeper_tar,
                                             max_attempts, outcome):
    from harness import reap

    stack.app.config["CONTAINER_MAX_ATTEMPTS"] = max_attempts  # the reconciler's setting
    dep = stack.app.config["DEPLOYMENT_ID"]  # the worker's too: same SECRET_KEY
    sid = _upload_container(stack, sleeper_tar)
    worker = stack.worker(queues="gpu", HARNESS_WALL_S=str(WALL_S), **LIMITS)
    wait_for(lambda: any(c.status == "running" for c in _labelled(docker_client, sid, dep)),
             timeout_s=60, what="the submission's container to run", context=stack.logs)
    assert stack.status(sid) == "scoring"

    crash(worker)  # the worker and its work-horse (SIGKILL), as a host crash
    time.sleep(1.0)
    [orphan] = _labelled(docker_client, sid, dep)  # nobody is left to remove it
    orphan.reload()
    assert orphan.status == "running"

    assert orphan.labels["lb.deployment"] == dep
    assert reap(docker_client, deployment="another-deployment", now=time.time() + 10**6) == []
    assert reap(docker_client, deployment=dep, now=time.time()) == []  # might be healthy
    assert _labelled(docker_client, sid, dep) != []
    removed = reap(docker_client, deployment=dep, now=time.time() + WALL_S + 60)  # past grace
    assert orphan.id in removed
    assert _labelled(docker_client, sid, dep) == []

    report = stack.reconcile()
    assert sid not in report.requeued + report.failed  # the row's deadline is still ahead
    report = stack.reconcile(after_s=PAST_DEADLINES_S)
    if outcome == "failed":
        assert report.failed == [sid]
        status, reason, attempts = stack.rows()[sid]
        assert (status, attempts) == ("failed", 1)
        assert reason.startswith("platform error: the runner stopped during the run")
        return
    assert report.requeued == [sid]
    assert stack.status(sid) == "queued"
    # a healthy worker takes the re-queued job; the sleeper hits its (now short) wall limit
    rerun = stack.worker(queues="gpu", burst=True, HARNESS_WALL_S="2", **LIMITS)
    rerun.wait(timeout=120)
    status, reason, attempts = stack.rows()[sid]
    assert (status, attempts) == ("failed", 2), (reason, stack.logs())
    assert "timeout" in reason.lower() or "time limit" in reason.lower(), reason
    assert _labelled(docker_client, sid, dep) == []
