"""Paired comparison of two submissions on the same benchmark and split (issue 14).

Per task whose headline has per-item outcomes (`leaderboard.server.services.outcome_store`), and
per slice (overall when both covered the whole task, then each modality), the difference of the
headline with a paired 95% CI and a paired test (`leaderboard.core.paired`: exact McNemar for an
accuracy, paired bootstrap otherwise). Aggregates only: values, counts per slice, never an item
id; slices too small to show safely are refused with the reason.

Visibility (`leaderboard.server.access.visibility`): both submissions must be scored and visible
to the viewer, and the comparison is made on the part the boards show (public until the private
part is revealed). Results are cached with the benchmark's boards and cleared by
`invalidate_boards` (a rescoring or a reveal changes them).
"""
from __future__ import annotations

from sqlalchemy.orm import Session

from leaderboard.core import paired
from leaderboard.core.rank_intervals import ALPHA, N_RESAMPLES
from leaderboard.server.access.visibility import can_compare
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.boards.intervals import data_dir, one_blas_thread
from leaderboard.server.boards.service import benchmark_info
from leaderboard.server.models import Submission, Team
from leaderboard.server.services import NotFound, ServiceError, outcome_store

RULE = (f"Paired comparison on the same items: the difference A - B of each task's headline "
        f"metric with a {int(100 * (1 - ALPHA))}% percentile interval from {N_RESAMPLES:,} joint "
        f"bootstrap resamples of the items (the metric recomputed on each), and a two-sided test: "
        f"McNemar's exact test for an accuracy (a_only / b_only: items only A / only B got right), "
        f"the paired bootstrap otherwise. A slice with fewer than {paired.MIN_ITEMS} items, or on "
        f"which the two differ on fewer than {paired.MIN_DIFFERING} items, is not shown: counts "
        f"that small could reveal single items' labels.")


def _submission(session: Session, sid, viewer, benchmark_key: str, split: str) -> Submission:
    try:
        sid = int(sid)
    except (TypeError, ValueError):
        raise ServiceError(f"submission ids must be integers, got {sid!r}") from None
    if not 1 <= sid <= 2**31 - 1:  # beyond the id column's range: none such
        raise NotFound(f"no scored submission {sid} that you may see")
    sub = session.get(Submission, sid)
    # an invisible submission is not acknowledged to exist (as on its own page)
    if sub is None or not can_compare(viewer, sub):
        raise NotFound(f"no scored submission {sid} that you may see")
    if sub.benchmark.key != benchmark_key or sub.split != split:
        raise ServiceError(f"submission {sid} is on {sub.benchmark.key}/{sub.split}, not "
                           f"{benchmark_key}/{split}: only submissions on the same split compare")
    return sub


def _who(session: Session, sub: Submission) -> dict:
    team = session.get(Team, sub.team_id) if sub.team_id is not None else None
    name = team.name if team else (f"Baseline ({sub.baseline_kind})" if sub.is_baseline else "")
    return {"submission_id": sub.id, "team": name, "method_name": sub.method_name}


def compare(session: Session, *, benchmark_key: str, split: str, a, b, viewer) -> dict:
    """The comparison of submissions ``a`` and ``b`` (ids) for ``viewer`` (see the module
    docstring). Raises NotFound / ServiceError naming the bad argument."""
    info = benchmark_info(session, benchmark_key)
    if split not in info["splits"]:
        raise NotFound(f"benchmark {benchmark_key!r} has no split {split!r}; "
                       f"splits: {info['splits']}")
    sa = _submission(session, a, viewer, benchmark_key, split)
    sb = _submission(session, b, viewer, benchmark_key, split)
    who = {"a": _who(session, sa), "b": _who(session, sb)}
    key = ("compare", split, sa.id, sb.id)
    body = get_cache().get_or_compute(benchmark_key, key,
                                      lambda: _compute(info, split, sa.id, sb.id))
    return {"benchmark": benchmark_key, "benchmark_title": info["title"], "split": split,
            **who, **body, "rule": RULE}


def _part(info: dict, stored: dict) -> str:
    if "public" not in stored:
        return "all"
    return "private" if info["private_revealed"] else "public"


def _compute(info: dict, split: str, a: int, b: int) -> dict:
    directory = data_dir()
    oa, ob = outcome_store.read(directory, a), outcome_store.read(directory, b)
    part = _part(info, oa or ob)
    tasks = []
    for t in info["tasks"]:
        spec = info["metrics"].get(t["headline"], {})
        entry = {"task": t["key"], "title": t.get("title") or t["key"], "metric": t["headline"],
                 "metric_title": spec.get("title") or t["headline"], "fmt": spec.get("fmt", "num"),
                 "higher_is_better": bool(spec.get("higher_is_better", True)), "slices": []}
        x, y = oa.get(part, {}).get(t["key"]), ob.get(part, {}).get(t["key"])
        if x is None and y is None:
            continue  # neither covered the task (or its headline has no per-item form)
        if x is None or y is None or x.metric != t["headline"] or y.metric != t["headline"]:
            entry["refused"] = ("no per-item outcomes of both submissions for this task's "
                                "headline (one did not cover it, or was scored before they "
                                "were kept: rescoring adds them)")
            tasks.append(entry)
            continue
        slices = ([({}, None)] if x.complete and y.complete else []) + \
                 [({"modality": m}, m) for m in x.modalities if m in y.modalities]
        for slc, modality in slices:
            ra, rb = x.rows(modality), y.rows(modality)
            if ra is None or rb is None:
                continue
            sx, sy = x.subset(ra), y.subset(rb)
            if sx.fingerprint() != sy.fingerprint():
                entry["slices"].append({"slice": slc, "refused": "the two were scored on "
                                        "different items here"})
                continue
            with one_blas_thread():
                entry["slices"].append({"slice": slc, **paired.compare_outcomes(sx, sy)})
        tasks.append(entry)
    return {"part": part, "tasks": tasks}
