"""Seen and unseen generators, and the detectors x generators matrix of a task (issue 37).

A benchmark's ``benchmark.yaml`` lists its generators with the date each became public
(`leaderboard.core.packs.Generator`). For a submission, a generator is **unseen** when that date
is after the day the submission was made (the submission's time: the harness does not record
when a container image was built, so the image's own date is not used); a generator made public
on or before that day is **seen**. A platform re-run on a later release (issue 37,
`leaderboard.server.services.reruns`) is dated by its *original* submission: the detector was
made then, so a generator a later release adds stays unseen for it. A generator the items name but the table does not date is
shown in the matrix (last) and counted as neither.

Every number is the task's headline recomputed from the submission's stored per-item outcomes
(`leaderboard.server.services.outcome_store`, which record each item's generator since issue
37) on *the items of those generators plus every item with no generator* (the reals a detection
metric needs; VCT²'s model then averages its subset x generator cells exactly as Tables 2-3 do).
CIs are 95% percentile intervals of one bootstrap over the submission's items (the same
resamples for its seen value, unseen value, gap and every cell, so the gap's interval is
paired): for the item-mean models (every benchmark's headline but SynCred's) the Poisson
bootstrap of the rank intervals, per cell of (stratum, generator, modality), so a row costs
O(resamples x cells) whatever its items; otherwise a stratified bootstrap weighting every item. A value on fewer than `MIN_ITEMS` items (the paired comparison's minimum) is not shown.

A row's numbers depend only on its outcome file, the generators table and its made day, so they
are stored per row (`leaderboard.server.boards.generator_rows`), filled by the scoring job
(`prepare_rows`) or by the first view that needs them; the view itself (the board's rows with
their stored numbers, the columns every row shares) is assembled when first read and cached with
the board (cleared by `invalidate_boards` after every scoring). A new submission or a cleared
cache thus costs reading the stored rows, not bootstrapping every row again.
"""
from __future__ import annotations

import datetime as dt
import logging

import numpy as np
from sqlalchemy.orm import Session

from leaderboard.core import paired
from leaderboard.core.outcomes import FORMAT_VERSION, Outcome, combine, evaluate
from leaderboard.core.rank_intervals import N_RESAMPLES, SEED, stratified_weights, stratum_sums
from leaderboard.server.boards import generator_rows, intervals
from leaderboard.server.boards.board import compute_board
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.boards.meta import MODES, benchmark_info, task_of
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.services import outcome_store, reruns

log = logging.getLogger(__name__)

#: fewer items than this in a cell or slice: no value shown (as `paired.MIN_ITEMS`)
MIN_ITEMS = paired.MIN_ITEMS
RANK_BY = ("board", "unseen", "seen", "gap")
#: board rows (in board order) that get numbers: a cold view of a VCT²-sized board costs about
#: 0.13 s per row (docs/performance.md), so a long board's tail shows none, as rank intervals do
TOP_ROWS = 200
#: rows per page of the matrix page (its JSON pages as the board's, 50): with 40 generators a
#: row is 40 cells, each a table row and an SVG group (about 0.5 KB), so 10 rows are ~0.2 MB
#: (issue 37's warm target is bound by the page's bytes: docs/performance.md)
PER_PAGE = 10
#: resamples per chunk of the bootstrap (bounds the weight matrix, as rank intervals do)
CHUNK = 50

RULE = ("Seen and unseen generators: a generator is unseen by a submission when it became "
        "public (the date in the benchmark's generators table) after the day the submission "
        "was made; the submission's time is used, since the platform does not record when a "
        "container image was built (a re-run on a later release counts from its original "
        "submission's time). Seen / unseen: the task's headline on the items of those "
        "generators plus every real item; gap = seen - unseen. Intervals: 95% bootstrap over "
        f"the submission's items ({N_RESAMPLES:,} resamples, the same for every number of a "
        f"row). A value on fewer than {MIN_ITEMS} items is not shown. Only the board's first "
        f"{TOP_ROWS} rows get these numbers.")


def made_day(created_at: str) -> dt.date:
    return dt.datetime.fromisoformat(created_at).date()


