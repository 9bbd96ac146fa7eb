"""Paired comparison of two submissions on the same benchmark and split (issue 14).

Per task whose headline has per-item outcomes (`leaderboard.server.services.outcome_store`), and
per slice (overall when both covered the whole task, then each modality), the difference of the
headline with a paired 95% CI and a paired test (`leaderboard.core.paired`: exact McNemar for an
accuracy, paired bootstrap otherwise). Aggregates only: values, counts per slice, never an item
id; slices too small to show safely are refused with the reason.

Visibility (`leaderboard.server.access.visibility`): both submissions must be scored and visible
to the viewer, and the comparison is made on the part the boards show (public until the private
part is revealed). Results are cached with the benchmark's boards and cleared by
`invalidate_boards` (a rescoring or a reveal changes them); A vs B and B vs A are one entry
(computed for the lower id first, mirrored for the other order), so swapping the two costs
nothing.

Cost (issue 24): one comparison is bounded whatever the benchmark. Linear headlines on 0/1
outcomes cost next to nothing (`leaderboard.core.paired`: grouped draws); every other slice is
weighed item by item, and the whole comparison shares `WORK_BUDGET` item-resamples: the
resamples drop from `MAX_RESAMPLES` towards `MIN_RESAMPLES`, then the items each slice's
bootstrap weighs are capped (a stratified subsample, its spread scaled to the full slice). The
page and the API are rate limited per client and globally (`leaderboard.server.web.hardening`).
Measured by ``perf/bench_compare.py`` (docs/performance.md).
"""
from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session

from leaderboard.core import paired
from leaderboard.core.rank_intervals import ALPHA, N_RESAMPLES
from leaderboard.server.access.visibility import can_compare
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.boards.intervals import data_dir, one_blas_thread
from leaderboard.server.boards.service import benchmark_info
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import Submission, Team
from leaderboard.server.numbers import ascii_int
from leaderboard.server.services import outcome_store

#: resamples per comparison: the most, and the fewest before items are capped instead
MAX_RESAMPLES = N_RESAMPLES
MIN_RESAMPLES = 200
#: item-resamples one comparison may weigh one by one (~0.35 s of CPU for SynCred's TPR at 5%
#: FPR, the costliest model per item; measured by perf/bench_compare.py)
WORK_BUDGET = 2_000_000

RULE = (f"Paired comparison on the same items: the difference A - B of each task's headline "
        f"metric with a {int(100 * (1 - ALPHA))}% percentile interval from up to "
        f"{MAX_RESAMPLES:,} joint bootstrap resamples of the items (the metric recomputed on "
        f"each), and a two-sided test: McNemar's exact test for an accuracy (a_only / b_only: "
        f"items only A / only B got right), the paired bootstrap otherwise. To bound the cost, "
        f"a comparison weighs at most {WORK_BUDGET:,} item-resamples one by one (0/1 accuracies "
        f"are resampled by group and never count): past that the resamples drop to at least "
        f"{MIN_RESAMPLES}, then each slice's bootstrap uses a stratified random subsample of its "
        f"items, its spread scaled to the whole slice (the value and the test's counts still use "
        f"every item; each slice says how many resamples and items it used). A slice with fewer "
        f"than {paired.MIN_ITEMS} items, or on which the two differ on fewer than "
        f"{paired.MIN_DIFFERING} items, is not shown: counts that small could reveal single "
        f"items' labels.")


def _submission(session: Session, sid, viewer, benchmark_key: str, split: str) -> Submission:
    raw = sid
    sid = sid if isinstance(sid, int) and not isinstance(sid, bool) else ascii_int(
        sid.strip(" \t") if isinstance(sid, str) else None, signed=True)
    if sid is None:  # ASCII digits only, as every number a request carries
        text = raw.strip(" \t") if isinstance(raw, str) else ""
        if text and text.isascii() and text.lstrip("+-").isdigit():
            # an integer too long to parse is still an id: one beyond any row (as 10**30 was)
            raise NotFound(f"no scored submission {text[:40]} that you may see")
        raise ServiceError(f"submission ids must be integers, got {str(raw)[:40]!r}")
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


