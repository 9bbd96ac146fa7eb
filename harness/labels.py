"""Docker labels the harness puts on what it creates, and the deployment they belong to.

Every image the harness loads and every container it runs carries ``lb.deployment=<id>``, so
that several deployments (or a test run) sharing one Docker engine each clean up only their
own: the reaper filters on the label and never touches anything without it.
"""

from __future__ import annotations

import re
from typing import Any

LABEL_HARNESS = "lb.harness"
LABEL_DEPLOYMENT = "lb.deployment"
LABEL_SUBMISSION = "lb.submission"
LABEL_DEADLINE = "lb.deadline"
#: on a loaded image: the id the team's own config had (the loaded copy has a private id)
LABEL_SOURCE_IMAGE = "lb.source-image"

#: what a deployment id may look like: it is part of image repository names
DEPLOYMENT_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
DEFAULT_DEPLOYMENT = "default"


def check_deployment(deployment: Any) -> str:
    """Return ``deployment`` if it is a valid id (lowercase letters, digits, inner dashes,
    at most 40 characters), else raise ValueError."""
    if not isinstance(deployment, str) or len(deployment) > 40 or not DEPLOYMENT_RE.match(deployment):
        raise ValueError(f"deployment id must match {DEPLOYMENT_RE.pattern} (at most 40 "
                         f"characters), got {deployment!r}")
    return deployment
