"""VCT² (Visual Counter Turing Test): zero-shot AI-generated image detection at scale, and the VAI.

Paper: "The Visual Counter Turing Test (VCT²)" (seed 004). Two subsets, each fake paired with its
subset's real image by caption: COCO_AI (10,017 captions x {real, SD 2.1, SDXL, SD3 Medium,
SD3.5 Large, DALL·E 3, Midjourney 6}) and Twitter_AI (15,909 x the same without Midjourney),
165,573 images. Tables 2-3 score each generator separately: that generator's fakes together with
the subset's reals.

Decision of a row (`decisions`): its ``label`` when given, else ``score > 0.5``: the authors'
``calculate_metrics(y_true, y_pred, 0.5)`` (``y_pred > thres``), so a score of exactly 0.5 is
real. ``metric_version`` "2" for every metric made from decisions (precision and its mean "3"):
version 1 called a tie fake (``score >= 0.5``, the project's rule where the authors have none).

Records (slices name ``subset`` and ``generator``):

* per subset x generator: ``accuracy``, ``precision``, ``recall`` (Tables 2-3's Acc, P, R), plus
  ``f_acc`` (= recall, the spec's name), ``r_acc`` (the subset's reals) and ``average_precision``
  (n/a unless every row has a score). Precision with no predicted fake is 0, as scikit-learn's
  ``precision_score`` (default ``zero_division``) and the authors' ``calculate_metrics``
  (``detection_scripts/universal_fake_detect_validate_sd35_new.py``) give it, so the means stay
  defined (since ``metric_version`` "2"; version 1 reported n/a and so left the means n/a);
* ``mean_accuracy`` / ``mean_precision`` / ``mean_recall``: unweighted means over the generators
  of a subset, and over all subset x generator cells for the overall slice {} (the headline:
  the paper's 58.0% COCO_AI / 58.34% Twitter_AI are such means);
* Visual AI Index (section 5, `leaderboard.features.vai`), computed from the pack's images when the pack
  was built or prepared, never from submissions: ``vai_mean`` per generator and for the reals
  (generator "real"), ``vai_weight`` per feature, and ``vai_accuracy_pearson``: Pearson's rho of
  per-generator mean VAI with this submission's per-generator accuracy (paper: -0.532 COCO_AI,
  -0.503 Twitter_AI). Packs without media (large scale) have no VAI; a note says so.

95% CIs: exact binomial draws per stratum (each generator's fakes, each subset's reals), drawn
once per resample and shared by every cell and mean of the subset, since the reals are common to
all of its generators. AP has no CI: it would need a re-sort per resample of up to 95K rows.

Choice: ``caption`` (and ``pair``) are hidden labels. The caption reveals nothing about one image,
but it groups the 7 (or 6) images made from it, of which exactly one is real: a submission could
pick the most real-looking image of each group. The paper's detectors see single images.
"""
from __future__ import annotations

import numpy as np

from leaderboard.core.benchmarks.base import (
    Benchmark,
    Block,
    Field,
    MetricSpec,
    ScoringContext,
    register,
)
from leaderboard.core.metrics.bootstrap import binomial_draws, percentile_ci
from leaderboard.core.metrics.classification import FROM_COUNTS
from leaderboard.core.metrics.ranking import average_precision_from_curve, sort_order
from leaderboard.core.records import MetricRecord

SUBSETS = ("COCO_AI", "Twitter_AI")
GENERATORS = ("SD 2.1", "SDXL", "SD3 Medium", "SD3.5 Large", "DALL·E 3", "Midjourney 6")
#: generators of each subset (Midjourney blocked most Twitter prompts, Table 3)
SUBSET_GENERATORS = {"COCO_AI": GENERATORS, "Twitter_AI": GENERATORS[:-1]}
#: the authors' decision for a row without a label: ``y_pred > thres`` in ``calculate_metrics``
THRESHOLD = 0.5
#: metrics whose definition changed: issue 11, precision with no predicted fake is 0, not n/a
#: (precision "2"); issue 22, a score of exactly 0.5 without a label is real (every metric made
#: from decisions, one version up)
METRIC_VERSIONS = {"precision": "3", "mean_precision": "3", "accuracy": "2", "recall": "2",
                    "f_acc": "2", "r_acc": "2", "mean_accuracy": "2", "mean_recall": "2",
                    "vai_accuracy_pearson": "2"}
_CELL_METRICS = {"accuracy": "accuracy", "precision": "precision", "recall": "recall",
                 "f_acc": "recall", "r_acc": "real_accuracy"}


