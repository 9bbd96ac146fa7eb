"""Modality boards, read side: one page (cached) is one indexed range of the maintained rows.

The rows, their order and the rule are `leaderboard.server.boards.modality_ledger`'s (kept in
the scoring transaction); a page reads its modality's board row (columns, counters), one range
of ``modality_standing`` in key order with the team names, the count of rows that rank strictly
above the page's first ranked row (its competition rank), and the baseline rows of the columns'
boards (through their index).
"""
from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.server.boards.cache import CROSS, get_cache
from leaderboard.server.boards.ledger import shown_cells
from leaderboard.server.boards.meta import MAX_PER_PAGE, modalities
from leaderboard.server.boards.modality_ledger import RULE
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import Submission, Team
from leaderboard.server.models.standings import ModalityBoard, ModalityStanding, Standing

#: the column fields a page shows (the rest is the ledger's bookkeeping)
_PUBLIC_COLUMN = ("key", "benchmark", "task", "split", "part", "slice_key", "metric", "title",
                  "metric_title", "higher_is_better", "by_magnitude", "arrow", "fmt", "lower",
                  "upper")


def _check(session: Session, modality: str, page: int, per_page: int | None) -> None:
    if modality not in modalities(session):
        raise NotFound(f"no modality {modality!r}; modalities: {modalities(session)}")
    if page < 1 or (per_page is not None and not 1 <= per_page <= MAX_PER_PAGE):
        raise ServiceError(f"page must be >= 1 and per_page in 1..{MAX_PER_PAGE}, got "
                           f"page={page!r}, per_page={per_page!r}")


def modality_board(session: Session, modality: str, *, page: int = 1,
                   per_page: int | None = None) -> dict:
    """One page of a modality board (cached with the boards).

    Returns {"modality", "columns", "rows", "baselines", "rule", "page", "per_page", "total",
    "ranked", "pages"}; each row {"rank" (None: not ranked), "team": {"id", "name"},
    "covered", "of" (columns), "ranked", "mean_score", "cells": {column key: {"submission_id",
    "value", "ci_low", "ci_high", "n", "normalised"}}}. ``per_page`` None: every row."""
    _check(session, modality, page, per_page)
    return get_cache().get_or_compute(CROSS, ("modality_page", modality, page, per_page),
                                      lambda: _page(session, modality, page, per_page))


def _board_row(session: Session, modality: str):
    return session.execute(select(ModalityBoard.id, ModalityBoard.rows, ModalityBoard.ranked,
                                  ModalityBoard.columns_json)
                           .where(ModalityBoard.modality == modality)).first()


def _rows_query(board_id: int):
    return (select(ModalityStanding.sort_key, ModalityStanding.grp, ModalityStanding.team_id,
                   Team.name, ModalityStanding.covered, ModalityStanding.ranked,
                   ModalityStanding.mean_score, ModalityStanding.cells_json)
            .outerjoin(Team, ModalityStanding.team_id == Team.id)
            .where(ModalityStanding.board_id == board_id))


def _row(r, cols: list[dict], rank: int | None) -> dict:
    name = r.name or (f"submission #{r.grp[2:]}" if r.grp.startswith("s:") else "")
    cells = {}
    for c in cols:
        cell = (r.cells_json or {}).get(c["key"])
        if cell is not None:
            sid, value, lo, hi, n, norm = cell
            cells[c["key"]] = {"submission_id": sid, "value": value, "ci_low": lo,
                               "ci_high": hi, "n": n, "normalised": norm}
    return {"rank": rank, "team": {"id": r.team_id, "name": name}, "covered": r.covered,
            "of": len(cols), "ranked": bool(r.ranked), "mean_score": r.mean_score,
            "cells": cells}


