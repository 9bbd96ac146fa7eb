"""Score a submission on the degraded copies: one record set per condition, plus the summaries.

Per condition (and the clean subset, level 0) the benchmark's own scorer runs unchanged
(`leaderboard.core.scoring.score_validated` on the condition's split of the copies), and its
overall records (``slice == {}``) are kept with the condition as their slice:
``{"modality": "image", "degradation": "jpeg", "level": "3"}``; the clean subset (every
modality's items) is ``{"degradation": "clean", "level": "0"}``.

Each condition degrades its own items (the copies' assignment: one condition per item per
invocation of the container, `subset.assign_conditions`), so a condition is compared with the
submission's clean predictions on *those* items: the paired reference. Summaries of each task's
headline metric, per modality suite, from one bootstrap over the modality's clean subset
(`assigned_draws`: one weight per item and resample, shared by the clean value, every
condition and its reference, so the CIs of differences carry the pairing):

* ``{"modality": m, "degradation": d, "level": l, "summary": "clean"}``: the clean predictions
  on that condition's items (its paired reference);
* ``{"modality": m, "degradation": d, "level": l, "summary": "drop"}``: that reference minus
  the condition's value, on the same items;
* ``{"modality": m, "summary": "clean"}``: the clean subset of modality m (level 0);
* ``{"modality": m, "degradation": d, "summary": "mean"}``: the mean over d's levels;
* ``{"modality": m, "summary": "worst"}``: the worst condition (lowest, or highest for
  lower-is-better metrics);
* ``{"modality": m, "summary": "drop"}``: the mean over conditions of their paired drops.

A positive drop is a loss whatever the metric's direction (for lower-is-better metrics it is
the condition's value minus the reference). Each CI is the 2.5th-97.5th percentile of that
quantity over 1,000 resamples. A condition whose predictions are invalid gets no record (a note says why) and is left out of the summaries.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from leaderboard.core.errors import PredictionError
from leaderboard.core.outcomes import Outcome, evaluate
from leaderboard.core.packs import Pack, load_pack
from leaderboard.core.rank_intervals import poisson_weights, stratified_weights
from leaderboard.core.records import MetricRecord
from leaderboard.core.robustness.config import Condition
from leaderboard.core.robustness.layout import (
    CLEAN,
    condition_split,
    manifest_conditions,
    read_manifest,
)
from leaderboard.core.robustness.subset import take_rows
from leaderboard.core.table import Table

N_RESAMPLES = 1000
SEED = 20261203


@dataclass
class RobustnessResult:
    records: list[MetricRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: conditions scored (keys ``image-jpeg-3``; ``clean``), in manifest order
    scored: list[str] = field(default_factory=list)
    #: (task, modality) -> {"clean" or condition key: per-item `Outcome` of the headline}, for
    #: the board's rank intervals; never in `as_dict` (outcomes reveal labels)
    outcomes: dict[tuple[str, str], dict[str, Outcome]] = field(default_factory=dict)
    #: (task, modality) -> {condition key: positions of its items among the clean subset's}
    positions: dict[tuple[str, str], dict[str, np.ndarray]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"records": [r.as_dict() for r in self.records], "notes": self.notes,
                "scored": self.scored}


def condition_labels(source: Table, items: Table) -> Table:
    """The original split's labels ``source`` restricted to (and ordered as) ``items``."""
    try:
        rows = np.array([source.index[str(i)] for i in items.ids.tolist()], dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"item {exc.args[0]!r} of the copies is not in the original split") \
            from None
    return take_rows(source, rows)


