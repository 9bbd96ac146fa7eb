"""Files behind download links: dev labels as JSONL, per-split zip archives, media lookup.

A split's archive is itself a pack (design "Benchmark packs", issue 21): it unpacks to
``<key>-<split>/`` holding ``benchmark.yaml`` (the pack's, listing only this split:
`leaderboard.core.pack_copy`, the bytes receipts digest),
``description.md``, ``agreement.md``, ``splits/<split>/items.jsonl``, for a dev split with labels
also ``splits/<split>/labels.jsonl``, and the ``media/`` its items name; so the toolkit's
``leaderboard score --pack`` / ``baseline --pack`` work on it unchanged. A held-out split's
archive never holds labels, whatever is asked.

Everything is built once and cached under ``DATA_DIR/downloads/<key>/<version>/``; a file's name
carries what it depends on (the pack version in the folder, the label ciphertext's hash in the
name), so a re-imported pack or new labels get new files instead of stale ones. Builds write to a
temporary name and ``os.replace`` it, so concurrent requests never see a half-written file.
"""
from __future__ import annotations

import hashlib
import json
import os
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.errors import PackError
from leaderboard.core.pack_copy import split_meta
from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.core.table import Table
from leaderboard.server import labels_crypto
from leaderboard.server.errors import NotFound
from leaderboard.server.models import Benchmark, LabelSet

#: media are usually compressed already (png, mp4, wav): stored, not deflated again
_STORED_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".gif", ".mp4", ".avi", ".webm", ".mov",
                    ".mp3", ".wav", ".flac", ".ogg", ".glb", ".zip", ".gz"}


def is_held_out(split: str) -> bool:
    return split in HELD_OUT_SPLITS


def check_split(bench: Benchmark, split: str) -> None:
    splits = (bench.meta_json or {}).get("splits", [])
    if split not in splits:
        raise NotFound(f"unknown split {split!r}; {bench.key} has {list(splits)}")


def pack_root(bench: Benchmark) -> Path:
    return Path(bench.pack_path)


def items_file(bench: Benchmark, split: str) -> Path:
    check_split(bench, split)
    path = pack_root(bench) / "splits" / split / "items.jsonl"
    if not path.is_file():
        raise NotFound(f"{bench.key} has no items file for split {split!r}")
    return path


def media_file(bench: Benchmark, rel: str) -> Path:
    """The media file ``rel`` (as items.jsonl names it, e.g. ``media/image/x.png``).

    Only files inside the pack's ``media/`` folder: anything else (``..``, absolute paths, the
    pack's other files) is NotFound, never served.
    """
    root = (pack_root(bench) / "media").resolve()
    try:
        path = (pack_root(bench) / rel).resolve()
        path.relative_to(root)
    except (ValueError, OSError):
        raise NotFound(f"no media file {rel!r} in {bench.key}") from None
    if not path.is_file():
        raise NotFound(f"no media file {rel!r} in {bench.key}")
    return path


