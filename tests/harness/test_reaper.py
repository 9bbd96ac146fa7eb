"""The reaper removes its own deployment's containers past their deadline, and nothing else.

Deadlines are set an hour ahead and the reaper is given a clock further ahead still, so that a
reaper of another deployment on the same engine, running on the real clock (another test run on
this machine, with older code that reaped every harness container), never takes them first.
"""

import logging
import os
import socket
import time

import docker
import docker.errors
import pytest

from harness import reap, reap_images
from harness.sandbox import LABEL_DEADLINE, LABEL_DEPLOYMENT, LABEL_HARNESS, LABEL_SUBMISSION
from tests.harness.images.build import build_script_image

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


def _labelled_image(client, dep: str, submission: str) -> str:
    return build_script_image(client, tag=f"lb-reaper-race:{dep}-{submission}",
                              script=f"echo {submission}\n",
                              extra=f'LABEL {LABEL_DEPLOYMENT}="{dep}" {LABEL_SUBMISSION}="{submission}"')


def test_reap_images_survives_an_image_removed_mid_pass(docker_client, monkeypatch):
    """Issue 36: the worker removes a finished submission's image between the reaper's listing
    and what it does next; docker-py's images.list() inspected every listed image and raised
    ImageNotFound, which ended `reap --every`. The pass now goes on to the other images."""
    dep = f"reaper-race-{os.getpid()}"
    gone, stale = _labelled_image(docker_client, dep, "1"), _labelled_image(docker_client, dep, "2")
    listing = docker_client.api.images

    def listed_then_removed(*args, **kwargs):
        out = listing(*args, **kwargs)
        docker_client.api.remove_image(gone, force=True)  # the worker's clean-up, meanwhile
        return out

    monkeypatch.setattr(docker_client.api, "images", listed_then_removed)
    try:
        assert reap_images(docker_client, deployment=dep, in_flight=lambda s: False) == [stale]
    finally:
        monkeypatch.undo()
        for image_id in (gone, stale):
            try:
                docker_client.api.remove_image(image_id, force=True)
            except docker.errors.NotFound:
                pass
    assert not docker_client.api.images(filters={"label": f"{LABEL_DEPLOYMENT}={dep}"})


def test_reap_survives_a_container_removed_mid_pass(docker_client, scenario_image, monkeypatch):
    image_id = scenario_image("sleep_forever")
    t = time.time()
    ours = {LABEL_HARNESS: "1", LABEL_DEPLOYMENT: DEP, LABEL_DEADLINE: str(int(t + 3600))}
    gone = _container(docker_client, image_id, ours)
    expired = _container(docker_client, image_id, ours)
    listing = docker_client.api.containers

    def listed_then_removed(*args, **kwargs):
        out = listing(*args, **kwargs)
        docker_client.api.remove_container(gone.id, force=True)  # its worker, meanwhile
        return out

    monkeypatch.setattr(docker_client.api, "containers", listed_then_removed)
    try:
        removed = reap(docker_client, deployment=DEP, now=t + 2 * 3600)
    finally:
        monkeypatch.undo()
        for container in (gone, expired):
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass
    assert expired.id in removed and gone.id not in removed


def test_reaper_logs_an_engine_that_does_not_answer(caplog):
    """The engine restarting (its port refuses): the pass logs it and returns; the next runs."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = docker.DockerClient(base_url=f"tcp://127.0.0.1:{port}", version="1.41")
    try:
        with caplog.at_level(logging.WARNING, logger="harness.reaper"):
            assert reap(client, deployment=DEP) == []
            assert reap_images(client, deployment=DEP, in_flight=lambda s: False) == []
    finally:
        client.close()
    assert "could not list containers" in caplog.text and "could not list images" in caplog.text
