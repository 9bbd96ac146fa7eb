"""Load an inspected tarball into Docker, pin it by image id, tag it with the submission.

Docker applies the tarball's ``RepoTags`` while loading, so a hostile upload tagged e.g.
``leaderboard-worker:latest`` would silently replace an image this host runs. ``load_image``
therefore streams a copy of the archive to Docker with the tags removed (``manifest.json``
RepoTags emptied, ``repositories`` dropped, ``index.json`` name annotations stripped), checks that
Docker reports exactly the image id inspection computed, and tags that id
``lb-submission:<submission_id>`` itself. Containers are always created from the id, so nothing is
ever pulled.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import docker
import docker.errors

from .config import Limits
from .errors import EngineError, ImageRejected
from .tarball import TarballInfo, inspect_tarball

IMAGE_REPOSITORY = "lb-submission"
_SUBMISSION_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_NAME_ANNOTATIONS = ("org.opencontainers.image.ref.name", "io.containerd.image.name")


def check_submission_id(submission_id: Any) -> str:
    """Return ``submission_id`` as a string usable as a Docker tag and label, or raise ValueError."""
    text = str(submission_id)
    if not _SUBMISSION_ID_RE.match(text):
        raise ValueError(f"submission id must match {_SUBMISSION_ID_RE.pattern}, got {submission_id!r}")
    return text


def load_image(
    client: docker.DockerClient,
    path: str | os.PathLike[str],
    submission_id: Any,
    *,
    limits: Limits | None = None,
    info: TarballInfo | None = None,
) -> str:
    """Inspect (unless ``info`` is given), load and tag the image; return its id ``sha256:...``.

    Raises ``ImageRejected`` for anything wrong with the upload, ``EngineError`` when Docker fails.
    """
    tag = check_submission_id(submission_id)
    if info is None:
        info = inspect_tarball(path, limits if limits is not None else Limits())
    with tempfile.TemporaryDirectory(prefix="lb-load-", dir=Path(path).parent) as tmp:
        clean = Path(tmp) / "image.tar"
        _write_untagged(Path(path), clean)
        try:
            with clean.open("rb") as fh:
                loaded = client.images.load(fh)
        except docker.errors.APIError as exc:
            raise ImageRejected(f"Docker could not load the image: {exc.explanation or exc}") from None
    ids = {image.id for image in loaded}
    if ids != {info.image_id}:
        for image_id in ids - {info.image_id}:
            remove_image(client, image_id)
        raise ImageRejected(f"Docker loaded {sorted(ids)}, expected exactly {info.image_id}")
    try:
        client.api.tag(info.image_id, IMAGE_REPOSITORY, tag=tag)
    except docker.errors.APIError as exc:
        raise EngineError(f"could not tag image {info.image_id}: {exc}") from None
    return info.image_id


def get_image(client: docker.DockerClient, image_id: str) -> Any:
    """The local image with this exact id (never pulled), or ``ImageRejected`` if it is gone."""
    if not isinstance(image_id, str) or not re.fullmatch(r"sha256:[0-9a-f]{64}", image_id):
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


def remove_image(client: docker.DockerClient, image_id: str) -> bool:
    """Remove the image and all its tags; True if something was removed."""
    try:
        client.images.remove(image_id, force=True, noprune=False)
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.APIError as exc:
        raise EngineError(f"could not remove image {image_id}: {exc}") from None
    return True


def _write_untagged(src: Path, dst: Path) -> None:
    """Copy the (already inspected) archive uncompressed, with every name Docker would tag removed."""
    with tarfile.open(src, mode="r|*") as tar_in, tarfile.open(dst, mode="w", format=tarfile.PAX_FORMAT) as tar_out:
        for member in tar_in:
            name = member.name[2:] if member.name.startswith("./") else member.name
            if name == "repositories":
                continue
            if name in ("manifest.json", "index.json") and member.isreg():
                data = json.loads(tar_in.extractfile(member).read())  # type: ignore[union-attr]
                data = _untag_manifest(data) if name == "manifest.json" else _untag_index(data)
                payload = json.dumps(data).encode()
                member.size = len(payload)
                tar_out.addfile(member, io.BytesIO(payload))
            elif member.isreg():
                tar_out.addfile(member, tar_in.extractfile(member))
            else:
                tar_out.addfile(member)


def _untag_manifest(manifest: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**entry, "RepoTags": None} for entry in manifest]


def _untag_index(index: dict[str, Any]) -> dict[str, Any]:
    manifests = []
    for entry in index.get("manifests", []):
        annotations = {k: v for k, v in (entry.get("annotations") or {}).items() if k not in _NAME_ANNOTATIONS}
        manifests.append({**entry, "annotations": annotations} if annotations else
                         {k: v for k, v in entry.items() if k != "annotations"})
    return {**index, "manifests": manifests}