def score_copies(copies: str | os.PathLike | Pack, predictions: dict[str, str | os.PathLike], *,
                 labels: Table | None = None, n_resamples: int = N_RESAMPLES
                 ) -> RobustnessResult:
    """Score ``predictions`` (condition split -> JSONL file) on the copies at ``copies``.

    ``labels``: the original split's compiled labels (the server's decrypted copy); default: each
    condition split's own ``labels.jsonl`` (a dev download). A condition without a file is
    skipped with a note; the clean split must be there.
    """
    from leaderboard.core.scoring import score_predictions

    pack = copies if isinstance(copies, Pack) else load_pack(copies)
    manifest = read_manifest(pack.root)
    split = manifest["split"]
    out = RobustnessResult()
    outcomes: dict[str, dict[str, Outcome]] = {}
    entries = [(None, condition_split(split, None))]
    entries += [(c, condition_split(split, c)) for c in manifest_conditions(manifest)]
    for cond, name in entries:
        key = CLEAN if cond is None else cond.key
        path = predictions.get(name)
        if path is None:
            if cond is None:
                raise ValueError(f"no predictions for the clean subset {name!r}")
            out.notes.append(f"{key}: no predictions")
            continue
        truth = None if labels is None else condition_labels(labels, pack.items(name))
        try:
            result = score_predictions(pack, name, path, labels=truth, seed=0,
                                       n_resamples=n_resamples)
        except PredictionError as err:
            if cond is None:
                raise
            out.notes.append(f"{key}: invalid predictions ({err.message})")
            continue
        the_slice = {"degradation": CLEAN, "level": "0"} if cond is None else cond.slice()
        for r in result.parts.get("all", []):
            if r.slice == {}:
                out.records.append(MetricRecord(r.task, r.metric, the_slice, r.value, r.ci_low,
                                                r.ci_high, r.n, r.judge, r.metric_version))
        outcomes[key] = result.outcomes.get("all", {})
        out.scored.append(key)
    conds = [c for c in manifest_conditions(manifest) if c.key in outcomes]
    out.records.extend(summaries(pack, conds, outcomes, n_resamples=n_resamples,
                                 keep=out.outcomes, positions=out.positions))
    return out


def _on_modality(o: Outcome, modality: str) -> Outcome | None:
    """``o`` on one modality's rows, with its modality codes normalised (so fingerprints of the
    clean subset and a condition agree when their items do)."""
    mask = o.rows(modality)
    if mask is None:
        return None
    sub = o.subset(mask)
    return Outcome(sub.task, sub.metric, sub.model, sub.x, sub.strata,
                   np.zeros(len(sub.x), dtype=np.uint8), (modality,), sub.params, True,
                   sub.metric_version)


def _task_ids(pack: Pack, split: str, task: str, modality: str) -> np.ndarray:
    """Ids of ``split``'s items of ``task`` and ``modality``, in the split's order: the rows of
    that task's `Outcome` on that modality (a block's rows are the split's, in order)."""
    items = pack.items(split)
    mask = (items.decoded("task") == task) & (items.decoded("modality") == modality)
    return items.ids[mask]


