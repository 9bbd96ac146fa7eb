"""Inspect an uploaded ``docker save`` tarball before Docker ever sees it.

One streaming pass over the (possibly gzipped) archive checks, in order of discovery:
size caps (the file on disk, then the decompressed stream), member names (no absolute paths, no
``..``, no duplicates, nothing below a link), member types (regular files, directories and links
only: no devices, no FIFOs), links (symlinks and hard links must resolve to a file inside the
archive: Docker >= 25 writes the legacy ``<id>/layer.tar`` paths as symlinks to ``blobs/``), the
layers themselves (`harness.layers`: each one decompressed as a stream, gzip, zstd, bzip2, xz or
plain, counted against the image cap and stopped there, hashed, its tar walked: no device nodes,
no ``..``), then the manifest: exactly one image, a config that is JSON for ``linux/amd64`` with
one diff id per layer, each equal to the sha256 of that layer's decompressed tar (a config that
lies about its layers is the team's error here, not a Docker failure later), every layer entry
counted at its decompressed size *each time the manifest lists it* (Docker writes a repeated
layer once per occurrence: issue 24's 2.4 MB tarball listing one 256 MiB layer twelve times
wrote 3.2 GB), and no ``VOLUME``
(Docker would back it with an unlimited host volume). The image id Docker would assign (sha256
of the config) and the config itself are returned; ``engine.load_image`` loads the image under
a private id of its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import Limits
from .errors import ImageRejected
from .layers import Budget, Layer, read_layer

# Small files (manifests, configs) are kept in memory during the single pass; anything larger is
# a layer. The budget bounds memory whatever the archive holds.
_SMALL_FILE_BYTES = 1024 * 1024
_SMALL_FILES_BUDGET = 32 * 1024 * 1024
_MAX_MEMBERS = 100_000
_MAX_LINK_HOPS = 16


@dataclass(frozen=True)
class TarballInfo:
    """What inspection learned; ``image_id`` is ``"sha256:<hex>"`` of the image config.

    ``uncompressed_bytes`` is the archive's own size unpacked; ``layer_bytes`` what its layers
    decompress to, each manifest occurrence counted (what Docker writes out); ``config_name`` the member holding ``config``.
    """

    image_id: str
    repo_tags: tuple[str, ...]
    layers: tuple[str, ...]
    compressed_bytes: int
    uncompressed_bytes: int
    architecture: str
    os: str
    layer_bytes: int = 0
    config_name: str = ""
    config: bytes = b""


def inspect_tarball(path: str | os.PathLike[str], limits: Limits) -> TarballInfo:
    """Check the archive at ``path``; raise ``ImageRejected`` naming the first broken rule."""
    path = Path(path)
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a harness.config.Limits, got {type(limits).__name__}")
    try:
        compressed = path.stat().st_size
    except OSError as exc:
        raise ImageRejected(f"cannot read the uploaded tarball: {exc.strerror}") from None
    if compressed > limits.tarball_bytes:
        raise ImageRejected(
            f"tarball is {compressed} bytes, over the upload cap of {limits.tarball_bytes} bytes"
        )
    members, small, found, total = _scan(path, limits)
    manifest = _load_json(small, "manifest.json", required=True)
    entry = _single_image(manifest, small)
    config_name = _resolve(entry["Config"], members, "Config")
    config_bytes = small.get(config_name)
    if config_bytes is None:
        raise ImageRejected(f"image config {entry['Config']!r} is missing or larger than 1 MiB")
    config = _parse_json(config_bytes, entry["Config"])
    layers = tuple(_resolve(layer, members, "Layers") for layer in entry["Layers"])
    for given, resolved in zip(entry["Layers"], layers):
        if not found[resolved].is_tar:
            raise ImageRejected(f"layer {given!r} is not a tar archive")
    if len(layers) > limits.max_layers:
        raise ImageRejected(f"image has {len(layers)} layers, over the cap of {limits.max_layers}")
    layer_bytes = _occurrence_bytes(entry["Layers"], layers, found, limits)
    arch, os_name, diff_ids = _check_config(config, n_layers=len(layers))
    for n, (given, resolved, claimed) in enumerate(zip(entry["Layers"], layers, diff_ids), 1):
        actual = found[resolved].diff_id
        if claimed != actual:
            raise ImageRejected(
                f"the image config does not match its layers: layer {n} ({given!r}) holds "
                f"{actual}, the config lists {claimed!r}; save the image again with docker save")
    return TarballInfo(
        image_id="sha256:" + hashlib.sha256(config_bytes).hexdigest(),
        repo_tags=tuple(entry.get("RepoTags") or ()),
        layers=layers,
        compressed_bytes=compressed,
        uncompressed_bytes=total,
        architecture=arch,
        os=os_name,
        layer_bytes=layer_bytes,
        config_name=config_name,
        config=config_bytes,
    )


def _scan(path: Path, limits: Limits) -> tuple[dict[str, tarfile.TarInfo], dict[str, bytes],
                                              dict[str, Layer], int]:
    """One streaming pass: per-member checks, small files kept, every file read as a layer."""
    members: dict[str, tarfile.TarInfo] = {}
    small: dict[str, bytes] = {}
    found: dict[str, Layer] = {}
    budget = Budget(limits.image_bytes)
    kept = total = 0
    try:
        with tarfile.open(path, mode="r|*") as tar:
            for member in tar:
                name = _check_name(member.name)
                if name in members:
                    raise ImageRejected(f"archive member {member.name!r} appears twice")
                if len(members) >= _MAX_MEMBERS:
                    raise ImageRejected(f"archive has more than {_MAX_MEMBERS} members")
                total += member.size + 512
                if total > limits.image_bytes:
                    raise ImageRejected(
                        f"archive expands to more than the image cap of {limits.image_bytes} bytes"
                    )
                _check_type(member)
                members[name] = member
                if not member.isreg():
                    continue
                fileobj = tar.extractfile(member)
                assert fileobj is not None  # isreg() members always have data
                if member.size <= _SMALL_FILE_BYTES and kept + member.size <= _SMALL_FILES_BUDGET:
                    data = fileobj.read()
                    small[name] = data
                    kept += len(data)
                    found[name] = read_layer(_BytesReader(data), name, budget)
                else:
                    found[name] = read_layer(fileobj, name, budget)
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise ImageRejected(f"not a readable tar archive: {exc}") from None
    _check_links(members)
    return members, small, found, total


def _occurrence_bytes(given: list[str], layers: tuple[str, ...], found: dict[str, Layer],
                      limits: Limits) -> int:
    """What Docker writes for the manifest's layers: every occurrence at its decompressed size.

    Docker registers one layer per *position* in the manifest (its chain id), extracting the tar
    again for each, so a file listed twelve times is written twelve times. Repeated entries are
    not refused outright because real images have them: the classic builder gives identical
    steps identical layers (``COPY a /a`` twice: the same diff id twice), which Docker <= 24
    saves as distinct ``<id>/layer.tar`` files and Docker >= 25 as one blob listed repeatedly.
    They are counted instead, each time, against the image cap.
    """
    total = 0
    for n, (name, resolved) in enumerate(zip(given, layers), 1):
        total += found[resolved].size
        if total > limits.image_bytes:
            times = layers.count(resolved)
            repeated = (f" ({name!r} is listed {times} times and Docker writes it out each time)"
                        if times > 1 else "")
            raise ImageRejected(
                f"the image's layers decompress to more than the image cap of {limits.image_bytes} "
                f"bytes: the first {n} of its {len(layers)} manifest layers already hold {total} "
                f"bytes{repeated}; make the image smaller")
    return total


def _check_name(raw: str) -> str:
    if "\x00" in raw or raw.startswith("/") or raw.startswith("\\"):
        raise ImageRejected(f"archive member {raw!r} has an absolute path")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ImageRejected(f"archive member {raw!r} contains '..'")
    if not parts:
        raise ImageRejected(f"archive member {raw!r} has an empty name")
    return "/".join(parts)


def _check_type(member: tarfile.TarInfo) -> None:
    if member.ischr() or member.isblk():
        raise ImageRejected(f"archive member {member.name!r} is a device node")
    if member.isfifo():
        raise ImageRejected(f"archive member {member.name!r} is a FIFO")
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        raise ImageRejected(f"archive member {member.name!r} has unsupported type {member.type!r}")


def _link_target(name: str, member: tarfile.TarInfo) -> str:
    """Archive-relative path a link points to, or ``ImageRejected`` if it leaves the archive."""
    target = member.linkname
    if target.startswith("/"):
        raise ImageRejected(f"link {name!r} points to an absolute path {target!r}")
    base = posixpath.dirname(name) if member.issym() else ""
    joined = posixpath.normpath(posixpath.join(base, target))
    if joined == ".." or joined.startswith("../") or joined in ("", "."):
        raise ImageRejected(f"link {name!r} -> {target!r} points outside the archive")
    return joined


def _check_links(members: dict[str, tarfile.TarInfo]) -> None:
    for name, member in members.items():
        parent = posixpath.dirname(name)
        while parent:
            if parent in members and (members[parent].issym() or members[parent].islnk()):
                raise ImageRejected(f"archive member {name!r} lies below the link {parent!r}")
            parent = posixpath.dirname(parent)
    for name, member in members.items():
        if member.issym() or member.islnk():
            _resolve(name, members, "link")


def _resolve(name: Any, members: dict[str, tarfile.TarInfo], what: str) -> str:
    """Follow links from ``name`` to a regular file inside the archive; return its name."""
    if not isinstance(name, str):
        raise ImageRejected(f"manifest field {what} must hold strings, got {name!r}")
    current = _check_name(name)
    for _ in range(_MAX_LINK_HOPS):
        member = members.get(current)
        if member is None:
            raise ImageRejected(f"{what} {name!r} does not resolve to a file in the archive")
        if member.isreg():
            return current
        if not (member.issym() or member.islnk()):
            raise ImageRejected(f"{what} {name!r} resolves to a directory, not a file")
        current = _link_target(current, member)
    raise ImageRejected(f"{what} {name!r}: too many links in a chain")


class _BytesReader:
    """Minimal non-seekable reader so small files take the same streaming path as big ones."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._pos = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._data) if size is None or size < 0 else min(len(self._data), self._pos + size)
        chunk = bytes(self._data[self._pos:end])
        self._pos = end
        return chunk