def split_media(bench: Benchmark, split: str) -> list[str]:
    """Every media path the split's items name, in first-seen order (no duplicates)."""
    seen: dict[str, None] = {}
    with open(items_file(bench, split), encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            media = json.loads(line).get("media")
            for rel in ([media] if isinstance(media, str) else media or []):
                if isinstance(rel, str):
                    seen.setdefault(rel, None)
    return list(seen)


def _cell(col, table: Table, name: str, i: int):
    if col.type == "tags":
        return [v for v, on in zip(col.vocab, col.data[i]) if on]
    value = table.value(name, i)
    if isinstance(value, np.generic):
        value = value.item()
    if col.type == "bool":
        value = bool(value)
    return value


def label_rows(table: Table) -> Iterator[dict]:
    """The rows of a compiled label table, back as ``labels.jsonl`` dicts (absent cells left
    out)."""
    names = list(table.columns)
    for i, rid in enumerate(table.ids.tolist()):
        row = {"id": str(rid)}
        for name in names:
            col = table.columns[name]
            if col.present[i]:
                row[name] = _cell(col, table, name, i)
        yield row


def _labelset(session: Session, bench: Benchmark, split: str) -> LabelSet:
    ls = session.scalar(select(LabelSet).where(LabelSet.benchmark_id == bench.id,
                                               LabelSet.split == split))
    if ls is None:
        raise NotFound(f"{bench.key} has no labels for split {split!r}")
    return ls


def _cache_dir(bench: Benchmark, data_dir: str | os.PathLike) -> Path:
    return Path(data_dir) / "downloads" / bench.key / bench.version


def _build_once(path: Path, write: Callable[[Path], None]) -> Path:
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def dev_labels_file(session: Session, bench: Benchmark, split: str, *,
                    data_dir: str | os.PathLike, label_keys) -> Path:
    """``labels.jsonl`` of a *dev* split, decrypted from the database and cached on disk.

    Refuses held-out splits outright (their labels never leave the database as files).
    """
    check_split(bench, split)
    if is_held_out(split):
        raise NotFound(f"labels of the held-out split {split!r} are never downloadable")
    ls = _labelset(session, bench, split)
    digest = hashlib.sha256(ls.ciphertext).hexdigest()[:16]
    path = _cache_dir(bench, data_dir) / f"{split}.labels.{digest}.jsonl"

    def write(tmp: Path) -> None:
        table = Table.from_bytes(labels_crypto.decrypt(ls.ciphertext, keys=label_keys))
        with open(tmp, "w", encoding="utf-8") as out:
            for row in label_rows(table):
                out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")

    return _build_once(path, write)


def archive_meta(bench: Benchmark, split: str) -> bytes:
    """``benchmark.yaml`` of a one-split download: `pack_copy.split_meta` of the imported pack's
    own (``splits`` narrowed to ``split``, the texts under their standard names), the very bytes
    a receipt's ``pack.benchmark_yaml`` digests, so ``leaderboard verify --pack`` accepts the
    unzipped download (issue 33)."""
    try:
        return split_meta((pack_root(bench) / "benchmark.yaml").read_bytes(), split)
    except PackError:  # the import validated it; a hand-edited copy is not ours
        raise NotFound(f"{bench.key}'s pack has no readable benchmark.yaml") from None


def archive_name(bench: Benchmark, split: str) -> str:
    """The archive's download name; it unpacks to a folder of the same stem."""
    return f"{bench.key}-{split}.zip"


def split_archive(session: Session, bench: Benchmark, split: str, *, with_labels: bool,
                  data_dir: str | os.PathLike, label_keys) -> Path:
    """A zip of the split that unpacks to the pack ``<key>-<split>/`` (module docstring); with
    ``with_labels`` (dev splits only: NotFound for a held-out one) it holds the split's
    ``labels.jsonl``."""
    check_split(bench, split)
    if with_labels and is_held_out(split):
        raise NotFound(f"labels of the held-out split {split!r} are never downloadable")
    labels = (dev_labels_file(session, bench, split, data_dir=data_dir, label_keys=label_keys)
              if with_labels else None)
    suffix = f".labels.{labels.name.split('.')[-2]}" if labels else ""
    path = _cache_dir(bench, data_dir) / f"{bench.key}-{split}{suffix}.pack.zip"
    items = items_file(bench, split)
    media = split_media(bench, split)
    root = Path(archive_name(bench, split)).stem
    meta = yaml.safe_load((pack_root(bench) / "benchmark.yaml").read_text(encoding="utf-8"))

    def write(tmp: Path) -> None:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(f"{root}/benchmark.yaml", archive_meta(bench, split))
            for name, text in (("description.md", meta.get("description", "description.md")),
                               ("agreement.md", meta.get("agreement", "agreement.md"))):
                zf.write(pack_root(bench) / text, f"{root}/{name}")
            zf.write(items, f"{root}/splits/{split}/items.jsonl")
            if labels is not None:
                zf.write(labels, f"{root}/splits/{split}/labels.jsonl")
            for rel in media:
                src = media_file(bench, rel)
                kind = (zipfile.ZIP_STORED if src.suffix.lower() in _STORED_SUFFIXES
                        else zipfile.ZIP_DEFLATED)
                zf.write(src, f"{root}/{rel}", compress_type=kind)

    return _build_once(path, write)
