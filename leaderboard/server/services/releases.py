"""Releases of a benchmark (issue 37): naming, resolving and the "adds, never changes" rule.

A benchmark *family* (the pack's ``key``, e.g. ``vct2``) has numbered releases. Each release is
its own `Benchmark` row with its own pack copy, labels, submissions and boards, so importing a
later release leaves every older release's records and boards as they were:

* release 1's row has ``key == family`` (every key stored before releases existed still names
  its row); release N >= 2 has key ``<family>-v<N>`` (`release_key`);
* a reader or a submitter naming the family gets the latest release (`resolve`); ``<family>-v1``
  names release 1 explicitly, ``<family>-v<N>`` any other;
* release N+1 must hold every item of release N, split by split, with the same item fields and
  the same hidden labels, and may add items (`check_additive`); a pack that drops or changes one
  is refused naming the split, the item and the field.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.core.errors import PackError
from leaderboard.core.packs import Pack, load_pack
from leaderboard.core.table import Table
from leaderboard.server import labels_crypto
from leaderboard.server.models import Benchmark, LabelSet

_RELEASE_KEY = re.compile(r"^(?P<family>[a-z0-9][a-z0-9_\-]*)-v(?P<n>[1-9][0-9]{0,2})$")


def release_key(family: str, release: int) -> str:
    """The row key of ``family``'s release ``release`` (release 1 keeps the family's key)."""
    return family if release == 1 else f"{family}-v{release}"


def public_key(bench: Benchmark, *, latest: int | None = None) -> str:
    """The key that names exactly this release in a link that must not move when a later
    release appears (``vct2-v1`` once ``vct2`` has a release 2; the plain key before)."""
    if bench.release == 1 and (latest or 1) == 1:
        return bench.key
    return f"{bench.family}-v{bench.release}"


def releases_of(session: Session, family: str) -> list[Benchmark]:
    """Every release of ``family``, oldest first."""
    return list(session.scalars(select(Benchmark).where(Benchmark.family == family)
                                .order_by(Benchmark.release)))


def latest_release(session: Session, family: str) -> Benchmark | None:
    return session.scalar(select(Benchmark).where(Benchmark.family == family)
                          .order_by(Benchmark.release.desc()).limit(1))


def latest_releases(session: Session) -> list[Benchmark]:
    """The latest release of every family, by family key (what the home page and lists show)."""
    top = (select(Benchmark.family, func.max(Benchmark.release).label("n"))
           .group_by(Benchmark.family).subquery())
    return list(session.scalars(
        select(Benchmark).join(top, (Benchmark.family == top.c.family)
                               & (Benchmark.release == top.c.n))
        .order_by(Benchmark.family)))


def resolve(session: Session, key: str) -> Benchmark | None:
    """The release ``key`` names: a family's name -> its latest release; ``<family>-v<N>`` ->
    release N (``-v1`` included); any other stored key -> its row; None when nothing matches."""
    latest = latest_release(session, key)
    if latest is not None:
        return latest
    m = _RELEASE_KEY.match(key)
    if m:
        row = session.scalar(select(Benchmark).where(Benchmark.family == m["family"],
                                                     Benchmark.release == int(m["n"])))
        if row is not None:
            return row
    return session.scalar(select(Benchmark).where(Benchmark.key == key))


def _differs(old: Table, new: Table, name: str, rows_new: np.ndarray) -> int | None:
    """The first row of ``old`` whose ``name`` cell differs in ``new`` (rows aligned by id)."""
    a, b = old.columns[name], new.columns[name]
    present_a, present_b = a.present, b.present[rows_new]
    bad = np.flatnonzero(present_a != present_b)
    first = int(bad[0]) if len(bad) else None
    if a.type in ("text", "json", "rle") or b.type != a.type:
        for i in np.flatnonzero(present_a & present_b):
            if first is not None and i >= first:
                break
            if old.value(name, int(i)) != new.value(name, int(rows_new[i])):
                return int(i)
        return first
    va, vb = old.decoded(name), new.decoded(name)[rows_new]
    both = present_a & present_b
    if va.dtype.kind == "f":
        same = (va == vb) | (np.isnan(va) & np.isnan(vb))
    else:
        same = va == vb
    bad = np.flatnonzero(both & ~same)
    if len(bad) and (first is None or bad[0] < first):
        first = int(bad[0])
    return first


def compare_tables(old: Table, new: Table, *, split: str, what: str) -> None:
    """Raise PackError unless every row of ``old`` is in ``new`` with equal cells."""
    missing = [i for i in old.ids.tolist() if str(i) not in new.index]
    if missing:
        raise PackError(
            f"split {split!r}: {len(missing)} item(s) of the previous release are missing from "
            f"this release's {what}, first {missing[0]!r}: a release adds items and never drops "
            "one (publish the old items unchanged)")
    rows_new = np.fromiter((new.index[str(i)] for i in old.ids.tolist()), dtype=np.int64,
                           count=len(old))
    for name in old.columns:
        if name not in new.columns:
            raise PackError(f"split {split!r}: this release's {what} have no field {name!r}, "
                            "which the previous release has")
        row = _differs(old, new, name, rows_new)
        if row is not None:
            raise PackError(
                f"split {split!r}: item {str(old.ids[row])!r} changed its {what[:-1]} field "
                f"{name!r} since the previous release: a release never changes an item (give "
                "the changed item a new id)")


def check_additive(session: Session, previous: Benchmark, pack: Pack, *,
                   label_keys: Sequence[str | bytes] | None) -> None:
    """Raise PackError unless ``pack`` keeps every split, item and label of ``previous``."""
    old_pack = load_pack(previous.pack_path)
    labels = {ls.split: ls for ls in session.scalars(
        select(LabelSet).where(LabelSet.benchmark_id == previous.id))}
    for split in previous.meta_json.get("splits", []):
        if split not in pack.splits:
            raise PackError(f"this release has no split {split!r}, which release "
                            f"{previous.release} has: a release keeps every split")
        compare_tables(old_pack.items(split), pack.items(split), split=split, what="items")
        if split in labels:
            old = Table.from_bytes(labels_crypto.decrypt(labels[split].ciphertext,
                                                         keys=label_keys))
            compare_tables(old, pack.labels(split), split=split, what="labels")
