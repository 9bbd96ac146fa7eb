"""Load an inspected tarball into Docker under a private image id; remove only what it loaded.

Two ways an upload could reach the host's own images are closed here:

* **Tags.** Docker applies the tarball's ``RepoTags`` while loading, so an upload tagged e.g.
  ``leaderboard-worker:latest`` would replace an image this host runs. The copy streamed to
  Docker has every name removed (``manifest.json`` RepoTags emptied, ``repositories``,
  ``index.json`` and ``oci-layout`` dropped, so Docker reads ``manifest.json`` alone).
* **Ids.** An image id is the sha256 of its config, so a team can reproduce, byte for byte, an
  image the host already has (a public base image). Loading it would be a no-op, and removing
  "the submission's image" afterwards would delete the host's. So an upload whose id the engine
  already knows is refused, and every image is loaded under a *private* id: its config gains the
  labels ``lb.deployment``, ``lb.submission`` and ``lb.source-image`` (the team's own id), which
  changes the id to one that only this deployment's load of this submission can produce. Layers
  are shared by content as Docker always does; removing the private image only drops Docker's
  reference to them, never a layer another image uses.

The load runs under a disk watchdog (`harness.watchdog`): if the engine's disk fills past the
image cap while it loads, the upload is cut, the progress stream closed and the image refused.
After loading, Docker must report exactly the private id, and the size it reports for the image
must be within ``Limits.image_bytes`` (inspection counted the decompressed layers; this is the
second check, on what actually landed on disk). The image is tagged
``lb-submission-<deployment>:<submission>`` for people reading ``docker images``; containers are
always created from the id, so nothing is ever pulled.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from .config import Limits
from .errors import EngineError, ImageRejected
from .labels import (
    DEFAULT_DEPLOYMENT,
    LABEL_DEPLOYMENT,
    LABEL_SOURCE_IMAGE,
    LABEL_SUBMISSION,
    check_deployment,
)
from .tarball import TarballInfo, inspect_tarball
from .watchdog import MARGIN_BYTES, DiskWatchdog, LoadStopped, docker_root_probe, watched_body

IMAGE_REPOSITORY = "lb-submission"
PRIVATE_CONFIG_NAME = "lb-private-config.json"
_SUBMISSION_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_IMAGE_ID_RE = re.compile(r"^sha256:[0-9a-f]{64}$")
_LOADED_RE = re.compile(r"(^Loaded image ID: |^Loaded image: )(.+)$")
_DROPPED = ("repositories", "index.json", "oci-layout", PRIVATE_CONFIG_NAME)
#: words in a Docker error that point at the host, not at the uploaded image
_HOST_FAILURES = ("no space left", "read-only file system", "input/output error",
                  "cannot allocate memory", "too many open files", "connection refused",
                  "connection reset", "broken pipe", "disk quota exceeded")


def check_submission_id(submission_id: Any) -> str:
    """Return ``submission_id`` as a string usable as a Docker tag and label, or raise ValueError."""
    text = str(submission_id)
    if not _SUBMISSION_ID_RE.match(text):
        raise ValueError(f"submission id must match {_SUBMISSION_ID_RE.pattern}, got {submission_id!r}")
    return text


def image_repository(deployment: str) -> str:
    """``lb-submission-<deployment>``: the repository a deployment tags its loaded images in."""
    return f"{IMAGE_REPOSITORY}-{check_deployment(deployment)}"


def private_config(config: bytes, *, deployment: str, submission: str, source: str) -> bytes:
    """The team's image config with this deployment's labels added (a new, private image id)."""
    data = json.loads(config)
    inner = data.get("config") or {}
    labels = dict(inner.get("Labels") or {})
    labels.update({LABEL_DEPLOYMENT: deployment, LABEL_SUBMISSION: submission,
                   LABEL_SOURCE_IMAGE: source})
    data["config"] = {**inner, "Labels": labels}
    return json.dumps(data, separators=(",", ":")).encode()


def load_image(
    client: docker.DockerClient,
    path: str | os.PathLike[str],
    submission_id: Any,
    *,
    limits: Limits | None = None,
    info: TarballInfo | None = None,
    deployment: str = DEFAULT_DEPLOYMENT,
    probe: Callable[[], int] | None = None,
) -> str:
    """Inspect (unless ``info`` is given), load under a private id, check its size, tag it;
    return the private id ``sha256:...``.

    The load runs under a `harness.watchdog.DiskWatchdog` on the engine's data root (``probe``
    replaces its measure of used bytes, for tests); a trip stops the load and refuses the image.

    Raises ``ImageRejected`` for anything wrong with the upload (the team's error, with the
    reason), ``EngineError`` when Docker or the host fails.
    """
    tag = check_submission_id(submission_id)
    deployment = check_deployment(deployment)
    limits = limits if limits is not None else Limits()
    if info is None or not info.config:
        info = inspect_tarball(path, limits)
    if _exists(client, info.image_id):
        raise ImageRejected(
            f"this runner already has an image with the id {info.image_id}: submit an image you "
            "built (add your detector to it), not a copy of an existing one")
    config = private_config(info.config, deployment=deployment, submission=tag,
                            source=info.image_id)
    private_id = "sha256:" + hashlib.sha256(config).hexdigest()
    with tempfile.TemporaryDirectory(prefix="lb-load-", dir=Path(path).parent) as tmp:
        clean = Path(tmp) / "image.tar"
        _write_private(Path(path), clean, config)
        # Docker unpacks the archive to a temporary directory, then writes the layers
        watchdog = DiskWatchdog(probe if probe is not None else docker_root_probe(client),
                                allowance=limits.image_bytes + clean.stat().st_size + MARGIN_BYTES,
                                poll_s=limits.poll_s)
        with watchdog:
            try:
                ids = _load(client, clean, watchdog)
            except (docker.errors.ImageLoadError, docker.errors.APIError) as exc:
                if not watchdog.tripped.is_set():
                    raise _load_failure(exc) from None
                ids = set()
            except (LoadStopped, requests.RequestException) as exc:
                if not watchdog.tripped.is_set():
                    raise EngineError(f"Docker could not load the image: {exc}") from None
                ids = set()
            except Exception:  # noqa: BLE001 - see below
                # the watchdog closed the response while the reader was inside http.client
                # (AttributeError: its fp is gone, ValueError: closed file, ...): the trip
                # is what happened, reported below; anything else is not ours to hide
                if not watchdog.tripped.is_set():
                    raise
                ids = set()
    if watchdog.tripped.is_set():
        for image_id in ids | {private_id}:  # only ever removes what carries this deployment's label
            remove_image(client, image_id, deployment=deployment)
        raise ImageRejected(
            f"loading the image wrote {watchdog.grown} bytes to the runner's disk, over the "
            f"image cap of {limits.image_bytes} bytes (plus the archive); the load was stopped: "
            "make the image smaller")
    if ids != {private_id}:
        for image_id in ids:  # only ever removes what carries this deployment's label
            remove_image(client, image_id, deployment=deployment)
        raise ImageRejected(f"Docker loaded {sorted(ids)}, expected exactly {private_id}")
    try:
        client.api.tag(private_id, image_repository(deployment), tag=tag)
        size = int(client.images.get(private_id).attrs.get("Size") or 0)
    except docker.errors.APIError as exc:
        raise EngineError(f"could not tag or inspect image {private_id}: {exc}") from None
    if size > limits.image_bytes:
        remove_image(client, private_id, deployment=deployment)
        raise ImageRejected(f"the loaded image takes {size} bytes on disk, over the image cap "
                            f"of {limits.image_bytes} bytes; make the image smaller")
    return private_id


def _load(client: docker.DockerClient, archive: Path, watchdog: DiskWatchdog) -> set[str]:
    """POST the archive to ``/images/load`` as a stream the watchdog can cut; the loaded ids.

    docker-py's ``images.load`` takes the body whole and gives no handle on the response; this
    is the same request with a body that stops when the watchdog trips, and a response it
    closes, which ends the progress stream at once.
    """
    api = client.api
    with archive.open("rb") as fh:
        response = api._post(api._url("/images/load"), data=watched_body(fh, watchdog),
                             stream=True)
        watchdog.on_trip(response.close)
        ids: set[str] = set()
        for chunk in api._stream_helper(response, decode=True):
            if watchdog.tripped.is_set():
                break
            if "error" in chunk:
                raise docker.errors.ImageLoadError(chunk["error"])
            found = _LOADED_RE.search(chunk.get("stream") or "")
            if found:
                ids.add(found.group(2))
    return {client.images.get(ref).id for ref in ids}


def get_image(client: docker.DockerClient, image_id: str) -> Any:
    """The local image with this exact id (never pulled), or ``ImageRejected`` if it is gone."""
    if not isinstance(image_id, str) or not _IMAGE_ID_RE.fullmatch(image_id):
        raise ValueError(f"image_id must be 'sha256:<64 hex>', got {image_id!r}")
    try:
        image = client.images.get(image_id)
    except docker.errors.ImageNotFound:
        raise ImageRejected(f"image {image_id} is not loaded on this host") from None
    except docker.errors.APIError as exc:
        raise EngineError(f"could not inspect image {image_id}: {exc}") from None
    if image.id != image_id:
        raise ImageRejected(f"image lookup for {image_id} returned {image.id}")
    return image


def remove_image(client: docker.DockerClient, image_id: str, *, deployment: str) -> bool:
    """Remove an image this deployment loaded (all its tags); True if something was removed.

    An image without this deployment's ``lb.deployment`` label is never touched: False.
    """
    deployment = check_deployment(deployment)
    try:
        image = client.images.get(image_id)
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.APIError as exc:
        raise EngineError(f"could not inspect image {image_id}: {exc}") from None
    if (image.labels or {}).get(LABEL_DEPLOYMENT) != deployment:
        return False
    try:
        client.images.remove(image.id, force=True, noprune=False)
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.APIError as exc:
        raise EngineError(f"could not remove image {image_id}: {exc}") from None
    return True


def _exists(client: docker.DockerClient, image_id: str) -> bool:
    try:
        client.images.get(image_id)
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.APIError as exc:
        raise EngineError(f"could not inspect image {image_id}: {exc}") from None
    return True


def _load_failure(exc: Exception) -> Exception:
    """Docker refused the archive: the host's fault (EngineError) or the image's (ImageRejected).

    Inspection has already checked the structure, the layers and the diff ids, so a refusal
    that names no host failure is about the image's content, and it is the team's to fix.
    """
    text = str(getattr(exc, "explanation", None) or exc)
    if any(word in text.lower() for word in _HOST_FAILURES):
        return EngineError(f"Docker could not load the image: {text}")
    return ImageRejected(f"Docker could not load the image: {text}")


def _write_private(src: Path, dst: Path, config: bytes) -> None:
    """Copy the (already inspected) archive uncompressed, without any name Docker would tag and
    with ``manifest.json`` pointing at the private config."""
    with tarfile.open(src, mode="r|*") as tar_in, tarfile.open(dst, mode="w", format=tarfile.PAX_FORMAT) as tar_out:
        for member in tar_in:
            name = member.name.removeprefix("./")
            if name in _DROPPED:
                continue
            if name == "manifest.json" and member.isreg():
                manifest = json.loads(tar_in.extractfile(member).read())  # type: ignore[union-attr]
                _add(tar_out, member, json.dumps(_private_manifest(manifest)).encode())
            elif member.isreg():
                tar_out.addfile(member, tar_in.extractfile(member))
            else:
                tar_out.addfile(member)
        _add(tar_out, tarfile.TarInfo(PRIVATE_CONFIG_NAME), config)


def _add(tar: tarfile.TarFile, member: tarfile.TarInfo, payload: bytes) -> None:
    member.size = len(payload)
    member.mode = member.mode or 0o644
    tar.addfile(member, io.BytesIO(payload))


def _private_manifest(manifest: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**entry, "Config": PRIVATE_CONFIG_NAME, "RepoTags": None} for entry in manifest]
