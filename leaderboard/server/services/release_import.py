"""Importing a pack as an admin or the CLI does it, saying which release it made (issue 37).

`leaderboard.server.services.benchmarks.import_pack` does the work and raises PackError (a
`LeaderboardError`: the CLI exits 2, the admin page answers 400) when the pack is invalid or a
release would drop or change an item of the release before it. This module only adds what the
person importing reads: whether a release was created or an existing one refreshed, in words,
and which boards the caller must clear after its commit.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.models import Benchmark
from leaderboard.server.services.benchmarks import import_pack


@dataclass(frozen=True)
class Imported:
    bench: Benchmark
    #: a new release row (False: an existing release refreshed in place)
    created: bool

    @property
    def message(self) -> str:
        b = self.bench
        what = "created" if self.created else "refreshed"
        return (f"{what} release {b.release} of {b.family} (key {b.key}, version {b.version})"
                + (f"; {b.family!r} now names release {b.release}"
                   if self.created and b.release > 1 else ""))

    @property
    def invalidate_all(self) -> bool:
        """A new release >= 2 changes how every page of its family links to the older
        releases (``<family>-v1`` instead of the family's name) and which release lists and
        modality boards show: the caller clears every board, not only the new release's."""
        return self.created and self.bench.release > 1


def import_release(session: Session, src: str | os.PathLike, *, data_dir, label_keys,
                   check_media: bool = True) -> Imported:
    """`import_pack`, and whether it created a release. The caller commits, then calls
    ``invalidate_boards(None if result.invalidate_all else result.bench.key)``."""
    before = set(session.scalars(select(Benchmark.id)))
    bench = import_pack(session, src, data_dir=data_dir, label_keys=label_keys,
                        check_media=check_media)
    return Imported(bench, bench.id not in before)
