"""The board's rank intervals (issue 14): a small hook called where a board is computed.

`board_intervals` takes a board's ranked rows (in board order), reads the per-item outcomes of
the top `TOP` of them (`leaderboard.server.services.outcome_store`) on the part the board shows,
and returns ``{submission_id: {"rank", "lo", "hi", "open_end", "tied_first", "label"}}`` from
one joint bootstrap over items (`leaderboard.core.rank_intervals`). It runs when the board is
computed, so its result is cached with the board and cleared by `invalidate_boards` like every
value on it; reads never recompute it.

Intervals exist for the task's headline metric on the overall slice and on modality slices
(the items an outcome records); other slices, non-headline columns and rows without stored
outcomes (scored before outcomes were kept, or a judge-rated headline) show none. Rows must
have been scored on the same items: a row whose outcomes differ in item set (fingerprint) from
the board's majority gets no interval rather than a wrong one.
"""
from __future__ import annotations

import logging
from collections import Counter

from leaderboard.core import rank_intervals as ri
from leaderboard.core.records import parse_slice_key
from leaderboard.server.config import load_config
from leaderboard.server.services import outcome_store

log = logging.getLogger(__name__)

#: rows that get an interval (the rest of a long board shows its rank alone)
TOP = 100
RULE = ri.RULE.format(top=TOP)


def data_dir() -> str:
    """The data directory of the current app (else of the environment's configuration)."""
    from flask import current_app, has_app_context

    if has_app_context():
        return current_app.config["DATA_DIR"]
    return load_config()["DATA_DIR"]


def slice_modality(slice_key: str) -> tuple[bool, str | None]:
    """(intervals possible, modality) of a board slice: only {} and {"modality": m}."""
    try:
        wanted = parse_slice_key(slice_key)
    except ValueError:
        return False, None
    if not wanted:
        return True, None
    if set(wanted) == {"modality"}:
        return True, wanted["modality"]
    return False, None


def load_outcomes(directory, submission_ids: list[int], *, part: str, task: str, metric: str,
                  modality: str | None) -> dict[int, object]:
    """The outcomes of each submission restricted to the slice's items (missing ones left out).

    The overall slice needs the whole task covered; a modality slice takes that modality's items.
    """
    out = {}
    for sid in submission_ids:
        o = outcome_store.read_one(directory, sid, part, task)
        if o is None or o.metric != metric or (modality is None and not o.complete):
            continue
        rows = o.rows(modality)
        if rows is None:
            continue
        out[sid] = o if modality is None else o.subset(rows)
    return out


def same_items(outcomes: dict[int, object]) -> dict[int, object]:
    """Keep the outcomes whose item set is the most common one on the board."""
    if not outcomes:
        return {}
    prints = {sid: o.fingerprint() for sid, o in outcomes.items()}
    common, _ = Counter(prints.values()).most_common(1)[0]
    dropped = [sid for sid, f in prints.items() if f != common]
    if dropped:
        log.warning("rank intervals: submissions %s were scored on other items; no interval",
                    dropped)
    return {sid: o for sid, o in outcomes.items() if prints[sid] == common}


def board_intervals(*, task: dict, part: str, slice_key: str, primary: str,
                    higher_is_better: bool, rows: list[dict], directory=None,
                    top: int = TOP, total: int | None = None) -> dict[int, dict]:
    """Rank intervals of the board's top ranked rows (see the module docstring); {} when the
    board's column or slice has none. ``rows``: the board's rows from the first, in order (at
    least its top ``top`` ranked ones); ``total``: its ranked rows in all (default: those in
    ``rows``)."""
    ok, modality = slice_modality(slice_key)
    if not ok or primary != task["headline"]:
        return {}
    ranked = [r for r in rows if r.get("rank") is not None]
    window = ranked[:top]
    if not window:
        return {}
    directory = data_dir() if directory is None else directory
    found = same_items(load_outcomes(directory, [r["submission_id"] for r in window], part=part,
                                     task=task["key"], metric=primary, modality=modality))
    considered = [r for r in window if r["submission_id"] in found]
    if not considered:
        return {}
    outcomes = [found[r["submission_id"]] for r in considered]
    with one_blas_thread():
        _, draws = ri.joint_draws(outcomes)
    ivs = ri.rank_intervals(draws, [r["rank"] for r in considered],
                            higher_is_better=higher_is_better,
                            total=len(ranked) if total is None else total)
    return {r["submission_id"]: iv.as_dict() for r, iv in zip(considered, ivs)}


def one_blas_thread():
    """One BLAS thread for the GEMMs: a board refresh must not take every core of the host."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        from contextlib import nullcontext
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
