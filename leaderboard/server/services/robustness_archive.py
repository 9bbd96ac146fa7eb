"""The download of a dev split's degraded copies: one zip, a pack the toolkit scores unchanged.

Only dev copies ever leave the server: a held-out split's copies are read by the harness alone
(`NotFound`, whatever the user's grants). The zip is the copies folder as built (items per
condition, degraded media, the manifest) plus each condition's ``labels.jsonl`` (the originals'
labels of the subset, decrypted here: the copies on disk hold none), so the download link needs
the dev-labels grant as well as items and media. Built once per copies key and label set, like
every archive (`services.archives`).
"""
from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path

from sqlalchemy.orm import Session

from leaderboard.core.packs import load_pack
from leaderboard.core.robustness.scoring import condition_labels
from leaderboard.core.table import Table
from leaderboard.server import labels_crypto
from leaderboard.server.errors import NotFound
from leaderboard.server.models import Benchmark
from leaderboard.server.services import robustness as svc
from leaderboard.server.services.archives import (
    _STORED_SUFFIXES,
    _build_once,
    _cache_dir,
    _labelset,
    check_split,
    is_held_out,
    label_rows,
)


def robustness_archive(session: Session, bench: Benchmark, split: str, *,
                       data_dir: str | os.PathLike, label_keys) -> Path:
    check_split(bench, split)
    if is_held_out(split):
        raise NotFound(f"degraded copies of the held-out split {split!r} are never "
                       "downloadable (only the harness reads them)")
    build = svc.current_build(session, bench, split, data_dir=str(data_dir))
    if build is None:
        raise NotFound(f"the degraded copies of {bench.key}/{split} are not built yet")
    ls = _labelset(session, bench, split)
    digest = hashlib.sha256(ls.ciphertext).hexdigest()[:12]
    path = _cache_dir(bench, data_dir) / f"{bench.key}-{split}-robustness-{build.cache_key}" \
                                         f".labels.{digest}.zip"
    root = Path(data_dir) / build.path

    def write(tmp: Path) -> None:
        labels = Table.from_bytes(labels_crypto.decrypt(ls.ciphertext, keys=label_keys))
        pack = load_pack(root)
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for file in sorted(root.rglob("*")):
                if not file.is_file() or file.name.startswith("."):
                    continue
                rel = file.relative_to(root).as_posix()
                kind = (zipfile.ZIP_STORED if file.suffix.lower() in _STORED_SUFFIXES
                        else zipfile.ZIP_DEFLATED)
                zf.write(file, rel, compress_type=kind)
            for name in pack.splits:
                rows = label_rows(condition_labels(labels, pack.items(name)))
                zf.writestr(f"splits/{name}/labels.jsonl", "".join(
                    json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                    for r in rows))

    return _build_once(path, write)
