"""Remove what a dead worker left behind: expired containers and finished submissions' images.

Only this deployment's (``lb.deployment=<id>``): several deployments, or a test run, may share
one Docker engine, and each one's reaper must leave the others' work alone.

Every sandbox container carries ``lb.harness=1``, ``lb.deployment`` and ``lb.deadline=<unix
seconds>`` (start + wall limit + ``Limits.reap_grace_s``). A healthy worker always removes its
container well before then, so anything still there afterwards is an orphan: kill and remove it,
volumes included. Every loaded image carries ``lb.deployment`` and ``lb.submission`` in its
config (`harness.engine`); `reap_images` removes those whose submission the caller says is no
longer running.

A pass survives whatever the engine does meanwhile (issue 36): a container or image removed
between the listing and its removal is skipped, and an engine that restarts or stops answering
ends the pass with a logged warning; `reap --every` runs the next one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import docker
import docker.errors
import requests.exceptions

from .labels import (
    LABEL_DEADLINE,
    LABEL_DEPLOYMENT,
    LABEL_HARNESS,
    LABEL_SUBMISSION,
    check_deployment,
)

log = logging.getLogger(__name__)

#: what the engine may do to a pass: a 404 for something removed meanwhile, a 5xx or a refused
#: connection while it restarts, a read timeout while it is busy
ENGINE_TROUBLE = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)


def reap(client: docker.DockerClient, *, deployment: str, now: float | None = None) -> list[str]:
    """Remove this deployment's harness containers past their deadline; return their ids.

    A container with a missing or unreadable deadline is treated as expired: the harness always
    sets one, so it is not ours to keep. Never raises for the engine: a container gone before it
    is removed is skipped, and a listing that fails (the engine restarting) is logged and the
    pass ends with what it removed; the next pass tries again.
    """
    deployment = check_deployment(deployment)
    now = time.time() if now is None else float(now)
    removed: list[str] = []
    filters = {"label": [f"{LABEL_HARNESS}=1", f"{LABEL_DEPLOYMENT}={deployment}"]}
    try:
        # the low-level listing carries the labels: docker-py's containers.list() would inspect
        # each container again and raise for one removed in between
        listed = client.api.containers(all=True, filters=filters)
    except ENGINE_TROUBLE as exc:
        log.warning("reaper: could not list containers (%s: %s); next pass", type(exc).__name__, exc)
        return removed
    for summary in listed:
        cid, labels = summary.get("Id", ""), summary.get("Labels") or {}
        if labels.get(LABEL_DEPLOYMENT) != deployment or _deadline(labels) > now:
            continue
        try:
            client.api.remove_container(cid, force=True, v=True)
        except docker.errors.NotFound:
            continue  # removed meanwhile (its worker, or another reaper)
        except ENGINE_TROUBLE:
            log.warning("reaper could not remove container id=%s; next pass", cid, exc_info=True)
            continue
        log.info("reaped container id=%s submission=%s", cid, labels.get(LABEL_SUBMISSION))
        removed.append(cid)
    return removed


def reap_images(client: docker.DockerClient, *, deployment: str,
                in_flight: Callable[[str], bool]) -> list[str]:
    """Remove this deployment's loaded images whose submission is not ``in_flight``; return ids.

    An image whose removal fails (a container the reaper has not removed yet still uses it) is
    left for the next pass, and one removed meanwhile (its worker finished) is skipped. Never
    raises for the engine (see `reap`); ``in_flight``'s own errors (the database) propagate.
    """
    deployment = check_deployment(deployment)
    removed: list[str] = []
    try:
        # low-level: the summaries carry the labels; docker-py's images.list() inspects every
        # image again and raises ImageNotFound for one a worker removed in between (issue 36)
        listed = client.api.images(filters={"label": f"{LABEL_DEPLOYMENT}={deployment}"})
    except ENGINE_TROUBLE as exc:
        log.warning("reaper: could not list images (%s: %s); next pass", type(exc).__name__, exc)
        return removed
    for summary in listed:
        image_id, labels = summary.get("Id", ""), summary.get("Labels") or {}
        if labels.get(LABEL_DEPLOYMENT) != deployment or in_flight(labels.get(LABEL_SUBMISSION, "")):
            continue
        try:
            client.api.remove_image(image_id, force=True)
        except docker.errors.NotFound:
            continue
        except ENGINE_TROUBLE:
            log.warning("could not remove stale image %s; next pass", image_id, exc_info=True)
            continue
        log.info("reaped image id=%s submission=%s", image_id, labels.get(LABEL_SUBMISSION))
        removed.append(image_id)
    return removed


def _deadline(labels: dict[str, Any]) -> float:
    try:
        return float(labels.get(LABEL_DEADLINE, ""))
    except (TypeError, ValueError):
        return float("-inf")