def _ranks(session: Session, board_id: int, raw: list, offset: int) -> list[int | None]:
    """Competition ranks of a page's rows (ranked rows come first in key order): equal means
    share a rank, the first ranked row counts the rows strictly above it; unranked: None."""
    out, prev_code, prev_rank = [], None, None
    for i, r in enumerate(raw):
        if not r.ranked:
            out.append(None)
            continue
        code = r.sort_key[:18]  # "0" + the mean's code
        if code == prev_code:
            rank = prev_rank
        elif prev_code is None:
            rank = 1 + session.scalar(select(func.count()).select_from(ModalityStanding).where(
                ModalityStanding.board_id == board_id, ModalityStanding.sort_key < code))
        else:
            rank = offset + i + 1
        out.append(rank)
        prev_code, prev_rank = code, rank
    return out


def _public_columns(cols: list[dict]) -> list[dict]:
    return [{k: c.get(k) for k in _PUBLIC_COLUMN} for c in cols]


def _page(session: Session, modality: str, page: int, per_page: int | None) -> dict:
    mb = _board_row(session, modality)
    cols = list(mb.columns_json or []) if mb else []
    base = {"modality": modality, "columns": _public_columns(cols), "rule": RULE,
            "page": page, "per_page": per_page, "baselines": _baselines(session, cols)}
    if mb is None:
        return {**base, "rows": [], "total": 0, "ranked": 0, "pages": 1}
    offset = 0 if per_page is None else (page - 1) * per_page
    q = _rows_query(mb.id).order_by(ModalityStanding.sort_key)
    if per_page is not None:
        q = q.offset(offset).limit(per_page)
    raw = session.execute(q).all()
    ranks = _ranks(session, mb.id, raw, offset)
    rows = [_row(r, cols, rank) for r, rank in zip(raw, ranks)]
    pages = 1 if per_page is None else max(1, -(-mb.rows // per_page))
    return {**base, "rows": rows, "total": mb.rows, "ranked": mb.ranked, "pages": pages}


def _baselines(session: Session, cols: list[dict]) -> list[dict]:
    """Baseline rows by kind, one cell per column where the kind has a row (unranked)."""
    col_of = {c["board_id"]: c for c in cols if c.get("board_id") is not None}
    if not col_of:
        return []
    found: dict[str, dict] = {}
    for bid, sid, kind, cells in session.execute(
            select(Standing.board_id, Standing.submission_id, Submission.baseline_kind,
                   Standing.cells_json)
            .join(Submission, Standing.submission_id == Submission.id)
            .where(Standing.board_id.in_(list(col_of)), Standing.is_baseline.is_(True),
                   Standing.rep_key.is_not(None))
            .order_by(Standing.board_id, Standing.rep_key)):
        c = col_of[bid]
        cell = shown_cells(cells, c["judge"]).get(c["metric"])
        found.setdefault(kind or "baseline", {}).setdefault(c["key"], {
            "submission_id": sid, "value": cell[0] if cell else None,
            "ci_low": cell[1] if cell else None, "ci_high": cell[2] if cell else None,
            "n": (cell[3] or 0) if cell else 0})
    return [{"kind": k, "cells": v} for k, v in sorted(found.items())]


def modality_rows(session: Session, modality: str, *, chunk: int = 1000):
    """Every row of a modality board, best first, in keyset chunks (the CSV export)."""
    _check(session, modality, 1, None)
    mb = _board_row(session, modality)
    if mb is None:
        return
    cols = list(mb.columns_json or [])
    last = None
    prev_code, prev_rank, n = None, 0, 0
    while True:
        q = _rows_query(mb.id)
        if last is not None:
            q = q.where(ModalityStanding.sort_key > last)
        raw = session.execute(q.order_by(ModalityStanding.sort_key).limit(chunk)).all()
        for r in raw:
            n += 1
            rank = None
            if r.ranked:
                code = r.sort_key[:18]
                rank = prev_rank if code == prev_code else n
                prev_code, prev_rank = code, rank
            yield _row(r, cols, rank)
        if len(raw) < chunk:
            return
        last = raw[-1].sort_key


__all__ = ["modality_board", "modality_rows"]
