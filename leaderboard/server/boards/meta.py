"""Benchmark metadata the boards read (cached): public info, tasks, slice keys, modalities.

Every board, modality board and page starts here; the values are plain, JSON-ready dicts.
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core import records
from leaderboard.server.boards.cache import CROSS, get_cache
from leaderboard.server.boards.modality_ledger import MODALITY_ORDER
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import Benchmark
from leaderboard.server.services import releases

MODES = ("team", "all")
#: the most rows one board page may hold
MAX_PER_PAGE = 500


def _info_of(bench: Benchmark) -> dict:
    meta = bench.meta_json or {}
    return {"key": bench.key, "family": bench.family or bench.key,
            "release": int(bench.release or 1), "title": bench.title, "version": bench.version,
            "tasks": meta.get("tasks", []), "modalities": meta.get("modalities", []),
            "splits": meta.get("splits", []), "metrics": meta.get("metrics", {}),
            "private_revealed": bool(bench.private_revealed),
            "submissions_open": bool(bench.submissions_open),
            "official_judge": bench.official_judge, "id": bench.id,
            "scoring_only": bool(meta.get("scoring_only")),
            "generators": meta.get("generators", [])}


def benchmark_info(session: Session, key: str) -> dict:
    """Public metadata of one benchmark release (cached); NotFound names the known keys.

    ``key`` is a row key, looked up exactly: a key a reader typed goes through
    `leaderboard.server.boards.releases.resolve_key` first (a family's name is release 1's
    row key, so resolving here would be wrong for release 1)."""
    def compute():
        bench = session.scalar(select(Benchmark).where(Benchmark.key == key))
        return None if bench is None else _info_of(bench)

    info = get_cache().get_or_compute(key, ("info",), compute)
    if info is None:
        known = list(session.scalars(select(Benchmark.key).order_by(Benchmark.key)))
        raise NotFound(f"no benchmark {key!r}; known: {known}")
    return info


def list_benchmark_infos(session: Session) -> list[dict]:
    """The public metadata of every benchmark family's latest release, by family (cached):
    what lists show, one entry per benchmark (issue 37; older releases are reached through
    the release picker)."""
    return get_cache().get_or_compute(CROSS, ("benchmarks",), lambda: [
        _info_of(b) for b in releases.latest_releases(session)])


def task_of(info: dict, task: str) -> dict:
    for t in info["tasks"]:
        if t["key"] == task:
            return t
    raise NotFound(f"benchmark {info['key']!r} has no task {task!r}; "
                   f"tasks: {[t['key'] for t in info['tasks']]}")


def parse_slice_key(text: str | None) -> dict:
    """Inverse of `slice_key_of`; raises ServiceError naming a malformed part."""
    try:
        return records.parse_slice_key(text)
    except ValueError as exc:
        raise ServiceError(str(exc)) from None


def modalities(session: Session) -> list[str]:
    """Every modality of any benchmark, in the canonical order, unknown ones after (cached)."""
    seen = {m for info in list_benchmark_infos(session) for t in info["tasks"]
            for m in t["modalities"]}
    return [m for m in MODALITY_ORDER if m in seen] + sorted(seen - set(MODALITY_ORDER))


def board_split(info: dict) -> str | None:
    """The split ranked on cross-benchmark pages: the held-out test split when there is one."""
    if "test" in info["splits"]:
        return "test"
    return info["splits"][-1] if info["splits"] else None


