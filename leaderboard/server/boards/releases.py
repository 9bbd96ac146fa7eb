"""Releases as readers meet them (issue 37): which release a URL names, the key a link to one
release uses, and the release picker's facts.

Every benchmark row is one release of a family (`leaderboard.server.services.releases`).
Below the web layer every board function takes a *row* key and looks it up exactly; a key a
reader typed (a URL, an API path, a CLI argument) is turned into a row key once, at the edge,
by `resolve_key`: a family's name means its latest release, ``<family>-v<N>`` release N. That
step must happen once only: release 1's row key is the family's name, so resolving a row key
again would jump to the latest release.

Links use `url_key`: ``<family>-v<N>`` once the family has more than one release (a link to
release 1 must not move when release 2 appears), the plain key before. Both the family URL
and the ``-vN`` URL of a release resolve to the same row key, so they share its cache scope
and can never be served another release's entries.

The index behind these (every row's family, release, date and version) is one small query,
cached in the cross-benchmark scope: every invalidation bumps that scope, so an imported
release shows at once. Item counts and pack digests per split are read from the release's
pack copy, memoised per process by the files' size and time (a release never changes its
files; a refreshed import writes new ones).
"""
from __future__ import annotations

import os

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.boards.cache import CROSS, get_cache
from leaderboard.server.errors import NotFound
from leaderboard.server.models import Benchmark
from leaderboard.server.services.releases import _RELEASE_KEY, public_key, release_key
from leaderboard.server.transparency.issue import pack_digests


def index(session: Session) -> dict:
    """``{"rows": {row key: {family, release, released_at, version, title}}, "latest":
    {family: its latest release number}}`` (cached with the cross-benchmark pages)."""
    def compute():
        rows, latest = {}, {}
        for key, family, number, at, version, title in session.execute(
                select(Benchmark.key, Benchmark.family, Benchmark.release,
                       Benchmark.released_at, Benchmark.version, Benchmark.title)):
            family = family or key  # a row written before 0022 filled the column
            rows[key] = {"family": family, "release": int(number or 1),
                         "released_at": at.isoformat() if at else None, "version": version,
                         "title": title}
            latest[family] = max(latest.get(family, 0), int(number or 1))
        return {"rows": rows, "latest": latest}

    return get_cache().get_or_compute(CROSS, ("release_index",), compute)


def _lookup(idx: dict, key: str) -> str | None:
    """`services.releases.resolve` on the cached index: the row key ``key`` names, or None."""
    rows, latest = idx["rows"], idx["latest"]
    if key in latest:
        return release_key(key, latest[key])
    m = _RELEASE_KEY.match(key)
    if m and latest.get(m["family"], 0) >= int(m["n"]):
        return release_key(m["family"], int(m["n"]))
    return key if key in rows else None


def resolve_key(session: Session, key: str) -> str:
    """The row key of the release ``key`` names (a family: its latest; ``<family>-v<N>``:
    release N; another stored key: itself). NotFound names the benchmarks a reader can ask
    for (one per family)."""
    idx = index(session)
    row = _lookup(idx, key)
    if row is None:
        raise NotFound(f"no benchmark {key!r}; known: {sorted(idx['latest'])}")
    return row


def url_key(session: Session, row_key: str) -> str:
    """The key a link to the release with row key ``row_key`` uses (`public_key`); an unknown
    key is returned as it is (a link to a deleted benchmark stays what it was)."""
    idx = index(session)
    r = idx["rows"].get(row_key)
    if r is None:
        return row_key
    return _public(row_key, r, idx["latest"][r["family"]])


def _public(row_key: str, r: dict, latest: int) -> str:
    return public_key(_Row(row_key, r["family"], r["release"]), latest=latest)


class _Row:
    """What `public_key` reads of a Benchmark row."""

    __slots__ = ("key", "family", "release")

    def __init__(self, key: str, family: str, release: int):
        self.key, self.family, self.release = key, family, release


def release_of(session: Session, row_key: str) -> dict:
    """``{"benchmark": row key, "family", "release"}``: how exports name a release."""
    r = index(session)["rows"].get(row_key) or {"family": row_key, "release": 1}
    return {"benchmark": row_key, "family": r["family"], "release": r["release"]}


#: item counts by (items.jsonl path, its size and mtime): a pack copy is read once per process
_COUNTS: dict[tuple, int] = {}


def _items(pack_path: str, split: str) -> int | None:
    path = os.path.join(pack_path, "splits", split, "items.jsonl")
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_size, st.st_mtime_ns)
    found = _COUNTS.get(key)
    if found is None:
        if len(_COUNTS) > 1024:
            _COUNTS.clear()
        with open(path, "rb") as fh:
            found = sum(1 for line in fh if line.strip())
        _COUNTS[key] = found
    return found


def family_releases(session: Session, family: str, *, digests: bool = False) -> list[dict]:
    """Every release of ``family``, oldest first: row key, ``url_key``, number, version, date,
    whether it is the latest, and per split its item count (and, with ``digests``, the pack
    digests a receipt commits to: `leaderboard.core.transparency.receipts.pack_digests`).
    Cached with the cross-benchmark pages. NotFound when the family has no release."""
    def compute():
        rows = session.execute(
            select(Benchmark.key, Benchmark.release, Benchmark.version, Benchmark.released_at,
                   Benchmark.pack_path, Benchmark.meta_json)
            .where(Benchmark.family == family).order_by(Benchmark.release)).all()
        if not rows:
            return None
        latest = rows[-1].release
        out = []
        for key, number, version, at, pack_path, meta in rows:
            splits = []
            for split in (meta or {}).get("splits", []):
                entry = {"split": split, "items": _items(pack_path, split)}
                if digests:
                    entry["pack"] = pack_digests(pack_path, split)
                splits.append(entry)
            out.append({"benchmark": key, "family": family, "release": number,
                        "url_key": _public(key, {"family": family, "release": number}, latest),
                        "version": version, "released_at": at.isoformat() if at else None,
                        "latest": number == latest, "splits": splits})
        return out

    found = get_cache().get_or_compute(CROSS, ("family_releases", family, digests), compute)
    if found is None:
        raise NotFound(f"no benchmark family {family!r}; known: "
                       f"{sorted(index(session)['latest'])}")
    return found


def picker(session: Session, row_key: str) -> dict | None:
    """The release picker of a page showing release ``row_key``: its family's releases with
    the shown one marked (``current``), or None when the family has one release (no picker)."""
    r = index(session)["rows"].get(row_key)
    if r is None or index(session)["latest"][r["family"]] < 2:
        return None
    rels = [{**x, "current": x["benchmark"] == row_key}
            for x in family_releases(session, r["family"])]
    return {"family": r["family"], "release": r["release"], "releases": rels,
            "current": next(x for x in rels if x["current"])}
