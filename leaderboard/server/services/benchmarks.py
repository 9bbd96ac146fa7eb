"""Importing benchmark packs into the server.

The server keeps its own copy of a pack under ``DATA_DIR/packs/<key>/<version>/`` *without*
``labels.jsonl`` (and without the compile cache, which would hold the labels too): hidden labels
live only in the database, compiled and Fernet-encrypted (`leaderboard.server.labels_crypto`).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.errors import PackError
from leaderboard.core.packs import Pack, load_pack
from leaderboard.server import labels_crypto
from leaderboard.server.errors import Forbidden, NotFound, ServiceError
from leaderboard.server.models import Benchmark, LabelSet, utcnow
from leaderboard.server.services import releases

_SKIP = {"labels.jsonl", ".cache"}
#: a folder checked by `check_pack_path` may hold at most this many entries
MAX_PACK_ENTRIES = 2_000_000


def _under(path: Path, roots: list[str]) -> bool:
    return any(path == Path(r) or path.is_relative_to(r) for r in roots)


def check_pack_path(path: str, roots: list[str]) -> Path:
    """``path`` resolved, if it and everything in it (links followed) lie under one of ``roots``
    (``PACK_ROOTS``): what the admin pages may read packs and releases from.

    Raises ServiceError (400) for a relative or missing path, Forbidden (403) naming the roots
    for a path outside them, or a link inside pointing outside them (the import copies what
    links point at into the public pack folder).
    """
    if not isinstance(path, str) or not os.path.isabs(path):
        raise ServiceError(f"give the absolute server-side path of the folder, got {path!r}")
    folder = Path(path).resolve()
    allowed = ", ".join(roots) or "none configured"
    if not _under(folder, roots):
        raise Forbidden(f"{path} is not inside a folder packs may be read from ({allowed}; "
                        "set PACK_ROOTS)")
    if not folder.is_dir():
        raise ServiceError(f"{path} is not a folder on the server")
    seen, count = {folder}, 0
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        for name in dirnames + filenames:
            entry = Path(dirpath) / name
            count += 1
            if count > MAX_PACK_ENTRIES:
                raise ServiceError(f"{path} holds more than {MAX_PACK_ENTRIES} entries")
            if entry.is_symlink() and not _under(entry.resolve(), roots):
                raise Forbidden(f"{entry} links outside the folders packs may be read from "
                                f"({allowed})")
        real = [d for d in dirnames if (Path(dirpath) / d).resolve() not in seen]
        seen.update((Path(dirpath) / d).resolve() for d in real)
        dirnames[:] = real  # a link back up the tree is walked once
    return folder


def pack_meta(pack: Pack) -> dict:
    """The public description of a pack that boards and pages need (no labels)."""
    metrics = {name: {"title": m.title, "higher_is_better": m.higher_is_better, "fmt": m.fmt,
                      "lower": m.lower, "upper": m.upper, "description": m.description}
               for name, m in pack.benchmark.metrics.items()}
    return {"tasks": [t.as_dict() for t in pack.tasks], "modalities": list(pack.modalities),
            "splits": list(pack.splits), "metrics": metrics, "scoring_only": pack.scoring_only,
            "request_fields": [f.as_dict() for f in pack.meta.request_fields],
            "generators": [g.as_dict() for g in pack.meta.generators]}


def _copy_public(src: Path, dest: Path) -> None:
    """Copy ``src`` to ``dest`` without hidden files; replace ``dest`` atomically-ish."""
    tmp = dest.with_name(f".{dest.name}.tmp-{uuid.uuid4().hex[:8]}")
    shutil.copytree(src, tmp, ignore=lambda _d, names: [n for n in names if n in _SKIP])
    if dest.exists():
        old = dest.with_name(f".{dest.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(dest, old)
        os.replace(tmp, dest)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, dest)


def import_pack(session: Session, src: str | os.PathLike, *, data_dir: str | os.PathLike,
                label_keys, check_media: bool = True) -> Benchmark:
    """Register (or re-register) the pack at ``src``; returns its Benchmark row (its release).

    Validates the whole pack first (PackError naming file, line and field), so a bad pack changes
    nothing. Every split must carry its ``labels.jsonl``. Releases (issue 37,
    `leaderboard.server.services.releases`): a pack with ``release: N`` (default 1) is release N
    of the family named by its key. Importing the same release and version again refreshes
    texts, metadata and labels in place (idempotent). Release N+1 (the next number only) must
    keep every item and label of release N (`releases.check_additive`) and gets its own row,
    pack copy and labels, leaving older releases as they were. A new version of an existing
    release replaces its pack and labels only while the family has that one release (the rule
    before releases existed); once a later release exists, an existing release never changes.
    The caller commits, then calls `invalidate_boards` (and `reruns.plan` for a new release).
    """
    pack = load_pack(src)
    pack.validate(check_media=check_media)
    tables = {}
    for split in pack.splits:
        if not pack.labels_path(split).exists():
            raise PackError(f"split {split!r} has no labels.jsonl: the server needs the hidden "
                            "labels of every split to score it")
        tables[split] = pack.labels(split).to_bytes()
    description, agreement = pack.text("description"), pack.text("agreement")

    family, number = pack.key, pack.meta.release
    key = releases.release_key(family, number)
    bench = session.scalar(select(Benchmark).where(Benchmark.family == family,
                                                   Benchmark.release == number))
    latest = releases.latest_release(session, family)
    if bench is None and session.scalar(select(Benchmark.id).where(Benchmark.key == key)):
        raise PackError(f"the key {key!r} is taken by another benchmark: rename this pack's key")
    if bench is None and number > 1:
        have = latest.release if latest is not None else 0
        if number != have + 1:
            raise PackError(f"release {number} of {family!r} cannot be imported: "
                            + (f"the latest release is {have}; import release {have + 1} first"
                               if have else f"there is no release 1 of {family!r} yet")
                            + " (a release adds to the one before it)")
        releases.check_additive(session, latest, pack, label_keys=label_keys)
    elif bench is not None and bench.version != pack.version and latest.release > 1:
        raise PackError(f"release {number} of {family!r} exists with version {bench.version!r} "
                        f"and the family has {latest.release} releases: a published release "
                        f"never changes; publish release {latest.release + 1} instead")

    dest = Path(data_dir) / "packs" / key / pack.version
    dest.parent.mkdir(parents=True, exist_ok=True)
    _copy_public(Path(src), dest)

    if bench is None:
        bench = Benchmark(key=key, family=family, release=number, released_at=utcnow())
        session.add(bench)
    bench.title = pack.title
    bench.version = pack.version
    bench.pack_path = str(dest)
    bench.meta_json = pack_meta(pack)
    bench.description_md = description
    bench.agreement_md = agreement
    bench.agreement_version = hashlib.sha256(agreement.encode("utf-8")).hexdigest()
    session.flush()
    existing = {ls.split: ls for ls in session.scalars(
        select(LabelSet).where(LabelSet.benchmark_id == bench.id))}
    for split, data in tables.items():
        ls = existing.pop(split, None) or LabelSet(benchmark_id=bench.id, split=split)
        ls.ciphertext = labels_crypto.encrypt(data, keys=label_keys)
        session.add(ls)
    for stale in existing.values():  # a split the new version dropped
        session.delete(stale)
    session.flush()
    return bench


def get_benchmark(session: Session, key: str) -> Benchmark:
    """The release ``key`` names (a family's name: its latest release; `releases.resolve`)."""
    bench = releases.resolve(session, key)
    if bench is None:
        known = session.scalars(select(Benchmark.key).order_by(Benchmark.key)).all()
        raise NotFound(f"no benchmark {key!r}; known: {list(known)}")
    return bench


def get_release(session: Session, row_key: str) -> Benchmark:
    """The release whose stored key is ``row_key``, exactly: for keys the server wrote itself
    (a signed download link, a board's rows). `get_benchmark` is for keys a person typed: it
    reads a family's name as its latest release, and release 1's key is the family's name."""
    bench = session.scalar(select(Benchmark).where(Benchmark.key == row_key))
    if bench is None:
        raise NotFound(f"no benchmark {row_key!r}")
    return bench


def list_benchmarks(session: Session) -> list[Benchmark]:
    """What a list offers (the submit menu, the data-access index): one entry per benchmark,
    its latest release (`releases.latest_releases`), by name."""
    return releases.latest_releases(session)
