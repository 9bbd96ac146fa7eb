"""Modality boards, read side: the index, one board page (cached), every row (the CSV).

The rows, their order and the rule are `leaderboard.server.boards.modality_ledger`'s (kept in
the scoring transaction); a page reads its board row (columns, counters), one range of
``modality_standing`` in key order with the team names, and the count of team rows that rank
strictly above the page's first ranked row (its competition rank). Baseline rows sit in that
range where their mean puts them, marked and never ranked.

The mean's 95% interval and the rank intervals (`board_stats`) come from one bootstrap over the
items of each column (`leaderboard.core.rank_intervals.joint_draws` on the stored per-item
outcomes, `leaderboard.server.boards.intervals`), each draw normalised as the column is and
averaged over a row's cells: the same resampled items for every row of a column, so intervals
carry the correlation as the task boards' do. They are computed for the board's first
`intervals.TOP` rows when the board is first read after a change and cached with it (cleared by
`invalidate_boards`); a row with a cell without stored outcomes (a judge-rated headline, or
scored before outcomes were kept) shows its mean without an interval.
"""
from __future__ import annotations

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.core import rank_intervals as ri
from leaderboard.server.boards.cache import CROSS, get_cache
from leaderboard.server.boards.intervals import (
    TOP,
    data_dir,
    load_outcomes,
    one_blas_thread,
    same_items,
)
from leaderboard.server.boards.meta import MAX_PER_PAGE
from leaderboard.server.boards.modality_ledger import RULE, all_boards, kind_title
from leaderboard.server.boards.normalise import KIND_TITLES
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import Team
from leaderboard.server.models.standings import ModalityBoard, ModalityStanding

#: the column fields a page shows (the rest is the ledger's bookkeeping)
_PUBLIC_COLUMN = ("key", "benchmark", "task", "task_kind", "split", "part", "slice_key",
                  "metric", "title", "metric_title", "higher_is_better", "by_magnitude",
                  "arrow", "fmt", "lower", "upper", "chance", "chance_basis", "perfect")
ALPHA = 0.05


def board_keys(session: Session) -> list[tuple[str, str, str]]:
    """Every (modality, kind, split) board (`modality_ledger.all_boards`), cached with the
    boards: a cached page costs no database read."""
    keys = get_cache().get_or_compute(CROSS, ("modality_board_keys",),
                                      lambda: [list(k) for k in all_boards(session)])
    return [tuple(k) for k in keys]


def default_split(session: Session, modality: str, kind: str) -> str:
    """The split a board shows when the reader names none: the held-out one when it exists."""
    splits = [s for m, k, s in board_keys(session) if (m, k) == (modality, kind)]
    if not splits:
        raise NotFound(_unknown(session, modality, kind))
    return splits[0]


def _unknown(session: Session, modality: str, kind: str) -> str:
    pairs = sorted({f"{m}/{k}" for m, k, _s in board_keys(session)})
    return f"no modality board {modality}/{kind}; boards: {pairs}"


def _check(session: Session, modality: str, kind: str, split: str, page: int,
           per_page: int | None) -> None:
    keys = board_keys(session)
    if (modality, kind, split) not in keys:
        if any((m, k) == (modality, kind) for m, k, _s in keys):
            splits = [s for m, k, s in keys if (m, k) == (modality, kind)]
            raise ServiceError(f"split must be one of {splits}, got {split!r}")
        raise NotFound(_unknown(session, modality, kind))
    if page < 1 or (per_page is not None and not 1 <= per_page <= MAX_PER_PAGE):
        raise ServiceError(f"page must be >= 1 and per_page in 1..{MAX_PER_PAGE}, got "
                           f"page={page!r}, per_page={per_page!r}")


# -- the index -----------------------------------------------------------------------------------
def modality_index(session: Session) -> list[dict]:
    """Every modality with its boards (cached with the boards): [{"modality", "boards": [{"kind",
    "title", "splits": [{"split", "tasks", "teams", "ranked", "leader": None or {"team",
    "mean_score", "covered", "of"}}]}]}], in display order. The leader is the first ranked
    team row (baselines are never leaders)."""
    return get_cache().get_or_compute(CROSS, ("modality_index",),
                                      lambda: _index(session))


