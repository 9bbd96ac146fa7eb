"""The reaper removes labelled containers past their deadline, and nothing else."""

import pytest

from harness import reap
from harness.sandbox import LABEL_DEADLINE, LABEL_DEPLOYMENT, LABEL_HARNESS, LABEL_SUBMISSION

pytestmark = pytest.mark.docker
DEP = "reaper-test"


def _container(client, image_id, labels):
    container = client.containers.create(image_id, network_mode="none", labels=labels)
    container.start()
    return container


def test_reap_removes_only_expired_harness_containers(docker_client, scenario_image):
    image_id = scenario_image("sleep_forever")
    ours = {LABEL_HARNESS: "1", LABEL_DEPLOYMENT: DEP}
    expired = _container(docker_client, image_id, {**ours, LABEL_DEADLINE: "1000", LABEL_SUBMISSION: "s"})
    broken = _container(docker_client, image_id, {**ours, LABEL_DEADLINE: "soon"})
    alive = _container(docker_client, image_id, {**ours, LABEL_DEADLINE: "3000"})
    other = _container(docker_client, image_id, {LABEL_DEADLINE: "1000"})
    elsewhere = _container(docker_client, image_id, {LABEL_HARNESS: "1", LABEL_DEPLOYMENT: "other",
                                                     LABEL_DEADLINE: "1000"})
    try:
        removed = reap(docker_client, deployment=DEP, now=2000)
        assert sorted(removed) == sorted([expired.id, broken.id])
        remaining = {c.id for c in docker_client.containers.list(all=True)}
        assert alive.id in remaining and other.id in remaining and elsewhere.id in remaining
        assert expired.id not in remaining and broken.id not in remaining
        assert reap(docker_client, deployment=DEP, now=2000) == []
        assert reap(docker_client, deployment=DEP, now=5000) == [alive.id]
    finally:
        for container in (alive, other, elsewhere):
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - already reaped
                pass
