"""The reaper removes its own deployment's containers past their deadline, and nothing else.

Deadlines are set an hour ahead and the reaper is given a clock further ahead still, so that a
reaper of another deployment on the same engine, running on the real clock (another test run on
this machine, with older code that reaped every harness container), never takes them first.
"""

import time

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
    hour, t = 3600, time.time()
    ours = {LABEL_HARNESS: "1", LABEL_DEPLOYMENT: DEP}
    expired = _container(docker_client, image_id, {**ours, LABEL_DEADLINE: str(int(t + hour)),
                                                   LABEL_SUBMISSION: "s"})
    broken = _container(docker_client, image_id, {**ours, LABEL_DEADLINE: "soon"})
    alive = _container(docker_client, image_id, {**ours, LABEL_DEADLINE: str(int(t + 3 * hour))})
    other = _container(docker_client, image_id, {LABEL_DEADLINE: str(int(t + hour))})
    elsewhere = _container(docker_client, image_id, {LABEL_HARNESS: "1", LABEL_DEPLOYMENT: "other",
                                                     LABEL_DEADLINE: str(int(t + hour))})
    try:
        removed = reap(docker_client, deployment=DEP, now=t + 2 * hour)
        # "broken" (no readable deadline) may already be gone: any reaper takes it at once
        assert expired.id in removed and set(removed) <= {expired.id, broken.id}
        remaining = {c.id for c in docker_client.containers.list(all=True)}
        assert alive.id in remaining and other.id in remaining and elsewhere.id in remaining
        assert expired.id not in remaining and broken.id not in remaining
        assert reap(docker_client, deployment=DEP, now=t + 2 * hour) == []
        assert reap(docker_client, deployment=DEP, now=t + 4 * hour) == [alive.id]
    finally:
        for container in (alive, other, elsewhere):
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - already reaped
                pass