def made_at(session: Session, created: dict[int, str]) -> dict[int, str]:
    """Submission id -> the ISO time the seen/unseen rule dates it by, given each one's
    ``created_at``: the one place that rule lives. The view and `prepare_rows` (the scoring
    job) must agree, since stored rows are keyed by its day: the submission's own time, and for
    the platform's re-run of a submission on a later release its original's (issue 37: the
    detector was made then, so a generator the later release adds is unseen by it)."""
    originals = reruns.made_at(session, list(created))
    return {sid: originals[sid].isoformat() if sid in originals else when
            for sid, when in created.items()}


def ordered_generators(info: dict, present: set[str]) -> list[dict]:
    """The table's generators by date (then name), then undated ones the items name, by key."""
    dated = sorted(info.get("generators", []), key=lambda g: (g["date"], g["name"], g["key"]))
    keys = {g["key"] for g in dated}
    undated = [{"key": k, "name": k, "modality": None, "date": None}
               for k in sorted(present - keys)]
    return dated + undated


def _stat(point: float, draws: np.ndarray, n: int) -> dict:
    """{value, ci_low, ci_high, n}; value None under `MIN_ITEMS` items or undefined."""
    if n < MIN_ITEMS or not np.isfinite(point):
        return {"value": None, "ci_low": None, "ci_high": None, "n": int(n)}
    ok = draws[np.isfinite(draws)]
    lo = hi = None
    if len(ok) * 2 > len(draws):
        lo, hi = (float(v) for v in np.percentile(ok, [2.5, 97.5]))
    return {"value": float(point), "ci_low": lo, "ci_high": hi, "n": int(n)}


def row_numbers(o: Outcome, generators: list[dict], made: dt.date, *,
                n_resamples: int = N_RESAMPLES, seed: int = SEED) -> dict:
    """One submission's cells (one per generator, in ``generators`` order), seen, unseen and
    gap, from its outcome (module docstring). Pure: the tests compute the same by hand."""
    masks: dict[str, np.ndarray | None] = {}
    for g in generators:
        masks[g["key"]] = o.generator_rows([g["key"]])
    later = {g["key"] for g in generators
             if g["date"] is not None and dt.date.fromisoformat(g["date"]) > made}
    dated = [g for g in generators if g["date"] is not None and masks[g["key"]] is not None]
    unseen_keys = [g["key"] for g in dated if g["key"] in later]
    seen_keys = [g["key"] for g in dated if g["key"] not in later]
    groups = {f"g:{k}": m for k, m in masks.items() if m is not None}
    for name, keys in (("seen", seen_keys), ("unseen", unseen_keys)):
        if keys:
            groups[name] = o.generator_rows(keys)
    rng = np.random.default_rng(seed)
    fast = _linear_draws(o, groups, n_resamples, rng)
    points, draws = fast if fast is not None else _weighted_draws(o, groups, n_resamples, rng)
    stats = {name: _stat(points[name], draws[name], int(groups[name].sum())) for name in groups}
    gap = None
    if stats.get("seen", {}).get("value") is not None and \
            stats.get("unseen", {}).get("value") is not None:
        gap = _stat(points["seen"] - points["unseen"], draws["seen"] - draws["unseen"],
                    min(stats["seen"]["n"], stats["unseen"]["n"]))
        gap["n"] = None  # a difference of two slices: each slice says its own n
    cells = []
    for g in generators:
        s = stats.get(f"g:{g['key']}")
        cells.append({"generator": g["key"], "unseen": g["key"] in later,
                      **(s or {"value": None, "ci_low": None, "ci_high": None, "n": 0})})
    return {"cells": cells, "seen": stats.get("seen"), "unseen": stats.get("unseen"),
            "gap": gap, "seen_generators": seen_keys, "unseen_generators": unseen_keys}


def _cells(o: Outcome) -> np.ndarray | None:
    """The bootstrap's cells: the outcome's strata refined by generator and modality (so every
    group is a union of cells); for VCT²'s ``cells`` model the strata themselves, which must
    then already separate generators and modalities (else None)."""
    gen = o.generator.astype(np.int64) + 1
    refined = (o.strata.astype(np.int64) << 24) | (gen << 8) | o.modality.astype(np.int64)
    if o.model == "mean":
        return refined
    pairs = np.unique(np.stack([o.strata.astype(np.int64), refined]), axis=1)
    return o.strata.astype(np.int64) if len(np.unique(pairs[0])) == pairs.shape[1] else None