def decisions(block: Block) -> np.ndarray:
    """Called fake per row: the submitted ``label`` when given, else ``score > 0.5`` (the
    authors' rule: ``calculate_metrics`` thresholds ``y_pred > 0.5``, so a tie at 0.5 is real).

    >>> import numpy as np
    >>> from leaderboard.core.benchmarks.base import TaskSpec
    >>> pred = {"label": np.array([-1, -1, -1, 1], np.int8),
    ...         "score": np.array([0.5, 0.51, 0.2, 0.1])}
    >>> b = Block(TaskSpec("detection", "detection", ("image",), "mean_accuracy"),
    ...           np.array(["a", "b", "c", "d"]), {}, {}, pred)
    >>> decisions(b).tolist()
    [False, True, False, True]
    """
    n = len(block)
    label = block.pred.get("label")
    label = np.full(n, -1, dtype=np.int8) if label is None else np.asarray(label)
    score = block.pred.get("score")
    score = np.full(n, np.nan) if score is None else np.asarray(score, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(label >= 0, label == 1, score > THRESHOLD)


def _codes(col: np.ndarray, values: tuple[str, ...], missing: int) -> np.ndarray:
    """Integer codes of a decoded category column (one vectorized comparison per value)."""
    out = np.full(len(col), missing, dtype=np.int64)
    for i, v in enumerate(values):
        out[col == v] = i
    return out


@register
class Vct2(Benchmark):
    key = "vct2"
    title = "VCT²"
    kinds = {"detection": "detection"}
    item_fields: dict[str, Field] = {}
    label_fields = {
        "label": Field("category", ("*",), ("fake", "real")),
        "subset": Field("category", ("*",), SUBSETS),
        "generator": Field("category", (), GENERATORS, "text-to-image model (fakes only)"),
        "pair": Field("int", (), description="caption index within the subset"),
        "caption": Field("text", (), description="the caption (hidden: it groups a pair's images)"),
        "vai": Field("float", (), description="Visual AI Index of the image, p(real)"),
    }
    metrics = {
        "accuracy": MetricSpec("Acc", True),
        "precision": MetricSpec("P", True),
        "recall": MetricSpec("R", True),
        "f_acc": MetricSpec("f.Acc", True, description="= recall"),
        "r_acc": MetricSpec("r.Acc", True, description="accuracy on the subset's real images"),
        "average_precision": MetricSpec("AP", True),
        "mean_accuracy": MetricSpec("Mean Acc", True, description="mean over generators"),
        "mean_precision": MetricSpec("Mean P", True),
        "mean_recall": MetricSpec("Mean R", True),
        "vai_mean": MetricSpec("Mean VAI", True, fmt="num",
                               description="mean Visual AI Index (informational, image-derived)"),
        "vai_weight": MetricSpec("VAI weight", True, fmt="num", lower=None, upper=None,
                                 description="learned logistic weight of a feature"),
        "vai_accuracy_pearson": MetricSpec("rho(VAI, Acc)", True, fmt="signed", lower=-1.0,
                                           description="Pearson of per-generator VAI and accuracy"),
    }

    def extract(self, kind, text, options):
        return None  # detection rows carry label/score; there is nothing to extract

    def score_block(self, block: Block, ctx: ScoringContext) -> list[MetricRecord]:
        task = block.task.key
        out: list[MetricRecord] = []

        def rec(metric, sl, value, ci=(None, None), n=0):
            out.append(MetricRecord(task, metric, sl, value, ci[0], ci[1], n,
                                    metric_version=METRIC_VERSIONS.get(metric, "1")))

        y = block.truth["label"] == "fake"
        dec = decisions(block)
        n_gen = len(GENERATORS)
        sub = _codes(block.truth["subset"], SUBSETS, -1)
        gen = _codes(block.truth["generator"], GENERATORS, n_gen)
        gen[~y] = n_gen                          # reals share code n_gen within their subset
        ok = sub >= 0
        cell = np.where(ok, sub * (n_gen + 1) + gen, 0)
        size = len(SUBSETS) * (n_gen + 1)
        count = np.bincount(cell[ok], minlength=size).reshape(len(SUBSETS), n_gen + 1)
        hits = np.bincount(cell[ok & dec], minlength=size).reshape(len(SUBSETS), n_gen + 1)
        draws = binomial_draws(n=count.ravel(), k=hits.ravel(), n_resamples=ctx.n_resamples,
                               seed=ctx.seed).reshape(-1, len(SUBSETS), n_gen + 1)

        def cell_values(tp, n_fake, fp, n_real):
            tn = n_real - fp
            shape = np.broadcast_shapes(np.shape(tp), np.shape(fp))   # r.Acc has no generator axis
            out = {m: np.broadcast_to(np.asarray(FROM_COUNTS[f](tp, fp, tn, n_fake - tp), float),
                                      shape)
                   for m, f in _CELL_METRICS.items()}
            # no predicted fake: precision 0 (sklearn's zero_division default), never n/a
            out["precision"] = np.where(np.add(tp, fp) > 0, out["precision"], 0.0)
            return out

        scored = bool(len(y)) and bool(block.pred["has_score"].all())
        all_means: dict[str, list] = {"accuracy": [], "precision": [], "recall": []}
        per_subset_acc: dict[str, dict[str, float]] = {}
        for s, name in enumerate(SUBSETS):
            n_real, fp = int(count[s, n_gen]), int(hits[s, n_gen])
            gens = [g for g in range(n_gen) if count[s, g] > 0]
            if not gens or n_real == 0:
                continue
            # point values and resampled values of every cell of the subset at once
            point = cell_values(hits[s, gens], count[s, gens], fp, n_real)
            boot = cell_values(draws[:, s, gens], count[s, gens], draws[:, s, n_gen:], n_real)
            ap = self._subset_ap(block, y, sub == s, gen, gens) if scored else {}
            per_subset_acc[name] = {}
            for j, g in enumerate(gens):
                sl = {"subset": name, "generator": GENERATORS[g]}
                n = int(count[s, g]) + n_real
                for metric in _CELL_METRICS:
                    rec(metric, sl, float(point[metric][j]),
                        percentile_ci(boot[metric][:, j]), n)
                rec("average_precision", sl, ap.get(g), n=n)
                per_subset_acc[name][GENERATORS[g]] = float(point["accuracy"][j])
            n_sub = int(count[s].sum())
            for metric in all_means:
                all_means[metric].append((point[metric], boot[metric]))
                rec(f"mean_{metric}", {"subset": name}, float(np.mean(point[metric])),
                    percentile_ci(np.mean(boot[metric], axis=1)), n_sub)
        if not scored:
            ctx.notes.append(f"{self.key}/{task}: AP is n/a: it needs a score on every row")
        if all_means["accuracy"]:
            n_all = int(count.sum())
            for metric, parts in all_means.items():
                pts = np.concatenate([p for p, _ in parts])
                bts = np.concatenate([b for _, b in parts], axis=1)
                rec(f"mean_{metric}", {}, float(np.mean(pts)),
                    percentile_ci(np.mean(bts, axis=1)), n_all)
        self._vai_records(block, ctx, sub, gen, per_subset_acc, rec)
        return out

    @staticmethod
    def _subset_ap(block, y, in_subset, gen, gens) -> dict[int, float]:
        """AP of every generator of one subset from a single sort of the subset's scores.

        The subset's distinct thresholds include other generators' scores; at those points
        neither this cell's TP nor its recall changes, so they add nothing to the AP sum.
        """
        rows = np.flatnonzero(in_subset)
        order, last = sort_order(block.pred["score"][rows])
        g_sorted = gen[rows][order]
        real = ~y[rows][order]
        fps = np.cumsum(real)[last]
        out = {}
        for g in gens:
            tps = np.cumsum(g_sorted == g)[last]
            out[g] = float(average_precision_from_curve(tps, fps))
        return out

    def _vai_records(self, block, ctx, sub, gen, per_subset_acc, rec) -> None:
        vai = block.truth["vai"] if "vai" in block.truth else None
        if vai is None or np.isnan(vai).all():
            ctx.notes.append(f"{self.key}/{block.task.key}: no Visual AI Index in this pack (VAI is "
                             "computed from the images, and packs without media have none); VAI "
                             "records are omitted, not estimated")
            return
        n_gen = len(GENERATORS)
        models = (ctx.extras.get("vai") or {}).get("subsets", {})
        for s, name in enumerate(SUBSETS):
            xs, ys = [], []
            for g in range(n_gen + 1):
                rows = (sub == s) & (gen == g) & ~np.isnan(vai)
                if not rows.any():
                    continue
                label = GENERATORS[g] if g < n_gen else "real"
                mean = float(vai[rows].mean())
                rec("vai_mean", {"subset": name, "generator": label}, mean, n=int(rows.sum()))
                acc = per_subset_acc.get(name, {}).get(label)
                if acc is not None:
                    xs.append(mean)
                    ys.append(acc)
            if len(xs) >= 2 and np.std(xs) > 0 and np.std(ys) > 0:
                rec("vai_accuracy_pearson", {"subset": name}, float(np.corrcoef(xs, ys)[0, 1]),
                    n=len(xs))
            model = models.get(name)
            if model:
                for feature, w in zip(model["features"], model["weights"]):
                    rec("vai_weight", {"subset": name, "feature": feature}, float(w))