def positions_in(base_ids: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
    """Where each of ``ids`` is in ``base_ids`` (None when one is not there)."""
    index = {str(i): k for k, i in enumerate(base_ids.tolist())}
    try:
        return np.array([index[str(i)] for i in ids.tolist()], dtype=np.int64)
    except KeyError:
        return None


def assigned_draws(base: Outcome, series: list[tuple[Outcome, np.ndarray]], *,
                   n_resamples: int = N_RESAMPLES, seed: int = SEED, chunk: int = 100
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(point values R, resampled values B x R) of outcomes on *parts* of one item set.

    ``base`` is the outcome on every item (it sets the resampling: each class resampled with its
    size kept for a ranking metric, Poisson(1) weights per item otherwise, as
    `core.rank_intervals.joint_draws`); each of ``series`` is an outcome on the base items at
    its positions (in that order). One weight per base item and resample is shared by every
    series, so quantities across series (a paired drop, the worst condition, a mean over
    conditions on disjoint items) get joint resamples. Series that share positions are
    evaluated together.
    """
    n = len(base)
    groups: dict[bytes, list[int]] = {}
    for j, (o, pos) in enumerate(series):
        if len(pos) != len(o) or (len(pos) and (pos.min() < 0 or pos.max() >= n)):
            raise ValueError(f"series {j}: positions do not fit the base's {n} items")
        groups.setdefault(np.asarray(pos, dtype=np.int64).tobytes(), []).append(j)

    def values(weights: np.ndarray) -> np.ndarray:
        out = np.empty((weights.shape[0], len(series)))
        for js in groups.values():
            pos = series[js[0]][1]
            out[:, js] = evaluate([series[j][0] for j in js], weights[:, pos])
        return out

    point = values(np.ones((1, n), dtype=np.float32))[0]
    rng = np.random.default_rng(seed)
    draws = np.empty((n_resamples, len(series)))
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        if base.model == "tpr_at_fpr":
            w = stratified_weights(base.strata, b, rng)
        else:
            w = poisson_weights(b, n, rng)
        draws[start:start + b] = values(w)
    return point, draws


def summaries(pack: Pack, conditions: list[Condition], outcomes: dict[str, dict[str, Outcome]],
              *, n_resamples: int = N_RESAMPLES, keep: dict | None = None,
              positions: dict | None = None) -> list[MetricRecord]:
    """The paired drop of every condition, and per modality the clean value, the mean per
    degradation, the worst case and the mean drop of each task's headline (module doc).

    ``keep`` receives the series the summaries came from ((task, modality) -> key -> Outcome,
    ``clean`` first: the clean subset of that modality) and ``positions`` each condition's
    positions among the clean subset's items ((task, modality) -> key -> array).
    """
    records: list[MetricRecord] = []
    clean = outcomes.get(CLEAN, {})
    split = read_manifest(pack.root)["split"]
    clean_split = condition_split(split, None)
    for task in pack.tasks:
        spec = pack.benchmark.metrics.get(task.headline)
        higher = True if spec is None else spec.higher_is_better
        sign = 1.0 if higher else -1.0
        for modality in sorted({c.modality for c in conditions}):
            base = clean.get(task.key)
            base = None if base is None else _on_modality(base, modality)
            if base is None:
                continue
            base_ids = _task_ids(pack, clean_split, task.key, modality)
            if len(base_ids) != len(base):
                continue  # the clean predictions did not cover this block
            mine, series = [], []
            for c in conditions:
                o = outcomes[c.key].get(task.key) if c.modality == modality else None
                o = None if o is None else _on_modality(o, modality)
                if o is None:
                    continue
                pos = positions_in(base_ids, _task_ids(pack, condition_split(split, c),
                                                       task.key, modality))
                if pos is None or len(pos) != len(o) or \
                        base.subset(pos).fingerprint() != o.fingerprint():
                    continue  # not the clean subset's items (should not happen)
                mine.append((c, o, pos))
            if not mine:
                continue
            if keep is not None:
                keep[(task.key, modality)] = {CLEAN: base, **{c.key: o for c, o, _ in mine}}
            if positions is not None:
                positions[(task.key, modality)] = {c.key: pos for c, _, pos in mine}
            # series: the clean subset, then per condition its clean items and its copies
            everything = [(base, np.arange(len(base)))]
            for _c, o, pos in mine:
                everything += [(base.subset(pos), pos), (o, pos)]
            point, draws = assigned_draws(base, everything, n_resamples=n_resamples)
            ref_p, ref_d = point[1::2], draws[:, 1::2]
            deg_p, deg_d = point[2::2], draws[:, 2::2]

            def rec(slice_: dict, p: float, d: np.ndarray, n: int) -> MetricRecord:
                d = d[np.isfinite(d)]
                lo, hi = (np.percentile(d, [2.5, 97.5]) if len(d) else (None, None))
                return MetricRecord(task.key, task.headline, slice_, p, lo, hi, n,
                                    None, base.metric_version)

            extra = {"modality": modality}
            records.append(rec({"summary": "clean", **extra}, float(point[0]), draws[:, 0],
                               len(base)))
            for j, (c, _o, pos) in enumerate(mine):
                at = c.slice()
                records.append(rec({**at, "summary": "clean"}, float(ref_p[j]), ref_d[:, j],
                                   len(pos)))
                records.append(rec({**at, "summary": "drop"}, sign * float(ref_p[j] - deg_p[j]),
                                   sign * (ref_d[:, j] - deg_d[:, j]), len(pos)))
            conds = [c for c, _, _ in mine]
            for deg in dict.fromkeys(c.degradation for c in conds):
                cols = [j for j, c in enumerate(conds) if c.degradation == deg]
                records.append(rec({"degradation": deg, "summary": "mean", **extra},
                                   float(np.mean(deg_p[cols])), deg_d[:, cols].mean(axis=1),
                                   len(base)))
            pick = np.min if higher else np.max
            records.append(rec({"summary": "worst", **extra}, float(pick(deg_p)),
                               pick(deg_d, axis=1), len(base)))
            records.append(rec({"summary": "drop", **extra},
                               sign * float(np.mean(ref_p - deg_p)),
                               sign * (ref_d - deg_d).mean(axis=1), len(base)))
    return records
