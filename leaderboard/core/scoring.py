"""Pack + predictions -> metric records: the one function the CLI, the server and the harness call.

`score_predictions` validates the file (`leaderboard.core.predictions`), then, for each task the file
covers, hands the benchmark module a `Block` of aligned columns and collects its records. On a
held-out split every submission is scored three times at once: on the ``public`` part (what the
board shows), the ``private`` part (revealed later) and ``all``.

Coverage rule: a task covered in only some of its modalities keeps only the records whose slice names
a modality, because an "overall" over a subset of modalities is not comparable with the others.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Callable, Iterator

import numpy as np

from leaderboard.core.benchmarks.base import Block, ScoringContext
from leaderboard.core.outcomes import block_outcome
from leaderboard.core.packs import HELD_OUT_SPLITS, Pack
from leaderboard.core.predictions import (
    PredictionSet,
    letters_of,
    selected_matrix,
    validate_predictions,
)
from leaderboard.core.records import MetricRecord, ScoreResult
from leaderboard.core.table import Table


class _Columns(Mapping):
    """Columns of a table restricted to some rows, decoded on first access."""

    def __init__(self, table: Table, rows: np.ndarray, skip: tuple[str, ...] = ()):
        self.table, self.rows = table, rows
        self.names = [n for n in table.columns if n not in skip]
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.names:
            raise KeyError(name)
        if name not in self._cache:
            col = self.table.columns[name]
            if col.type in ("text", "json", "rle"):  # decode only the rows we need
                out = np.empty(len(self.rows), dtype=object)
                for j, i in enumerate(self.rows.tolist()):
                    out[j] = self.table.value(name, i)
                self._cache[name] = out
            else:
                self._cache[name] = self.table.decoded(name)[self.rows]
        return self._cache[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


class _SubColumns(Mapping):
    """A row subset of another column mapping (for board parts), still lazy."""

    def __init__(self, base: Mapping, mask: np.ndarray):
        self.base, self.mask = base, mask
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._cache:
            self._cache[name] = self.base[name][self.mask]
        return self._cache[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.base)

    def __len__(self) -> int:
        return len(self.base)


def parts_of(split: str) -> tuple[str, ...]:
    return ("public", "private", "all") if split in HELD_OUT_SPLITS else ("all",)


def score_predictions(pack: Pack, split: str, predictions: str | os.PathLike | IO[bytes], *,
                      labels: Table | None = None, judge=None, seed: int = 0,
                      n_resamples: int = 1000,
                      progress: Callable[[int], None] | None = None) -> ScoreResult:
    """Validate ``predictions`` and score them on ``split``.

    ``labels``: the split's compiled hidden labels (the server passes its decrypted copy); default:
    the pack's own ``labels.jsonl``. ``judge``: a `leaderboard.judges` judge for metrics that read
    free text; without one those metrics are listed in ``ScoreResult.pending``.
    Raises `leaderboard.core.errors.PredictionError` for an invalid file.
    """
    preds = validate_predictions(pack, split, predictions, labels=labels, progress=progress)
    return score_validated(pack, split, preds, labels=labels, judge=judge, seed=seed,
                           n_resamples=n_resamples)


def score_validated(pack: Pack, split: str, preds: PredictionSet, *, labels: Table | None = None,
                    judge=None, seed: int = 0, n_resamples: int = 1000) -> ScoreResult:
    items = pack.items(split)
    truth = labels if labels is not None else pack.labels(split)
    result = ScoreResult(benchmark=pack.key, split=split)
    result.covered = [{"task": t, "modality": m} for t, m in preds.covered]
    bench = pack.benchmark
    ctx = ScoringContext(judge=judge, seed=seed, n_resamples=n_resamples,
                         extras={"pack_root": str(pack.root), **pack.meta.extras})
    part_col = truth.decoded("part") if "part" in truth.columns else None
    blocks = task_blocks(pack, split, preds, labels=truth)
    for part in parts_of(split):
        records: list[MetricRecord] = []
        ctx.pending, ctx.notes = [], []  # kept from the "all" pass only (it runs last)
        for task, block, complete in blocks:
            if part != "all":
                mask = part_col[_rows_of(items, block.ids)] == part
                if not mask.any():
                    continue
                block = Block(task, block.ids[mask], _SubColumns(block.item, mask),
                              _SubColumns(block.truth, mask),
                              {k: v[mask] for k, v in block.pred.items()}, block.letters)
            out = bench.score_block(block, ctx)
            outcome = block_outcome(pack.key, block, ctx)
            if outcome is not None:
                outcome.complete = complete
                result.outcomes.setdefault(part, {})[task.key] = outcome
            if not complete:
                out = [r for r in out if "modality" in r.slice]
            records.extend(out)
            result.curves.extend(_curves(task, block, part, complete))
        records.extend(bench.composite(records, ctx))
        result.parts[part] = records
    result.pending = list(ctx.pending)
    result.notes.extend(preds.notes)
    result.notes.extend(ctx.notes)
    if preds.unparsable:
        result.notes.append(f"{preds.unparsable} free-text answers could not be parsed; they "
                            "count as the benchmark page says (the authors' rule)")
    return result


def task_blocks(pack: Pack, split: str, preds: PredictionSet, *,
                labels: Table | None = None) -> list[tuple]:
    """``(task, block, complete)`` for every task ``preds`` covers, in the pack's task order:
    the rows of the covered modalities with item, truth and prediction columns aligned.
    ``complete``: every modality the split has items of is covered. What `score_validated`
    scores, and what error analysis reads (`leaderboard.core.error_analysis`)."""
    items = pack.items(split)
    truth = labels if labels is not None else pack.labels(split)
    if len(truth) != len(items) or not np.array_equal(truth.ids, items.ids):
        raise ValueError("labels are not aligned with the items of this split")
    task_col = items.decoded("task")
    modality = items.decoded("modality")
    blocks = []
    for task in pack.tasks:
        mods = [m for t, m in preds.covered if t == task.key]
        if not mods:
            continue
        rows = np.flatnonzero((task_col == task.key) & np.isin(modality, mods))
        pred = {k: v[rows] for k, v in preds.columns.items()
                if k != "selected_bits" and not k.startswith("answer_")}
        if f"answer_{task.kind}" in preds.columns:  # typed per kind: yes/no int8, letters <U1
            pred["answer"] = preds.columns[f"answer_{task.kind}"][rows]
        letters = ""
        if task.kind == "multiselect":
            letters = letters_of(pack, split, rows)
            pred["selected"] = selected_matrix(preds.columns["selected_bits"][rows], letters)
        block = Block(task, items.ids[rows], _Columns(items, rows, skip=("media",)),
                      _Columns(truth, rows), pred, letters)
        # complete = every modality this split has items of (a task may declare modalities a
        # release leaves empty; those cannot be covered and must not hide the overall number)
        present = set(modality[task_col == task.key].tolist())
        blocks.append((task, block, set(mods) >= present))
    return blocks


def _rows_of(items: Table, ids: np.ndarray) -> np.ndarray:
    index = items.index
    return np.fromiter((index[str(i)] for i in ids.tolist()), dtype=np.int64, count=len(ids))


def _curves(task, block: Block, part: str, complete: bool) -> list[dict]:
    """ROC and PR points for detection blocks where every row has a score (for plots).

    One pair for the whole task (only when every modality is covered, as for records) and, for
    tasks with several modalities, one pair per modality (slice ``{"modality": m}``).
    """
    if task.kind != "detection" or "has_score" not in block.pred \
            or not block.pred["has_score"].all() or "label" not in block.truth:
        return []
    from leaderboard.core.metrics.ranking import pr_points, roc_points

    y_all = block.truth["label"] == "fake"
    score_all = block.pred["score"]
    slices: list[tuple[dict, np.ndarray]] = []
    if complete:
        slices.append(({}, np.ones(len(y_all), dtype=bool)))
    if len(task.modalities) > 1:
        modality = block.item["modality"]
        slices += [({"modality": m}, modality == m) for m in sorted(set(modality.tolist()))]
    out = []
    for slice_, rows in slices:
        y_true, score = y_all[rows], score_all[rows]
        if y_true.all() or not y_true.any():
            continue
        for kind, fn in (("roc", roc_points), ("pr", pr_points)):
            pts = fn(y_true=y_true, y_score=score)
            if pts is None:
                continue
            out.append({"part": part, "task": task.key, "slice": slice_, "kind": kind,
                        "x": [round(float(v), 5) for v in pts.x],
                        "y": [round(float(v), 5) for v in pts.y]})
    return out