def compare(session: Session, *, benchmark_key: str, split: str, a, b, viewer,
            run: Callable[[Callable[[], dict]], dict] | None = None) -> dict:
    """The comparison of submissions ``a`` and ``b`` (ids) for ``viewer`` (see the module
    docstring). Raises NotFound / ServiceError naming the bad argument.

    ``run(fn)`` calls the computation on a cache miss (files and numpy only, no session): the
    web layer passes one that keeps it off the gevent event loop; default: called here."""
    info = benchmark_info(session, benchmark_key)
    if split not in info["splits"]:
        raise NotFound(f"benchmark {benchmark_key!r} has no split {split!r}; "
                       f"splits: {info['splits']}")
    sa = _submission(session, a, viewer, benchmark_key, split)
    sb = _submission(session, b, viewer, benchmark_key, split)
    who = {"a": _who(session, sa), "b": _who(session, sb)}
    low, high = sorted((sa.id, sb.id))
    key = ("compare", split, low, high)
    run = run or (lambda fn: fn())
    body = get_cache().get_or_compute(benchmark_key, key,
                                      lambda: run(lambda: _compute(info, split, low, high)))
    if sa.id != low:
        body = _mirrored(body)
    return {"benchmark": benchmark_key, "benchmark_title": info["title"], "split": split,
            **who, **body, "rule": RULE}


def _mirrored(body: dict) -> dict:
    """B vs A from A vs B: values and discordant counts swap, the difference and its interval
    change sign; the p-values (two-sided) stay."""
    def flip(one: dict) -> dict:
        if "refused" in one or "difference" not in one:
            return one
        out = {**one, "value_a": one["value_b"], "value_b": one["value_a"],
               "difference": _neg(one["difference"]),
               "ci_low": _neg(one["ci_high"]), "ci_high": _neg(one["ci_low"])}
        if "a_only" in one:
            out["a_only"], out["b_only"] = one["b_only"], one["a_only"]
        return out

    tasks = [{**t, "slices": [flip(s) for s in t.get("slices", [])]} for t in body["tasks"]]
    return {**body, "tasks": tasks}


def _neg(v):
    return None if v is None else -v


def _part(info: dict, stored: dict) -> str:
    if "public" not in stored:
        return "all"
    return "private" if info["private_revealed"] else "public"


def _compute(info: dict, split: str, a: int, b: int) -> dict:
    directory = data_dir()
    oa, ob = outcome_store.read(directory, a), outcome_store.read(directory, b)
    part = _part(info, oa or ob)
    tasks: list[dict] = []
    work: list[tuple[dict, object, object]] = []  # (slice's result, A, B), computed at the end
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
            entry["slices"].append({"slice": slc})
            work.append((entry["slices"][-1], sx, sy))
        tasks.append(entry)
    resamples, item_share = plan(len(sx) for _, sx, sy in work if not paired.groupable(sx, sy))
    with one_blas_thread():
        for out, sx, sy in work:
            cap = None if item_share is None else max(paired.MIN_ITEMS, int(len(sx) * item_share))
            out.update(paired.compare_outcomes(sx, sy, n_resamples=resamples, max_items=cap))
    return {"part": part, "tasks": tasks}


def plan(sizes) -> tuple[int, float | None]:
    """(resamples, share of each slice's items its bootstrap weighs, None = all) for slices of
    these sizes weighed item by item, so that items x resamples stay within `WORK_BUDGET`."""
    units = sum(sizes)
    if units * MAX_RESAMPLES <= WORK_BUDGET:
        return MAX_RESAMPLES, None
    if units * MIN_RESAMPLES <= WORK_BUDGET:
        return max(MIN_RESAMPLES, WORK_BUDGET // units), None
    return MIN_RESAMPLES, WORK_BUDGET / (MIN_RESAMPLES * units)
