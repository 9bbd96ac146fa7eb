"""Read what a container left in ``/output`` without trusting it.

``/output`` is a host directory bind-mounted read-write; the container may have put anything
there: symlinks to host files (``/etc/passwd`` means the *host's* file once the harness reads
it), FIFOs (opening one blocks), sparse files, millions of entries. Sizes are measured without
following links (``lstat``), counting a file's apparent size or its allocated blocks, whichever
is larger; the predictions file is opened with ``O_NOFOLLOW | O_NONBLOCK`` relative to the
directory's own descriptor and must be a regular file.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from .errors import NoPredictions, OutputTooLarge

PREDICTIONS_NAME = "predictions.jsonl"
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Usage:
    bytes: int
    entries: int


def dir_usage(root: Path, *, max_entries: int) -> Usage:
    """Bytes and entries under ``root`` (links not followed); stops counting past ``max_entries``."""
    total = entries = 0
    stack = [str(root)]
    while stack and entries <= max_entries:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue  # vanished or unreadable mid-run: the next poll sees it again
        with it:
            for entry in it:
                entries += 1
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += max(st.st_size, st.st_blocks * 512)
                if stat.S_ISDIR(st.st_mode):
                    stack.append(entry.path)
                if entries > max_entries:
                    break
    return Usage(bytes=total, entries=entries)


def check_output_caps(root: Path, *, max_bytes: int, max_entries: int) -> None:
    """Raise ``OutputTooLarge`` when ``root`` is over either cap."""
    usage = dir_usage(root, max_entries=max_entries)
    if usage.bytes > max_bytes:
        raise OutputTooLarge(f"/output grew past its cap of {max_bytes} bytes")
    if usage.entries > max_entries:
        raise OutputTooLarge(f"/output holds more than {max_entries} files; write only predictions.jsonl")


def copy_predictions(staging: Path, dest: Path, *, max_bytes: int) -> int:
    """Copy ``staging/predictions.jsonl`` to ``dest`` safely; return its size in bytes."""
    dir_fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        try:
            src_fd = os.open(PREDICTIONS_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
        except FileNotFoundError:
            raise NoPredictions(f"the container did not write /output/{PREDICTIONS_NAME}") from None
        except OSError:
            # ELOOP: it is a symlink. Never follow it: it would be resolved on the host.
            raise NoPredictions(f"/output/{PREDICTIONS_NAME} is not a regular file (a link?)") from None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(src_fd)
        if not stat.S_ISREG(st.st_mode):
            raise NoPredictions(f"/output/{PREDICTIONS_NAME} is not a regular file")
        if st.st_size > max_bytes:
            raise OutputTooLarge(f"/output/{PREDICTIONS_NAME} is {st.st_size} bytes, over the cap of {max_bytes}")
        return _copy_fd(src_fd, dest, max_bytes=max_bytes)
    finally:
        os.close(src_fd)


def _copy_fd(src_fd: int, dest: Path, *, max_bytes: int) -> int:
    if dest.is_symlink():
        dest.unlink()
    tmp = dest.with_name(dest.name + ".part")
    tmp.unlink(missing_ok=True)
    copied = 0
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644), "wb") as out:
        while chunk := os.read(src_fd, _CHUNK):
            copied += len(chunk)
            if copied > max_bytes:
                out.close()
                tmp.unlink()
                raise OutputTooLarge(f"/output/{PREDICTIONS_NAME} is over the cap of {max_bytes} bytes")
            out.write(chunk)
    os.replace(tmp, dest)
    return copied


def remove_tree(path: Path) -> None:
    """Delete the staging directory; ``rmtree`` never follows symlinks out of it."""
    shutil.rmtree(path, ignore_errors=True)
