"""Remove what a dead worker left behind: expired containers and finished submissions' images.

Only this deployment's (``lb.deployment=<id>``): several deployments, or a test run, may share
one Docker engine, and each one's reaper must leave the others' work alone.

Every sandbox container carries ``lb.harness=1``, ``lb.deployment`` and ``lb.deadline=<unix
seconds>`` (start + wall limit + ``Limits.reap_grace_s``). A healthy worker always removes its
container well before then, so anything still there afterwards is an orphan: kill and remove it,
volumes included. Every loaded image carries ``lb.deployment`` and ``lb.submission`` in its
config (`harness.engine`); `reap_images` removes those whose submission the caller says is no
longer running.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import docker
import docker.errors

from .labels import (
    LABEL_DEADLINE,
    LABEL_DEPLOYMENT,
    LABEL_HARNESS,
    LABEL_SUBMISSION,
    check_deployment,
)

log = logging.getLogger(__name__)


def reap(client: docker.DockerClient, *, deployment: str, now: float | None = None) -> list[str]:
    """Remove this deployment's harness containers past their deadline; return their ids.

    A container with a missing or unreadable deadline is treated as expired: the harness always
    sets one, so it is not ours to keep.
    """
    deployment = check_deployment(deployment)
    now = time.time() if now is None else float(now)
    removed: list[str] = []
    filters = {"label": [f"{LABEL_HARNESS}=1", f"{LABEL_DEPLOYMENT}={deployment}"]}
    for container in client.containers.list(all=True, filters=filters):
        if container.labels.get(LABEL_DEPLOYMENT) != deployment or _deadline(container.labels) > now:
            continue
        try:
            container.remove(force=True, v=True)
        except docker.errors.NotFound:
            continue
        except docker.errors.APIError:
            log.exception("reaper could not remove container id=%s", container.id)
            continue
        log.info("reaped container id=%s submission=%s", container.id, container.labels.get(LABEL_SUBMISSION))
        removed.append(container.id)
    return removed


def reap_images(client: docker.DockerClient, *, deployment: str,
                in_flight: Callable[[str], bool]) -> list[str]:
    """Remove this deployment's loaded images whose submission is not ``in_flight``; return ids.

    An image whose removal fails (a container the reaper has not removed yet still uses it) is
    left for the next pass.
    """
    deployment = check_deployment(deployment)
    removed: list[str] = []
    for image in client.images.list(filters={"label": f"{LABEL_DEPLOYMENT}={deployment}"}):
        labels = image.labels or {}
        if labels.get(LABEL_DEPLOYMENT) != deployment or in_flight(labels.get(LABEL_SUBMISSION, "")):
            continue
        try:
            client.images.remove(image.id, force=True)
        except docker.errors.ImageNotFound:
            continue
        except docker.errors.APIError:
            log.warning("could not remove stale image %s; next pass", image.id, exc_info=True)
            continue
        log.info("reaped image id=%s submission=%s", image.id, labels.get(LABEL_SUBMISSION))
        removed.append(image.id)
    return removed


def _deadline(labels: dict[str, Any]) -> float:
    try:
        return float(labels.get(LABEL_DEADLINE, ""))
    except ValueError:
        return float("-inf")