def _index(session: Session) -> list[dict]:
    boards = {(mb.modality, mb.kind, mb.split): mb
              for mb in session.scalars(select(ModalityBoard))}
    out: list[dict] = []
    for modality, kind, split in board_keys(session):
        if not out or out[-1]["modality"] != modality:
            out.append({"modality": modality, "boards": []})
        kinds = out[-1]["boards"]
        if not kinds or kinds[-1]["kind"] != kind:
            kinds.append({"kind": kind, "title": kind_title(kind), "splits": []})
        mb = boards.get((modality, kind, split))
        leader = None
        if mb is not None and mb.ranked:
            r = session.execute(_rows_query(mb.id).where(
                ModalityStanding.ranked.is_(True)).order_by(ModalityStanding.sort_key)
                .limit(1)).first()
            if r is not None:
                leader = {"team": _name(r), "team_id": r.team_id, "mean_score": r.mean_score,
                          "covered": r.covered, "of": len(mb.columns_json or [])}
        kinds[-1]["splits"].append({
            "split": split, "tasks": len(mb.columns_json or []) if mb else 0,
            "teams": mb.rows if mb else 0, "ranked": mb.ranked if mb else 0,
            "leader": leader})
    return out


# -- one page ------------------------------------------------------------------------------------
def modality_board(session: Session, modality: str, kind: str, *, split: str | None = None,
                   page: int = 1, per_page: int | None = None) -> dict:
    """One page of a modality board (cached with the boards).

    Returns {"modality", "kind", "kind_title", "split", "splits", "columns", "rows", "rule",
    "interval_rule", "page", "per_page", "total", "ranked", "pages"}; each row {"rank" (None:
    not ranked), "rank_interval" (None or {"lo", "hi", "open_end", "tied_first", "label"}),
    "team": {"id", "name"}, "is_baseline", "baseline_kind", "covered", "of", "ranked",
    "mean_score", "mean_ci" ([lo, hi] or None), "n", "cells": {column key: {"submission_id",
    "value", "ci_low", "ci_high", "n", "normalised"}}}. ``split`` None: the held-out split.
    ``per_page`` None: every row. ``total``/``ranked`` count teams, not baselines."""
    split = split or default_split(session, modality, kind)
    _check(session, modality, kind, split, page, per_page)
    return get_cache().get_or_compute(
        CROSS, ("modality_page", modality, kind, split, page, per_page),
        lambda: _page(session, modality, kind, split, page, per_page))


def _board_row(session: Session, modality: str, kind: str, split: str):
    return session.execute(select(ModalityBoard.id, ModalityBoard.rows, ModalityBoard.ranked,
                                  ModalityBoard.columns_json)
                           .where(ModalityBoard.modality == modality,
                                  ModalityBoard.kind == kind,
                                  ModalityBoard.split == split)).first()


def _rows_query(board_id: int):
    return (select(ModalityStanding.sort_key, ModalityStanding.grp, ModalityStanding.team_id,
                   Team.name, ModalityStanding.is_baseline, ModalityStanding.covered,
                   ModalityStanding.ranked, ModalityStanding.mean_score,
                   ModalityStanding.n_items, ModalityStanding.cells_json)
            .outerjoin(Team, ModalityStanding.team_id == Team.id)
            .where(ModalityStanding.board_id == board_id))


def _name(r) -> str:
    if r.grp.startswith("b:"):
        return f"Baseline: {r.grp[2:]}"
    return r.name or (f"submission #{r.grp[2:]}" if r.grp.startswith("s:") else "")


def _row(r, cols: list[dict], rank: int | None, stats: dict) -> dict:
    cells = {}
    for c in cols:
        cell = (r.cells_json or {}).get(c["key"])
        if cell is not None:
            sid, value, lo, hi, n, norm = cell
            cells[c["key"]] = {"submission_id": sid, "value": value, "ci_low": lo,
                               "ci_high": hi, "n": n, "normalised": norm}
    st = stats.get(r.grp, {})
    return {"rank": rank, "rank_interval": st.get("rank_interval") if rank else None,
            "team": {"id": r.team_id, "name": _name(r)}, "is_baseline": bool(r.is_baseline),
            "baseline_kind": r.grp[2:] if r.is_baseline else None, "covered": r.covered,
            "of": len(cols), "ranked": bool(r.ranked), "mean_score": r.mean_score,
            "mean_ci": st.get("mean_ci"), "n": r.n_items, "cells": cells}


