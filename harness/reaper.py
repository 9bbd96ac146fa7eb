"""Remove harness containers whose deadline has passed (the worker that owned them died).

Every sandbox container carries ``lb.harness=1`` and ``lb.deadline=<unix seconds>`` (start + wall
limit + ``Limits.reap_grace_s``). A healthy worker always removes its container well before then,
so anything still there afterwards is an orphan: kill and remove it, volumes included.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import docker
import docker.errors

from .sandbox import LABEL_DEADLINE, LABEL_HARNESS

log = logging.getLogger(__name__)


def reap(client: docker.DockerClient, now: float | None = None) -> list[str]:
    """Remove every labelled container past its deadline; return their ids.

    A container with a missing or unreadable deadline is treated as expired: the harness always
    sets one, so it is not ours to keep.
    """
    now = time.time() if now is None else float(now)
    removed: list[str] = []
    for container in client.containers.list(all=True, filters={"label": f"{LABEL_HARNESS}=1"}):
        if _deadline(container.labels) > now:
            continue
        try:
            container.remove(force=True, v=True)
        except docker.errors.NotFound:
            continue
        except docker.errors.APIError:
            log.exception("reaper could not remove container id=%s", container.id)
            continue
        log.info("reaped container id=%s submission=%s", container.id, container.labels.get("lb.submission"))
        removed.append(container.id)
    return removed


def _deadline(labels: dict[str, Any]) -> float:
    try:
        return float(labels.get(LABEL_DEADLINE, ""))
    except ValueError:
        return float("-inf")