def _load_json(small: dict[str, bytes], name: str, *, required: bool) -> Any:
    if name not in small:
        if required:
            raise ImageRejected(f"{name} is missing: upload the output of `docker save IMAGE`")
        return None
    return _parse_json(small[name], name)


def _parse_json(data: bytes, name: str) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImageRejected(f"{name} is not valid JSON: {exc}") from None


def _single_image(manifest: Any, small: dict[str, bytes]) -> dict[str, Any]:
    if not isinstance(manifest, list) or not manifest:
        raise ImageRejected("manifest.json must be a non-empty list of images")
    if len(manifest) != 1:
        raise ImageRejected(f"the tarball holds {len(manifest)} images; save exactly one")
    entry = manifest[0]
    if not isinstance(entry, dict) or not isinstance(entry.get("Config"), str):
        raise ImageRejected("manifest.json entry has no Config path")
    if not isinstance(entry.get("Layers"), list) or not entry["Layers"]:
        raise ImageRejected("manifest.json entry has no Layers list")
    tags = entry.get("RepoTags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        raise ImageRejected(f"manifest.json RepoTags must be a list of strings, got {tags!r}")
    index = _load_json(small, "index.json", required=False)
    if index is not None:
        listed = index.get("manifests") if isinstance(index, dict) else None
        if not isinstance(listed, list):
            raise ImageRejected("index.json has no manifests list")
        digests = {m.get("digest") for m in listed if isinstance(m, dict)}
        if len(digests) != 1:
            raise ImageRejected(f"index.json lists {len(digests)} images; save exactly one")
    return entry


def _check_config(config: Any, *, n_layers: int) -> tuple[str, str, list[Any]]:
    if not isinstance(config, dict):
        raise ImageRejected("image config must be a JSON object")
    if not isinstance(config.get("config", {}), (dict, type(None))):
        raise ImageRejected("image config field 'config' must be a JSON object")
    arch, os_name = config.get("architecture"), config.get("os")
    if arch != "amd64" or os_name != "linux":
        raise ImageRejected(f"image is for {os_name}/{arch}; build it for linux/amd64")
    diff_ids = (config.get("rootfs") or {}).get("diff_ids") if isinstance(config.get("rootfs"), dict) else None
    if not isinstance(diff_ids, list) or len(diff_ids) != n_layers:
        raise ImageRejected(f"image config lists {diff_ids!r} diff ids for {n_layers} layers")
    volumes = (config.get("config") or {}).get("Volumes") if isinstance(config.get("config"), dict) else None
    if volumes:
        raise ImageRejected(
            f"image declares VOLUME {sorted(volumes)}; remove VOLUME lines (write to /tmp or /output)"
        )
    return arch, os_name, diff_ids