def _ranks(session: Session, board_id: int, raw: list) -> list[int | None]:
    """Competition ranks of a page's rows (ranked rows come first in key order, baselines
    among them unranked): equal means share a rank; a rank is 1 + the team rows with a
    strictly better mean."""
    out, prev_code, prev_rank, before = [], None, None, None
    for r in raw:
        if not r.ranked:
            out.append(None)
            continue
        code = r.sort_key[:18]  # "0" + "0" + the mean's code
        if before is None:  # the page's first ranked row: count the team rows above it
            teams = (ModalityStanding.board_id == board_id,
                     ModalityStanding.is_baseline.is_(False))
            before = session.scalar(select(func.count()).select_from(ModalityStanding)
                                    .where(*teams, ModalityStanding.sort_key < r.sort_key))
            rank = 1 + session.scalar(select(func.count()).select_from(ModalityStanding)
                                      .where(*teams, ModalityStanding.sort_key < code))
        elif code == prev_code:
            rank = prev_rank
        else:
            rank = 1 + before
        out.append(rank)
        prev_code, prev_rank = code, rank
        before += 1
    return out


def _public_columns(cols: list[dict]) -> list[dict]:
    return [{k: c.get(k) for k in _PUBLIC_COLUMN} for c in cols]


def _splits(session: Session, modality: str, kind: str) -> list[str]:
    return [s for m, k, s in board_keys(session) if (m, k) == (modality, kind)]


def _page(session: Session, modality: str, kind: str, split: str, page: int,
          per_page: int | None) -> dict:
    mb = _board_row(session, modality, kind, split)
    cols = list(mb.columns_json or []) if mb else []
    base = {"modality": modality, "kind": kind, "kind_title": KIND_TITLES.get(kind, kind),
            "split": split, "splits": _splits(session, modality, kind),
            "columns": _public_columns(cols), "rule": RULE,
            "interval_rule": ri.RULE.format(top=TOP), "page": page, "per_page": per_page}
    if mb is None:
        return {**base, "rows": [], "total": 0, "ranked": 0, "pages": 1}
    offset = 0 if per_page is None else (page - 1) * per_page
    q = _rows_query(mb.id).order_by(ModalityStanding.sort_key)
    if per_page is not None:
        q = _page_range(session, mb.id, q, offset, per_page)
    raw = session.execute(q).all() if q is not None else []
    stats = board_stats(session, modality, kind, split)
    ranks = _ranks(session, mb.id, raw)
    rows = [_row(r, cols, rank, stats) for r, rank in zip(raw, ranks)]
    pages = 1 if per_page is None else max(1, -(-mb.rows // per_page))
    return {**base, "rows": rows, "total": mb.rows, "ranked": mb.ranked, "pages": pages}


def _page_range(session: Session, board_id: int, q, teams_before: int, per_page: int):
    """``q`` limited to one page: ``per_page`` team rows after the first ``teams_before``, with
    the baselines placed before each of them (and, on the last page, those after the last
    team row); None when the page is past the end."""
    teams = select(ModalityStanding.sort_key).where(
        ModalityStanding.board_id == board_id,
        ModalityStanding.is_baseline.is_(False)).order_by(ModalityStanding.sort_key)
    if teams_before:
        after = session.scalar(teams.offset(teams_before - 1).limit(1))
        if after is None:
            return None
        q = q.where(ModalityStanding.sort_key > after)
    last = session.scalars(teams.offset(teams_before + per_page - 1).limit(2)).all()
    if len(last) == 2:  # a next page exists: stop at this page's last team row
        q = q.where(ModalityStanding.sort_key <= last[0])
    return q


# -- intervals -----------------------------------------------------------------------------------
def board_stats(session: Session, modality: str, kind: str, split: str) -> dict:
    """{grp: {"mean_ci": [lo, hi], "rank_interval": {...}}} for the board's first `TOP` rows
    (cached with the boards; see the module docstring)."""
    return get_cache().get_or_compute(CROSS, ("modality_stats", modality, kind, split),
                                      lambda: _stats(session, modality, kind, split))


def _stats(session: Session, modality: str, kind: str, split: str) -> dict:
    mb = _board_row(session, modality, kind, split)
    if mb is None or not mb.columns_json:
        return {}
    cols = list(mb.columns_json)
    raw = session.execute(_rows_query(mb.id).order_by(ModalityStanding.sort_key)
                          .limit(TOP + 8)).all()
    directory = data_dir()
    per_col: list[dict[int, np.ndarray]] = []  # column -> {submission id: B normalised draws}
    with one_blas_thread():
        for i, c in enumerate(cols):
            sids = sorted({r.cells_json[c["key"]][0] for r in raw
                           if c["key"] in (r.cells_json or {})})
            found = same_items(load_outcomes(
                directory, sids, part=c["part"], task=c["task"], metric=c["metric"],
                modality=modality if c["slice_key"] else None))
            if not found:
                per_col.append({})
                continue
            order = sorted(found)
            _, draws = ri.joint_draws([found[s] for s in order], seed=ri.SEED + 7919 * (i + 1))
            per_col.append({s: _normalise_draws(draws[:, j], c) for j, s in enumerate(order)})
    out: dict[str, dict] = {}
    ranked_grps, ranked_draws = [], []
    for r in raw:
        mean = _mean_draws(r, cols, per_col)
        if mean is None:
            continue
        lo, hi = np.nanpercentile(mean, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)])
        out[r.grp] = {"mean_ci": [float(lo), float(hi)]}
        if r.ranked:
            ranked_grps.append(r.grp)
            ranked_draws.append(mean)
    if ranked_grps:
        rank_of = _team_ranks(raw)
        ivs = ri.rank_intervals(np.stack(ranked_draws, axis=1),
                                [rank_of[g] for g in ranked_grps], higher_is_better=True,
                                total=mb.ranked)
        for g, iv in zip(ranked_grps, ivs):
            out[g]["rank_interval"] = iv.as_dict()
    return out