def _linear_draws(o: Outcome, groups: dict, n_resamples: int, rng) -> tuple | None:
    """(points, draws) of each group for a model linear in per-cell sums (``mean``, ``cells``):
    each cell's items Poisson-resampled once (`rank_intervals.stratum_sums`, as the board's
    rank intervals do), every group's value combined from its cells' sums; None for another
    model (SynCred's TPR at FPR, a threshold sweep) or cells that do not separate generators."""
    if o.model not in ("mean", "cells"):
        return None
    cells = _cells(o)
    if cells is None:
        return None
    X = o.x.astype(np.float32)[:, None]
    sums, sizes, psums, psizes = {}, {}, {}, {}
    for c in np.unique(cells).tolist():
        rows = cells == c
        sums[c], sizes[c] = stratum_sums(X[rows], n_resamples, rng, CHUNK)
        psums[c] = X[rows].sum(axis=0, dtype=np.float64)[None, :]
        psizes[c] = float(rows.sum())
    points, draws = {}, {}
    for name, mask in groups.items():
        mine = np.unique(cells[mask]).tolist()
        points[name] = float(combine(o, {c: psums[c] for c in mine},
                                     {c: psizes[c] for c in mine})[0, 0])
        draws[name] = combine(o, {c: sums[c] for c in mine}, {c: sizes[c] for c in mine})[:, 0]
    return points, draws


def _weighted_draws(o: Outcome, groups: dict, n_resamples: int, rng) -> tuple:
    """(points, draws) of each group from one stratified bootstrap of the items, every item
    weighted (any model; the cost grows with items x resamples x groups)."""
    subs = {name: o.subset(m) for name, m in groups.items()}
    points = {name: float(evaluate([sub], np.ones((1, len(sub)), dtype=np.float32))[0, 0])
              for name, sub in subs.items()}
    draws = {name: [] for name in groups}
    for start in range(0, n_resamples, CHUNK):
        w = stratified_weights(o.strata, min(CHUNK, n_resamples - start), rng)
        for name, m in groups.items():
            draws[name].append(evaluate([subs[name]], w[:, m])[:, 0])
    return points, {name: np.concatenate(d) for name, d in draws.items()}


def generator_view(session: Session, *, benchmark_key: str, task: str, split: str,
                   mode: str = "team", rank_by: str = "board") -> dict:
    """The seen/unseen columns and the matrix of one task board (cached with the board).

    Rows are the board's (every row, board order), each with ``cells``, ``seen``, ``unseen``,
    ``gap`` (each {value, ci_low, ci_high, n} or None) and ``unseen_rank`` (the row's rank by
    its unseen value; None without one). ``rank_by`` "unseen" / "seen" / "gap" orders the rows
    by that value (best first; a larger gap is worse), rows without it last. ``generators``:
    the columns, by date. ServiceError names a bad ``rank_by``; NotFound a bad board."""
    info, t = check_args(session, benchmark_key=benchmark_key, task=task, split=split,
                         mode=mode, rank_by=rank_by)

    def compute():
        # every row of the board, read only when the view is computed, and without the rank
        # intervals a board page adds (the view shows none; they read 100 outcome files)
        rows = compute_board(session, info, t, split, modality=None, wanted={}, mode=mode)
        return _compute(session, info, t, split, rows)

    # in this process only: the whole view is ~1.4 MB of JSON for 500 rows x 40 generators,
    # and encoding it into Redis (then decoding it) cost a cold page with Redis more than
    # rebuilding it from stored rows (issue 37, docs/performance.md); the pages made from it
    # (a fragment, a page of JSON) are the shared entries
    view = get_cache().get_or_compute(benchmark_key, ("generators", task, split, mode), compute,
                                      shared=False)
    return _ranked(view, rank_by)


def check_args(session: Session, *, benchmark_key: str, task: str, split: str,
               mode: str = "team", rank_by: str = "board") -> tuple[dict, dict]:
    """(benchmark info, task) of a generators view's arguments, without computing it (a
    cached page checks them first); NotFound names a bad benchmark, task or split,
    ServiceError a bad mode or ``rank_by``."""
    if rank_by not in RANK_BY:
        raise ServiceError(f"rank_by must be one of {list(RANK_BY)}, got {rank_by!r}")
    if mode not in MODES:
        raise ServiceError(f"mode must be one of {list(MODES)}, got {mode!r}")
    info = benchmark_info(session, benchmark_key)
    t = task_of(info, task)
    if split not in info["splits"]:
        raise NotFound(f"benchmark {benchmark_key!r} has no split {split!r}; "
                       f"splits: {info['splits']}")
    return info, t


