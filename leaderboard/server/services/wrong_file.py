"""Recognising a predictions file meant for another benchmark or split ("this looks like TriDF").

When a file's ids are not in the split it was submitted to, the most common cause is a file for
another benchmark, or for the other split of the same one. `guess_owner` compares the first
unknown ids (`PredictionError.unknown_ids`) with every imported benchmark's public item ids and
names the best match, so the failure starts with a line a team can act on instead of a list of
fifty unknown ids.
"""
from __future__ import annotations

import functools
import logging

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.packs import load_pack
from leaderboard.server.models import Benchmark

log = logging.getLogger(__name__)

#: a guess is made only when at least this share of the sampled unknown ids match one split
MIN_SHARE = 0.5


@functools.lru_cache(maxsize=16)
def _ids(pack_path: str, split: str) -> frozenset[str]:
    return frozenset(str(i) for i in load_pack(pack_path).items(split).ids)


def guess_owner(session: Session, unknown_ids: list[str], *, benchmark_id: int,
                split: str) -> str | None:
    """A sentence naming the benchmark and split most of ``unknown_ids`` belong to, or None.

    ``benchmark_id`` / ``split``: where the file was submitted (its own other split counts).
    Never raises: a pack that cannot be read is skipped (the guess is only a hint).
    """
    if not unknown_ids:
        return None
    sample = set(unknown_ids)
    best: tuple[int, str, str, bool] | None = None
    for bench in session.scalars(select(Benchmark).order_by(Benchmark.key)):
        for other in (bench.meta_json or {}).get("splits", []):
            if bench.id == benchmark_id and other == split:
                continue
            try:
                hits = len(sample & _ids(bench.pack_path, other))
            except Exception:  # noqa: BLE001 - a hint must never fail the failure report
                log.warning("wrong_file: cannot read %s/%s", bench.key, other, exc_info=True)
                continue
            if hits and (best is None or hits > best[0]):
                best = (hits, bench.title, other, bench.id == benchmark_id)
    if best is None or best[0] < MIN_SHARE * len(sample):
        return None
    hits, title, other, same = best
    what = f"the {other} split" if same else f"{title} ({other} split)"
    return (f"{hits} of the first {len(sample)} unknown ids belong to {what}: "
            f"this looks like a file for {what}")
