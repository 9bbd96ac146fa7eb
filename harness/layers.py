"""Read one image layer the way Docker will: decompress it, count it, hash it, check the tar.

A ``docker save`` member is only a few megabytes on disk, but Docker decompresses every layer it
loads and writes out the files inside, so the *decompressed* size is what fills a host's disk
(a 3.7 MB gzip of zeros expands to 1.5 GiB). Each candidate layer is therefore read as a stream:

1. the compression is detected from its first bytes, as Docker does (gzip, zstd, bzip2, xz, or
   none; zstd through the `zstandard` library);
2. every decompressed byte is counted against one `Budget` shared by all layers of the image
   (the image cap, ``Limits.image_bytes``), and reading stops the moment the budget is spent:
   a bomb costs at most the cap in CPU and nothing on disk;
3. the bytes are hashed while they pass (sha256 of the uncompressed stream is what Docker calls
   the layer's *diff id*: inspection compares it with the config's ``rootfs.diff_ids``, so an
   image whose config lies about its layers is refused before Docker sees it);
4. the tar inside is walked (no device nodes, no ``..``) and whatever follows the tar's end
   marker is read too (Docker reads the whole stream to compute the diff id, so trailing bytes
   count as well).

Nothing is written anywhere; memory stays bounded by the read size.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import tarfile
import zlib
from dataclasses import dataclass
from typing import Any

import zstandard

from .errors import ImageRejected

_READ = 1024 * 1024
#: leading bytes of each compressed format Docker accepts for a layer
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
)
_DECODE_ERRORS = (tarfile.TarError, EOFError, OSError, ValueError, zlib.error, lzma.LZMAError,
                  zstandard.ZstdError)


class Budget:
    """Decompressed bytes the image may still take; `spend` raises ImageRejected past the cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.used = 0

    def spend(self, n: int, *, layer: str, layer_bytes: int, compressed: int) -> None:
        self.used += n
        if self.used > self.cap:
            raise ImageRejected(
                f"the image's layers decompress to more than the image cap of {self.cap} bytes "
                f"(stopped in layer {layer!r} after {layer_bytes} decompressed bytes read from "
                f"{compressed} compressed bytes); make the image smaller")


@dataclass(frozen=True)
class Layer:
    """What reading a candidate layer found; ``diff_id`` is ``"sha256:<hex>"`` of its tar."""

    is_tar: bool
    diff_id: str | None
    compression: str
    size: int


def read_layer(fileobj: Any, name: str, budget: Budget) -> Layer:
    """Stream ``fileobj`` (an archive member) as a layer; never raises for a non-layer file.

    Raises ImageRejected for a layer over the budget, or one that holds a device node or a
    ``..`` path. Returns ``is_tar=False`` for anything that is not a (compressed) tar: configs,
    manifests, or garbage, which inspection refuses if the manifest lists it as a layer.
    """
    raw = _Peek(fileobj)
    compression = _detect(raw.peek(6))
    counted = _Counted(raw, compression, name, budget)
    try:
        with tarfile.open(fileobj=counted, mode="r|") as layer:
            for entry in layer:
                if entry.ischr() or entry.isblk():
                    raise ImageRejected(f"layer {name!r} contains the device node {entry.name!r}")
                if ".." in entry.name.split("/"):
                    raise ImageRejected(f"layer {name!r} contains the path {entry.name!r} with '..'")
        counted.drain()
    except ImageRejected:
        raise
    except _DECODE_ERRORS:
        return Layer(False, None, compression, counted.size)
    return Layer(True, "sha256:" + counted.digest.hexdigest(), compression, counted.size)


def _detect(head: bytes) -> str:
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return "none"


class _Peek:
    """A forward-only reader that can look at its first bytes without consuming them."""

    def __init__(self, fileobj: Any) -> None:
        self._fileobj = fileobj
        self._head = b""
        self.consumed = 0

    def peek(self, n: int) -> bytes:
        while len(self._head) < n:
            chunk = self._fileobj.read(n - len(self._head))
            if not chunk:
                break
            self._head += chunk
        return self._head[:n]

    def read(self, size: int = -1) -> bytes:
        if self._head:
            if size is None or size < 0:
                data, self._head = self._head + self._fileobj.read(), b""
            else:
                data, self._head = self._head[:size], self._head[size:]
        else:
            data = self._fileobj.read(size)
        self.consumed += len(data)
        return data


class _Counted:
    """The decompressed stream of one layer: counted against the budget and hashed."""

    def __init__(self, raw: _Peek, compression: str, name: str, budget: Budget) -> None:
        self._raw, self._name, self._budget = raw, name, budget
        self.size = 0
        self.digest = hashlib.sha256()
        if compression == "gzip":
            self._stream: Any = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[arg-type]
        elif compression == "zstd":
            self._stream = zstandard.ZstdDecompressor().stream_reader(
                raw, read_across_frames=True, closefd=False)
        elif compression == "bzip2":
            self._stream = bz2.BZ2File(raw)  # type: ignore[arg-type]
        elif compression == "xz":
            self._stream = lzma.LZMAFile(raw)  # type: ignore[arg-type]  # noqa: SIM115
        else:
            self._stream = raw

    def read(self, size: int = -1) -> bytes:
        size = _READ if size is None or size < 0 else min(size, _READ)
        data = self._stream.read(size)
        if data:
            self.size += len(data)
            self._budget.spend(len(data), layer=self._name, layer_bytes=self.size,
                               compressed=self._raw.consumed)
            self.digest.update(data)
        return data

    def drain(self) -> None:
        """Read what follows the tar's end marker (Docker hashes the whole stream)."""
        while self.read(_READ):
            pass