def view_page(view: dict, page: int, per_page: int) -> dict:
    """One page of a (ranked) view: its rows ``page`` (from 1) of ``per_page``, in the view's
    order (so a page of the view ranked by the unseen score is ranked across every row), with
    ``page``, ``per_page``, ``total`` (rows) and ``pages``; past the last page, no rows."""
    total = len(view["rows"])
    start = (page - 1) * per_page
    return {**view, "rows": view["rows"][start:start + per_page], "page": page,
            "per_page": per_page, "total": total, "pages": max(1, -(-total // per_page))}


def value_range(view: dict) -> tuple[float | None, float | None]:
    """The lowest and highest cell value of the whole view (None without one): a page's
    matrix colours its cells on the scale of every row, not of its own rows only."""
    nums = [c["value"] for r in view["rows"] for c in r["cells"] if c["value"] is not None]
    return (min(nums), max(nums)) if nums else (None, None)


def _compute(session: Session, info: dict, task: dict, split: str, page: dict) -> dict:
    metric = task["headline"]
    hib = next((c["higher_is_better"] for c in page.get("columns", [])
                if c["metric"] == metric), True)
    top = [r for r in page["rows"][:TOP_ROWS] if not r.get("disqualified_reason")]
    made = made_at(session, {r["submission_id"]: r["created_at"] for r in top})
    directory = intervals.data_dir()
    table = generator_rows.table_digest(info.get("generators", []))
    found = {}
    for r in top:
        sid = r["submission_id"]
        entry = row_entry(directory, sid, part=page["part"], task=task["key"], metric=metric,
                          table=info.get("generators", []), made=made_day(made[sid]),
                          digest=table)
        if entry is not None:
            found[sid] = entry
    present = {g for e in found.values() for g in e["generators"]}
    # only the generators some row's items name: a dated one without items has no column
    gens = [g for g in ordered_generators(info, present) if g["key"] in present]
    rows, later = [], {}
    for r in page["rows"]:
        e = found.get(r["submission_id"])
        base = {"submission_id": r["submission_id"], "rank": r["rank"], "team": r["team"],
                "method_name": r["method_name"], "created_at": r["created_at"],
                "made_at": made.get(r["submission_id"], r["created_at"]),
                "is_baseline": r["is_baseline"], "baseline_kind": r.get("baseline_kind"),
                "headline": r["values"].get(metric, {}).get("value")}
        nums = None
        if e is not None and e["numbers"] is not None:
            day = made_day(made[r["submission_id"]])
            if day not in later:
                later[day] = later_than(gens, day)
            nums = expand(e["numbers"], gens, day, later=later[day])
        rows.append({**base, **(nums or {"cells": [], "seen": None, "unseen": None,
                                         "gap": None, "seen_generators": [],
                                         "unseen_generators": []})})
    return {"benchmark": info["key"], "task": task["key"], "split": split, "part": page["part"],
            "metric": metric, "higher_is_better": hib, "generators": gens, "rows": rows,
            "rule": RULE, "min_items": MIN_ITEMS,
            "has_generators": bool(gens)}


def row_entry(directory, submission_id: int, *, part: str, task: str, metric: str,
              table: list[dict], made: dt.date, digest: str | None = None) -> dict | None:
    """A row's stored numbers (`generator_rows`), computed and stored when missing: None when
    the submission has no usable outcome (none stored, another metric, not the whole task, or
    no generators recorded); else {"generators": the outcome's generator keys, "numbers":
    `row_numbers` over its own generators (None when that failed: logged, not stored)}.
    Always computed from the stored outcome file (what every later read sees). ``digest``:
    `generator_rows.table_digest` of ``table`` when the caller asks for many rows."""
    stamp = generator_rows.outcome_stamp(outcome_store.path_of(directory, submission_id))
    if stamp is None:
        return None
    key = generator_rows.key_of(part=part, task=task, metric=metric,
                                table=digest or generator_rows.table_digest(table),
                                made=made.isoformat(),
                                method=f"{FORMAT_VERSION}/{N_RESAMPLES}/{SEED}/{MIN_ITEMS}")
    entry = generator_rows.get(directory, submission_id, stamp, key)
    if entry is not None:
        return entry if entry["usable"] else None
    o = outcome_store.read_one(directory, submission_id, part, task)
    if o is None or o.metric != metric or not o.complete or o.generator is None:
        generator_rows.put(directory, submission_id, stamp, key, {"usable": False})
        return None
    own = set(o.generators)
    gens = [g for g in ordered_generators({"generators": table}, own) if g["key"] in own]
    try:
        numbers = row_numbers(o, gens, made)
    except Exception:  # noqa: BLE001 - one bad outcome file must not cost the whole view
        log.exception("generator view submission=%s", submission_id)
        return {"usable": True, "generators": sorted(own), "numbers": None}
    entry = {"usable": True, "generators": sorted(own), "numbers": numbers}
    generator_rows.put(directory, submission_id, stamp, key, entry)
    return entry


def expand(numbers: dict, gens: list[dict], made: dt.date, *,
           later: set[str] | None = None) -> dict:
    """A row's numbers over its own generators (`row_entry`) as `row_numbers` returns them over
    the view's columns ``gens`` (a superset): a column the row has no items of gets the empty
    cell `row_numbers` gives it. The same numbers: a row's bootstrap draws and groups do not
    depend on the other columns. ``later``: `later_than` (``gens``, ``made``), when known."""
    later = later_than(gens, made) if later is None else later
    mine = {c["generator"]: c for c in numbers["cells"]}
    # copies: the stored entry is shared by every view this process builds from it
    cells = [dict(mine[g["key"]]) if g["key"] in mine else
             {"generator": g["key"], "unseen": g["key"] in later, "value": None,
              "ci_low": None, "ci_high": None, "n": 0}
             for g in gens]
    rest = {k: dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v
            for k, v in numbers.items() if k != "cells"}
    return {**rest, "cells": cells}


def later_than(gens: list[dict], made: dt.date) -> set[str]:
    """The keys of ``gens`` made public after ``made`` (unseen by a row made then)."""
    return {g["key"] for g in gens
            if g["date"] is not None and dt.date.fromisoformat(g["date"]) > made}


def prepare_rows(session: Session, *, benchmark_key: str, submission_id: int, created_at: str,
                 blocks, directory) -> int:
    """Store the submission's generator rows for every (part, task) of ``blocks`` (those of
    its scoring result, already in its outcome file), so that the boards' first read after it
    is scored bootstraps nothing. Returns the rows stored; 0 for a benchmark without a
    generators table. Raises what reading the benchmark raises; the caller decides."""
    info = benchmark_info(session, benchmark_key)
    if not info.get("generators"):
        return 0
    made = made_day(made_at(session, {submission_id: created_at})[submission_id])
    heads = {t["key"]: t["headline"] for t in info["tasks"]}
    n = 0
    for part, task in blocks:
        if task in heads and row_entry(directory, submission_id, part=part, task=task,
                                       metric=heads[task], table=info["generators"],
                                       made=made) is not None:
            n += 1
    return n


def _value(row: dict, what: str):
    s = row.get(what)
    return None if s is None else s.get("value")


def _ranked(view: dict, rank_by: str) -> dict:
    """A copy of ``view`` with ``unseen_rank`` per row and the rows in ``rank_by`` order."""
    sign = 1 if view["higher_is_better"] else -1
    rows = [dict(r) for r in view["rows"]]
    by_unseen = sorted((r for r in rows if _value(r, "unseen") is not None),
                       key=lambda r: -sign * _value(r, "unseen"))
    rank, prev = 0, None
    for i, r in enumerate(by_unseen, start=1):
        v = _value(r, "unseen")
        rank = rank if v == prev else i
        r["unseen_rank"], prev = rank, v
    for r in rows:
        r.setdefault("unseen_rank", None)
    if rank_by != "board":
        # gap = seen - unseen: a smaller gap (in the metric's direction) is better
        s = -sign if rank_by == "gap" else sign
        have = [r for r in rows if _value(r, rank_by) is not None]
        rest = [r for r in rows if _value(r, rank_by) is None]
        rows = sorted(have, key=lambda r: -s * _value(r, rank_by)) + rest
    return {**view, "rows": rows, "rank_by": rank_by}
