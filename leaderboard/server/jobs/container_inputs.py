"""The ``/input`` folder of a container run: a split's public ``items.jsonl`` and its media only.

Built from the server's copy of the pack (``DATA_DIR/packs/<key>/<version>/``, which holds no
labels: `leaderboard.server.services.benchmarks` strips them on import). Only the media files the split's
items name are linked in, so a dev run never sees test media. Files are hard-linked when the run
folder is on the same file system (instant, no extra space; the mount is read-only, so the pack
cannot be changed through them) and copied otherwise. The result is checked to hold no labels.
"""
from __future__ import annotations

import json
import os
import posixpath
import shutil
from pathlib import Path

ITEMS_NAME = "items.jsonl"
#: file names that carry answers; none may ever reach a container's input
_LABEL_NAMES = ("labels.jsonl", "labels.jsonl.gz", "labels.jsonl.enc", "labels.parquet")


def build_input_dir(pack_root: str | os.PathLike, split: str, dest: str | os.PathLike) -> Path:
    """Fill the empty directory ``dest`` with ``split``'s items and their media; return it.

    Raises ValueError when the pack has no items for the split or an item names a media path
    outside the pack's ``media/`` folder (the pack was validated on import, so this means it
    was changed since), and AssertionError if anything label-like ended up in ``dest``.
    """
    root, out = Path(pack_root).resolve(), Path(dest)
    items = root / "splits" / split / ITEMS_NAME
    if not items.is_file():
        raise ValueError(f"the pack at {root} has no {ITEMS_NAME} for split {split!r}")
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o755)  # the container runs as another, unprivileged uid
    _link_or_copy(items, out / ITEMS_NAME)
    media_root = (root / "media").resolve()
    for rel in sorted(_media_paths(items)):
        src = (root / rel).resolve()
        if not src.is_relative_to(media_root) or not src.is_file():
            raise ValueError(f"item media {rel!r} is not a file inside the pack's media/ folder")
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        _link_or_copy(src, target)
    assert_no_labels(out)
    return out


def assert_no_labels(folder: str | os.PathLike) -> None:
    """Fail loudly if ``folder`` holds any labels file (defence in depth: never expected)."""
    for dirpath, _dirs, files in os.walk(folder):
        leaked = [f for f in files if f in _LABEL_NAMES or f.startswith("labels.")]
        assert not leaked, f"labels must never reach a container: {Path(dirpath) / leaked[0]}"


def _media_paths(items: Path) -> set[str]:
    paths: set[str] = set()
    with items.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            media = json.loads(line).get("media") or []
            for rel in [media] if isinstance(media, str) else media:
                norm = posixpath.normpath(str(rel))
                if norm.startswith(("/", "../")) or norm == ".." or not norm.startswith("media/"):
                    raise ValueError(f"{items.name} line {n}: media path {rel!r} is not under media/")
                paths.add(norm)
    return paths


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links not allowed: copy instead
        shutil.copyfile(src, dst)
        dst.chmod(0o644)
