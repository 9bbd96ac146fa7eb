"""Assemble ``docker save``-style archives by hand, well-formed or hostile, for inspection tests.

``style="legacy"`` mirrors Docker <= 24 (``<id>/layer.tar`` files); ``style="oci"`` mirrors
Docker >= 25 (``blobs/sha256/<hex>`` plus legacy paths written as symlinks to the blobs).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def layer_tar(files: dict[str, bytes], extra: Iterable[tarfile.TarInfo] = ()) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
        for info in extra:
            tar.addfile(info)
    return buf.getvalue()


def image_config(n_layers_diff: list[str], **overrides: Any) -> bytes:
    config = {"architecture": "amd64", "os": "linux", "config": {"Entrypoint": ["/bin/true"]},
              "rootfs": {"type": "layers", "diff_ids": n_layers_diff}}
    config.update(overrides)
    return json.dumps(config).encode()


def write_save_tar(
    dest: Path,
    *,
    style: str = "legacy",
    layers: list[bytes] | None = None,
    config_overrides: dict[str, Any] | None = None,
    manifest_edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
    extra_members: Iterable[tuple[tarfile.TarInfo, bytes | None]] = (),
    gz: bool = False,
) -> Path:
    """Write an archive; ``extra_members`` are appended as-is (the hostile part)."""
    layers = layers if layers is not None else [layer_tar({"bin/true": b"\x7fELF fake"})]
    diffs = ["sha256:" + hashlib.sha256(layer).hexdigest() for layer in layers]
    config = image_config(diffs, **(config_overrides or {}))
    config_hex = hashlib.sha256(config).hexdigest()
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []

    def add_file(name: str, data: bytes) -> None:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        members.append((info, data))

    def add_link(name: str, target: str) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname = tarfile.SYMTYPE, target
        members.append((info, None))

    if style == "oci":
        layer_paths = []
        for layer, diff in zip(layers, diffs):
            hexd = diff.split(":")[1]
            add_file(f"blobs/sha256/{hexd}", layer)
            add_link(f"{hexd}/layer.tar", f"../blobs/sha256/{hexd}")
            layer_paths.append(f"blobs/sha256/{hexd}")
        add_file(f"blobs/sha256/{config_hex}", config)
        config_path = f"blobs/sha256/{config_hex}"
        index = {"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                 "digest": "sha256:" + "ab" * 32, "size": 1,
                 "annotations": {"io.containerd.image.name": "docker.io/library/t:latest"}}]}
        add_file("index.json", json.dumps(index).encode())
        add_file("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    else:
        layer_paths = []
        for layer, diff in zip(layers, diffs):
            hexd = diff.split(":")[1]
            add_file(f"{hexd}/layer.tar", layer)
            layer_paths.append(f"{hexd}/layer.tar")
        config_path = f"{config_hex}.json"
        add_file(config_path, config)
    manifest = [{"Config": config_path, "RepoTags": ["t:latest"], "Layers": layer_paths}]
    if manifest_edit is not None:
        manifest = manifest_edit(manifest)
    add_file("manifest.json", json.dumps(manifest).encode())
    members.extend(extra_members)
    opener = gzip.open if gz else open
    with opener(dest, "wb") as raw, tarfile.open(fileobj=raw, mode="w") as tar:  # type: ignore[operator]
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return dest


def bomb_layer(total_bytes: int, *, compression: str = "gzip", trailing: bool = False) -> tuple[bytes, str]:
    """A layer whose tar holds ``total_bytes`` of zeros, compressed to a few kilobytes.

    Built from one compressed MiB of zeros repeated (gzip members and zstd frames concatenate),
    so a 1.5 GiB layer costs milliseconds to make. ``trailing``: the zeros follow the tar's end
    marker instead of filling a file (Docker still reads them). Returns (layer, diff id).
    """
    import zstandard

    mib = 1 << 20
    if trailing:
        head = layer_tar({"bin/true": b"x"})
    else:
        info = tarfile.TarInfo("zeros")
        info.size = total_bytes
        head = info.tobuf(format=tarfile.GNU_FORMAT)
    n = total_bytes // mib
    pad = b"" if trailing else bytes(-total_bytes % 512) + bytes(1024)
    compress = {"gzip": gzip.compress, "zstd": zstandard.ZstdCompressor().compress}[compression]
    chunk = compress(bytes(mib))
    layer = compress(head) + chunk * n + compress(bytes(total_bytes - n * mib) + pad)
    digest = hashlib.sha256(head)
    zeros = bytes(mib)
    for _ in range(n):
        digest.update(zeros)
    digest.update(bytes(total_bytes - n * mib) + pad)
    return layer, "sha256:" + digest.hexdigest()
