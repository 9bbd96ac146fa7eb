"""Score a submission on the degraded copies: one record set per condition, plus the summaries.

Per condition (and the clean subset, level 0) the benchmark's own scorer runs unchanged
(`leaderboard.core.scoring.score_validated` on the condition's split of the copies), and its
overall records (``slice == {}``) are kept with the condition as their slice:
``{"modality": "image", "degradation": "jpeg", "level": "3"}``; the clean subset (every
modality's items) is ``{"degradation": "clean", "level": "0"}``.

Summaries of each task's headline metric, per modality suite, from one joint bootstrap over the
subset's items (`leaderboard.core.rank_intervals.joint_draws`: the same resampled items for the
clean subset and every condition, so the CIs of differences carry the pairing):

* ``{"modality": m, "summary": "clean"}``: the clean subset of modality m (level 0);
* ``{"modality": m, "degradation": d, "summary": "mean"}``: the mean over d's levels;
* ``{"modality": m, "summary": "worst"}``: the worst condition (lowest, or highest for
  lower-is-better metrics);
* ``{"modality": m, "summary": "drop"}``: the clean value minus the mean over every condition
  (a positive drop is a loss whatever the metric's direction: for lower-is-better metrics it
  is mean - clean).

Each CI is the 2.5th-97.5th percentile of that quantity over 1,000 resamples. A condition whose
predictions are invalid gets no record (a note says why) and is left out of the summaries.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from leaderboard.core.errors import PredictionError
from leaderboard.core.outcomes import Outcome
from leaderboard.core.packs import Pack, load_pack
from leaderboard.core.rank_intervals import joint_draws
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
                                 keep=out.outcomes))
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


def summaries(pack: Pack, conditions: list[Condition], outcomes: dict[str, dict[str, Outcome]],
              *, n_resamples: int = N_RESAMPLES, keep: dict | None = None) -> list[MetricRecord]:
    """Mean per degradation, worst case and mean drop of each task's headline (module doc).
    ``keep`` receives the series each summary came from ((task, modality) -> key -> Outcome)."""
    records: list[MetricRecord] = []
    clean = outcomes.get(CLEAN, {})
    for task in pack.tasks:
        spec = pack.benchmark.metrics.get(task.headline)
        higher = True if spec is None else spec.higher_is_better
        for modality in sorted({c.modality for c in conditions}):
            mine = [c for c in conditions if c.modality == modality
                    and task.key in outcomes[c.key]]
            base = clean.get(task.key)
            base = None if base is None else _on_modality(base, modality)
            if not mine or base is None:
                continue
            series = [base] + [_on_modality(outcomes[c.key][task.key], modality) for c in mine]
            if any(s is None or s.fingerprint() != base.fingerprint() for s in series):
                continue  # not the same items (should not happen: one subset per modality)
            if keep is not None:
                keep[(task.key, modality)] = dict(zip([CLEAN] + [c.key for c in mine], series))
            point, draws = joint_draws(series, n_resamples=n_resamples, seed=SEED)
            n = len(base)

            def rec(slice_: dict, p: float, d: np.ndarray) -> MetricRecord:
                d = d[np.isfinite(d)]
                lo, hi = (np.percentile(d, [2.5, 97.5]) if len(d) else (None, None))
                return MetricRecord(task.key, task.headline, slice_, p, lo, hi, n,
                                    None, base.metric_version)

            extra = {"modality": modality}
            records.append(rec({"summary": "clean", **extra}, float(point[0]), draws[:, 0]))
            for deg in dict.fromkeys(c.degradation for c in mine):
                cols = [1 + i for i, c in enumerate(mine) if c.degradation == deg]
                records.append(rec({"degradation": deg, "summary": "mean", **extra},
                                   float(np.mean(point[cols])), draws[:, cols].mean(axis=1)))
            pick = np.min if higher else np.max
            records.append(rec({"summary": "worst", **extra}, float(pick(point[1:])),
                               pick(draws[:, 1:], axis=1)))
            sign = 1.0 if higher else -1.0
            records.append(rec({"summary": "drop", **extra},
                               sign * float(point[0] - np.mean(point[1:])),
                               sign * (draws[:, 0] - draws[:, 1:].mean(axis=1))))
    return records