def _team_ranks(raw: list) -> dict[str, int]:
    """Competition ranks of the ranked team rows among ``raw`` (the board's first rows)."""
    out, prev, rank, n = {}, None, 0, 0
    for r in raw:
        if not r.ranked:
            continue
        n += 1
        code = r.sort_key[:18]
        if code != prev:
            rank, prev = n, code
        out[r.grp] = rank
    return out


def _normalise_draws(x: np.ndarray, c: dict) -> np.ndarray:
    """`normalise.normalise` on an array of draws."""
    if c.get("by_magnitude"):
        lo = -1.0 if c.get("lower") is None else c["lower"]
        hi = 1.0 if c.get("upper") is None else c["upper"]
        span = max(abs(lo), abs(hi)) or 1.0
        return np.minimum(1.0, 1.0 - np.abs(x) / span)
    if c["perfect"] == c["chance"]:
        return np.full_like(x, np.nan)
    return np.minimum(1.0, (x - c["chance"]) / (c["perfect"] - c["chance"]))


def _mean_draws(r, cols: list[dict], per_col: list[dict]) -> np.ndarray | None:
    """B draws of a row's mean, or None when a cell of its mean has no draws."""
    parts = []
    for c, draws in zip(cols, per_col):
        cell = (r.cells_json or {}).get(c["key"])
        if cell is None or cell[5] is None:
            continue
        d = draws.get(cell[0])
        if d is None:
            return None
        parts.append(d)
    if not parts:
        return None
    return np.mean(np.stack(parts, axis=1), axis=1)


# -- every row -----------------------------------------------------------------------------------
def modality_rows(session: Session, modality: str, kind: str, split: str, *,
                  chunk: int = 1000):
    """Every row of a modality board (baselines where their mean puts them), best first, in
    keyset chunks (the CSV export); intervals for the rows `board_stats` covers."""
    _check(session, modality, kind, split, 1, None)
    mb = _board_row(session, modality, kind, split)
    if mb is None:
        return
    cols = list(mb.columns_json or [])
    stats = board_stats(session, modality, kind, split)
    last = None
    prev_code, prev_rank, n = None, 0, 0
    while True:
        q = _rows_query(mb.id)
        if last is not None:
            q = q.where(ModalityStanding.sort_key > last)
        raw = session.execute(q.order_by(ModalityStanding.sort_key).limit(chunk)).all()
        for r in raw:
            rank = None
            if not r.is_baseline:
                n += 1
            if r.ranked:
                code = r.sort_key[:18]
                rank = prev_rank if code == prev_code else n
                prev_code, prev_rank = code, rank
            yield _row(r, cols, rank, stats)
        if len(raw) < chunk:
            return
        last = raw[-1].sort_key


__all__ = ["board_stats", "default_split", "modality_board", "modality_index",
           "modality_rows"]
