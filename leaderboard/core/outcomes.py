"""Per-item outcomes of a task's headline metric, and the models that turn them into its value.

Rank intervals and paired comparisons (issue 14) resample *items*: the same resampled items for
every submission of a board. That needs, per submission and (part, task), what each item
contributed to the headline metric, kept at scoring time (labels are not at hand later). An
`Outcome` is that, in the least that recomputes the headline exactly:

* ``x``: one float32 per item. A 0/1 correctness for count metrics (accuracy; VCT² cells), the
  partial credit for LOKI's unreadable choice rows (1/#options) and TriDF's MCQ score, a per-item
  F0.5 for TriDF OEQ A, or the submitted score for SynCred's TPR(5) (a ranking metric that is
  not an item mean: it is recomputed on the resampled items).
* ``strata``: the resampling strata the metric's own CI uses (class for detection, VCT²'s
  subset x generator cells, one stratum otherwise). Resampling keeps each stratum's size.
* ``modality``: the item's modality (index into ``modalities``), so a modality board resamples
  that modality's items only.
* ``model``: how per-stratum sums become the value: ``mean`` (sum / n: LOKI, TriDF, UniAIDet
  accuracy), ``cells`` (VCT²'s unweighted mean over subset x generator cells of the accuracy on
  that generator's fakes plus the subset's reals) or ``tpr_at_fpr`` (SynCred's threshold sweep,
  `leaderboard.core.metrics.ranking.tpr_at_fpr`; labels-only rows: the one operating point).
* ``generator`` (optional, issue 37): the item's generator (index into ``generators``, -1 for
  an item with none, e.g. a real), kept when the block's labels carry a ``generator`` attribute,
  so the seen/unseen split and the detectors x generators matrix
  (`leaderboard.server.boards.generators`) evaluate the headline on a set of generators' items.
  It is not part of the fingerprint (the item set is the same) and older files simply lack it.

Per-item values come from the benchmark modules' own functions (``loki_closed.correctness``,
``choice.mcq_scores``, ``hallucination.artifact_scores``, ...), so the value an outcome gives
with every item weighted once equals the stored headline record (a test checks this for every
benchmark). LOKI's explanation score is the mean of the judge's per-item totals (0-100), read
from the ratings the scorer made. TriDF's TCS, a composite of several tasks' scores, has no
item-level form here; its board shows no rank interval.

Outcomes reveal labels (``strata`` is the class). They are written by the scoring job under the
data directory and never served (`leaderboard.server.services.outcome_store`).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

from leaderboard.core.benchmarks.base import Block, ScoringContext

#: bump when the stored arrays or a model's meaning change; older files are ignored
FORMAT_VERSION = "1"
MODELS = ("mean", "cells", "tpr_at_fpr")


@dataclass
class Outcome:
    """One submission's per-item outcomes of one task's headline metric on one part."""

    task: str
    metric: str
    model: str
    x: np.ndarray                      # float32, one per item
    strata: np.ndarray                 # int16, one per item
    modality: np.ndarray               # uint8 index into ``modalities``
    modalities: tuple[str, ...]
    params: dict = field(default_factory=dict)
    #: the whole task was covered (the overall slice exists); False: only some modalities
    complete: bool = True
    metric_version: str = "1"
    #: int16 per item: index into ``generators``, -1 for none; None when not recorded
    generator: np.ndarray | None = None
    generators: tuple[str, ...] = ()

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        self.x = np.asarray(self.x, dtype=np.float32)
        self.strata = np.asarray(self.strata, dtype=np.int16)
        self.modality = np.asarray(self.modality, dtype=np.uint8)
        if not (len(self.x) == len(self.strata) == len(self.modality)):
            raise ValueError("x, strata and modality must have one value per item")
        if self.generator is not None:
            self.generator = np.asarray(self.generator, dtype=np.int16)
            if len(self.generator) != len(self.x):
                raise ValueError("generator must have one value per item")

    def __len__(self) -> int:
        return len(self.x)

    @property
    def binary(self) -> bool:
        """Every item is 0 or 1 (an exact McNemar test applies to a plain ``mean``)."""
        return bool(np.isin(self.x, (0.0, 1.0)).all())

    def fingerprint(self) -> str:
        """Identifies the item set (strata, modalities, model): submissions compare only when
        their fingerprints agree, i.e. they were scored on the same items the same way."""
        if getattr(self, "_fingerprint", None) is not None:
            return self._fingerprint
        h = hashlib.sha256()
        for part in (self.task, self.metric, self.model, FORMAT_VERSION, self.metric_version,
                     json.dumps(self.params, sort_keys=True), ",".join(self.modalities)):
            h.update(part.encode() + b"\0")
        h.update(self.strata.tobytes())
        h.update(self.modality.tobytes())
        self._fingerprint = h.hexdigest()[:24]
        return self._fingerprint

    def rows(self, modality: str | None) -> np.ndarray | None:
        """Row mask of one modality (None: every row); None when it has no such row."""
        if modality is None:
            return np.ones(len(self), dtype=bool)
        if modality not in self.modalities:
            return None
        mask = self.modality == self.modalities.index(modality)
        return mask if mask.any() else None

    def subset(self, mask: np.ndarray) -> "Outcome":
        return Outcome(self.task, self.metric, self.model, self.x[mask], self.strata[mask],
                       self.modality[mask], self.modalities, dict(self.params), self.complete,
                       self.metric_version,
                       None if self.generator is None else self.generator[mask],
                       self.generators)

    def generator_rows(self, keys) -> np.ndarray | None:
        """Row mask of the items of the generators ``keys`` plus every item with no generator
        (the reals a detection metric needs) of the modalities those items have (a text
        generator's slice holds no real image); None when no generator is recorded or none of
        ``keys`` has an item here."""
        if self.generator is None:
            return None
        codes = [i for i, g in enumerate(self.generators) if g in set(keys)]
        mine = np.isin(self.generator, codes)
        if not mine.any():
            return None
        reals = (self.generator < 0) & np.isin(self.modality, np.unique(self.modality[mine]))
        return mine | reals

    # -- (de)serialisation: flat arrays, no pickle -----------------------------------------------
    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        meta = {"task": self.task, "metric": self.metric, "model": self.model,
                "modalities": list(self.modalities), "params": self.params,
                "complete": self.complete, "metric_version": self.metric_version}
        out = {f"{prefix}meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
               f"{prefix}strata": self.strata, f"{prefix}modality": self.modality}
        if self.generator is not None:
            meta["generators"] = list(self.generators)
            out[f"{prefix}meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
            out[f"{prefix}generator"] = self.generator
        if self.binary:  # a bit per item: 115,770 VCT² items take 14 KB
            out[f"{prefix}bits"] = np.packbits(self.x.astype(bool))
        else:
            out[f"{prefix}x"] = self.x
        return out

    @classmethod
    def from_arrays(cls, arrays, prefix: str) -> "Outcome":
        meta = json.loads(bytes(arrays[f"{prefix}meta"]).decode())
        strata = arrays[f"{prefix}strata"]
        if f"{prefix}bits" in arrays:
            x = np.unpackbits(arrays[f"{prefix}bits"], count=len(strata)).astype(np.float32)
        else:
            x = arrays[f"{prefix}x"]
        gen = arrays.get(f"{prefix}generator") if hasattr(arrays, "get") else None
        return cls(meta["task"], meta["metric"], meta["model"], x, strata,
                   arrays[f"{prefix}modality"], tuple(meta["modalities"]), meta["params"],
                   bool(meta["complete"]), meta["metric_version"], gen,
                   tuple(meta.get("generators", ())))


# -- evaluating a model on weighted items ---------------------------------------------------------
def evaluate(outcomes: list[Outcome], weights: np.ndarray) -> np.ndarray:
    """The headline value of every outcome under item ``weights`` (B x n multiplicities).

    All outcomes must share one item set (`Outcome.fingerprint`). Returns B x R float64 values.
    Weights of ones give the point values. A stratum left empty makes the value NaN.
    """
    first = outcomes[0]
    weights = np.asarray(weights, dtype=np.float32)
    if weights.ndim != 2 or weights.shape[1] != len(first):
        raise ValueError(f"weights must be B x {len(first)}, got {weights.shape}")
    if first.model == "tpr_at_fpr":
        return _tpr_at_fpr(outcomes, weights)
    X = np.stack([o.x for o in outcomes], axis=1)          # n x R, float32
    sums, sizes = {}, {}
    for c in np.unique(first.strata).tolist():
        rows = first.strata == c
        sums[c] = (weights[:, rows] @ X[rows]).astype(np.float64)        # B x R
        sizes[c] = weights[:, rows].sum(axis=1, dtype=np.float64)[:, None]
    return combine(first, sums, sizes)


def combine(first: Outcome, sums: dict, sizes: dict) -> np.ndarray:
    """A linear model's value from per-stratum sums of ``x`` (B x R each) and stratum sizes.

    ``mean``: total / size. ``cells`` (VCT², `vct2.Vct2.score_block`): the mean over (subset,
    generator) of (hits on its fakes + hits on the subset's reals) / (their sizes), over cells
    with fakes whose subset has reals.
    """
    if first.model == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            return sum(sums.values()) / sum(sizes.values())
    n_gen = int(first.params["n_gen"])
    codes = sorted(sums)
    pairs = [(c, c - c % (n_gen + 1) + n_gen) for c in codes if c % (n_gen + 1) != n_gen]
    pairs = [(f, r) for f, r in pairs if r in sums]
    if not pairs:
        shape = next(iter(sums.values())).shape if sums else (1, 1)
        return np.full(shape, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        cells = [(sums[f] + sums[r]) / (sizes[f] + sizes[r]) for f, r in pairs]
    return np.mean(cells, axis=0)


def _tpr_at_fpr(outcomes: list[Outcome], weights: np.ndarray) -> np.ndarray:
    """SynCred TPR(lambda) under weights: the sweep over each row's scores (one sort per row,
    weighted cumulative TP/FP at each distinct score), or the labels-only operating point."""
    from leaderboard.core.metrics.ranking import sort_order, tpr_at_fpr_from_curve

    first = outcomes[0]
    lam = float(first.params["max_fpr"])
    y = first.strata == 1
    n_pos = weights[:, y].sum(axis=1, dtype=np.float64)
    n_neg = weights[:, ~y].sum(axis=1, dtype=np.float64)
    out = np.empty((weights.shape[0], len(outcomes)))
    for j, o in enumerate(outcomes):
        if o.params.get("scored"):
            order, last = sort_order(o.x)
            w = weights[:, order]
            yo = y[order]
            tps = np.cumsum(np.where(yo, w, 0), axis=1, dtype=np.float64)[:, last]
            fps = np.cumsum(np.where(yo, 0, w), axis=1, dtype=np.float64)[:, last]
            out[:, j] = tpr_at_fpr_from_curve(tps, fps, n_pos=n_pos, n_neg=n_neg, max_fpr=lam)
        else:
            flagged = o.x > 0.5
            tp = weights[:, y & flagged].sum(axis=1, dtype=np.float64)
            fp = weights[:, ~y & flagged].sum(axis=1, dtype=np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, j] = np.where(fp / n_neg <= lam, tp / n_pos, 0.0)
                out[(n_pos == 0) | (n_neg == 0), j] = np.nan
    return out


def point_value(outcome: Outcome) -> float:
    return float(evaluate([outcome], np.ones((1, len(outcome)), dtype=np.float32))[0, 0])


# -- building outcomes from a scored block ----------------------------------------------------------
def _modality_codes(block: Block) -> tuple[np.ndarray, tuple[str, ...]]:
    modality = block.item["modality"].astype(str)
    names = tuple(sorted(set(modality.tolist())))
    codes = np.zeros(len(block), dtype=np.uint8)
    for i, m in enumerate(names):
        codes[modality == m] = i
    return codes, names


def _make(block: Block, metric: str, model: str, x, strata=None, *, keep=None, params=None,
          version: str = "1") -> Outcome:
    codes, names = _modality_codes(block)
    x = np.asarray(x, dtype=np.float32)
    strata = np.zeros(len(block), dtype=np.int16) if strata is None else strata
    if keep is not None:
        x, strata, codes = x[keep], np.asarray(strata)[keep], codes[keep]
    out = Outcome(block.task.key, metric, model, x, strata, codes, names, params or {},
                  metric_version=version)
    out._kept = None if keep is None else np.asarray(keep)  # rows of ``block`` it holds
    return out


def block_outcome(benchmark_key: str, block: Block, ctx: ScoringContext) -> Outcome | None:
    """The per-item outcomes of ``block``'s headline metric; None when the headline has no
    item-level form here (judge-rated or composite) or the block is empty."""
    if len(block) == 0:
        return None
    fn = _BUILDERS.get(benchmark_key)
    return None if fn is None else _with_generator(fn(block, ctx), block)


def _with_generator(outcome: Outcome | None, block: Block) -> Outcome | None:
    """``outcome`` with each kept item's generator, when the block's labels name one.

    A builder that drops rows (``keep``: TriDF's MCQ, VCT²'s subset-less rows) records which
    (``_kept``), and the generator column is narrowed the same way. A real item (``label``
    "real") has no generator whatever its row says."""
    if outcome is None or "generator" not in block.truth:
        return outcome
    col = block.truth["generator"]
    names = np.array(["" if g is None else str(g) for g in col], dtype=object)
    if "label" in block.truth:
        names[np.asarray(block.truth["label"] == "real", dtype=bool)] = ""
    keep = getattr(outcome, "_kept", None)
    if keep is not None:
        names = names[keep]
    if len(names) != len(outcome):
        return outcome
    gens = tuple(sorted({g for g in names.tolist() if g}))
    index = {g: i for i, g in enumerate(gens)}
    outcome.generator = np.array([index.get(g, -1) for g in names.tolist()], dtype=np.int16)
    outcome.generators = gens
    return outcome


def _loki(block: Block, ctx: ScoringContext) -> Outcome | None:
    from leaderboard.core.benchmarks import loki_closed

    if block.task.key == "explanation":
        from leaderboard.core.benchmarks import loki

        ratings = loki.explanation_ratings(block, ctx)
        if ratings is None:
            return None  # needs a judge that was not given: no headline yet either
        return _make(block, "explanation_score", "mean", [r.total for r in ratings])
    return _make(block, "accuracy", "mean", loki_closed.correctness(block),
                 version=loki_closed.METRIC_VERSION)


def _tridf(block: Block, ctx: ScoringContext) -> Outcome | None:
    from leaderboard.core.benchmarks import tridf
    from leaderboard.core.metrics import choice, hallucination

    task = block.task.key
    if task == "tfq":
        ans = block.pred["answer"]
        truth = np.array([1 if a == "yes" else 0 for a in block.truth["answer"]], dtype=np.int8)
        return _make(block, "accuracy", "mean", (ans == truth) & (ans >= 0))
    if task == "mcq":
        raw = choice.mcq_scores(selected=block.pred["selected"],
                                correct=tridf._correct_matrix(block),
                                offered=tridf.offered_matrix(block))
        return _make(block, "mcq_score", "mean", raw, keep=~np.isnan(raw))
    if task == "oeq_b":
        called_fake, decided = tridf._decisions(block)
        ok = decided & (called_fake == (block.truth["label"] == "fake"))
        return _make(block, "accuracy", "mean", ok)
    if task == "oeq_a":
        mapped = tridf.mapped_artifacts(block, ctx)
        if mapped is None:
            return None  # needs a judge that was not given: no headline yet either
        counted = tridf._counted_columns(block)
        s = hallucination.artifact_scores(predicted=mapped[0] & counted,
                                          truth=block.truth["artifacts"].astype(bool) & counted,
                                          answered=np.ones(len(block), dtype=bool))
        f05 = np.asarray(s.f05, dtype=np.float64)
        # NaN where the truth has no annotated artifact: the same rows for every submission
        return _make(block, "f05", "mean", f05, keep=~np.isnan(f05))
    return None


def _detection_correct(block: Block) -> tuple[np.ndarray, np.ndarray]:
    y = block.truth["label"] == "fake"
    return y, block.pred["decision"].astype(bool) == y


def _uniaidet(block: Block, ctx: ScoringContext) -> Outcome:
    y, ok = _detection_correct(block)
    return _make(block, "accuracy", "mean", ok, y.astype(np.int16))


def _syncred(block: Block, ctx: ScoringContext) -> Outcome:
    from leaderboard.core.benchmarks.syncred import METRIC_VERSIONS

    y = block.truth["label"] == "fake"
    scored = bool(block.pred["has_score"].all())
    x = block.pred["score"] if scored else block.pred["decision"].astype(np.float32)
    return _make(block, "tpr_at_fpr_5", "tpr_at_fpr", x, y.astype(np.int16),
                 params={"max_fpr": 0.05, "scored": scored},
                 version=METRIC_VERSIONS["tpr_at_fpr_5"])


def _vct2(block: Block, ctx: ScoringContext) -> Outcome:
    from leaderboard.core.benchmarks import vct2

    y = block.truth["label"] == "fake"
    ok = vct2.decisions(block) == y  # the authors' rule: a tie at 0.5 without a label is real
    n_gen = len(vct2.GENERATORS)
    sub = vct2._codes(block.truth["subset"], vct2.SUBSETS, -1)
    gen = vct2._codes(block.truth["generator"], vct2.GENERATORS, n_gen)
    gen[~y] = n_gen
    cell = (np.maximum(sub, 0) * (n_gen + 1) + gen).astype(np.int16)
    return _make(block, "mean_accuracy", "cells", ok, cell, keep=sub >= 0,
                 params={"n_gen": n_gen}, version=vct2.METRIC_VERSIONS["mean_accuracy"])


_BUILDERS = {"loki": _loki, "tridf": _tridf, "uniaidet": _uniaidet, "syncred": _syncred,
             "vct2": _vct2}
