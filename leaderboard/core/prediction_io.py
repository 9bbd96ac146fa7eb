"""Reading a predictions file as bytes: gzip detected by its magic bytes (not its name), lines
read with a per-line cap and a cap on decompressed bytes, so a bomb or a single huge line costs
flat memory and stops early (`leaderboard.core.predictions` reads through this)."""
from __future__ import annotations

import gzip
import io
import os
from pathlib import Path
from typing import IO

MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_DECOMPRESSED_BYTES = 8 * 1024**3
UTF8_BOM = b"\xef\xbb\xbf"


class Lines:
    """Binary line reader with a per-line cap and a cap on decompressed bytes."""

    def __init__(self, fh: IO[bytes]):
        self.fh, self.total = fh, 0

    def __iter__(self):
        n = 0
        while True:
            n += 1
            line = self.fh.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            self.total += len(line)
            if self.total > MAX_DECOMPRESSED_BYTES:
                raise TooBig()
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest without keeping it
                    line = self.fh.readline(MAX_LINE_BYTES)
                    self.total += len(line)
                yield n, None
                continue
            yield n, line


class TooBig(Exception):
    pass


def read_capped(lines, cap: int) -> bytes:
    parts, total = [], 0
    for _, r in lines:
        total += len(r or b"")
        if total > cap:
            raise TooBig()
        parts.append(r or b"")
    return b"".join(parts)


def open_stream(source) -> tuple[IO[bytes], list]:
    """The decoded byte stream and the handles to close (gzip is detected by magic bytes)."""
    raw = open(source, "rb") if isinstance(source, (str, os.PathLike)) else source
    owned = [raw] if isinstance(source, (str, os.PathLike)) else []
    fh = raw if hasattr(raw, "peek") else io.BufferedReader(raw)  # type: ignore[arg-type]
    if fh.peek(2)[:2] == b"\x1f\x8b":
        fh = gzip.GzipFile(fileobj=fh, mode="rb")
        owned.insert(0, fh)
    return fh, owned


def is_zip(source) -> bool:
    if not isinstance(source, (str, os.PathLike)):
        return False
    try:
        with open(source, "rb") as fh:
            return fh.read(4) == b"PK\x03\x04"
    except OSError:
        return False



def open_predictions(path: str | Path) -> IO[bytes]:
    """Open a predictions file (gzip or plain) for reading as bytes; the caller closes it."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")
