"""UniAIDet: AI-generated image detection and localization over photos and artworks.

Paper: "UniAIDet" (seed 003): real photos (MSCOCO, NYTimes800k) and artworks (WikiArt, Danbooru)
against 20 generators in five families: holistic text-to-image and image-to-image, partial
inpainting, editing and deepfake (partial images carry a ground-truth mask of generated pixels).
Detection metrics follow section 4.1 / appendix B.1, Table 3 reports them per split (photo, art):

* ``accuracy`` = (TP + TN) / (TP + TN + FP + FN) (the paper's formula has a typo);
  ``f_acc`` = TP / (TP + FN); ``r_acc`` = TN / (TN + FP); ``average_precision`` (sklearn's AP,
  n/a unless every row has a score).
* ``miou``: mean IoU = |G ∩ P| / |G ∪ P| over partial-synthesis images only, on COCO RLE. A
  missing predicted mask is an empty mask (IoU 0). The submitted mask is used whatever the row's
  label says (a localizer's mask is its localization answer); masks on real or holistic images
  are ignored.
* Per family and per generator (the paper's figures 3-5 heat maps): ``f_acc`` and, for partial
  ones, ``miou``; overall and within each domain.
* ``art_minus_photo_f_acc`` / ``art_minus_photo_miou`` per generator and per family (figure 6):
  the art-split value minus the photo-split value.

95% CIs (fixed seed, items resampled within class): exact binomial draws for the count metrics
and the art-minus-photo f.Acc differences; per-item resampling for mIoU; AP resamples the sorted
scores (computed only up to `AP_CI_MAX_ROWS` rows, where it stays well under a second).
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
from leaderboard.core.metrics.bootstrap import (
    binomial_draws,
    bootstrap_mean_ci,
    bootstrap_ranking_ci,
    count_metric_cis,
    percentile_ci,
)
from leaderboard.core.metrics.masks import rle_iou
from leaderboard.core.metrics.ranking import average_precision
from leaderboard.core.records import MetricRecord

DOMAINS = ("photo", "art")
HOLISTIC = ("text-to-image", "image-to-image")
PARTIAL = ("inpainting", "editing", "deepfake")
FAMILIES = HOLISTIC + PARTIAL
#: section 3.2's generators, by family
GENERATORS = {
    "text-to-image": ("SD-1.5", "SDXL", "PixArt-Sigma", "FLUX.1-dev", "SD-3", "SD-3.5-Medium",
                      "SD-3.5-Large-Turbo", "Qwen-Image", "SeedDream"),
    "image-to-image": ("IP-Adapter",),
    "inpainting": ("SD2-Inpaint", "SD3-Inpaint", "SDXL-Inpaint", "DreamShaper-v8",
                   "Paint-By-Example"),
    "editing": ("Qwen-Image-Edit", "OmniGen-2", "SeedDream-Edit"),
    "deepfake": ("REFace", "CSCS"),
}
FAMILY_OF = {g: f for f, gs in GENERATORS.items() for g in gs}
AP_CI_MAX_ROWS = 20_000


@register
class UniAIDet(Benchmark):
    key = "uniaidet"
    title = "UniAIDet"
    kinds = {"detection": "detection"}
    item_fields = {
        "width": Field("int", ("*",), description="image width in pixels (mask size is [height, width])"),
        "height": Field("int", ("*",), description="image height in pixels"),
    }
    label_fields = {
        "label": Field("category", ("*",), ("fake", "real")),
        "domain": Field("category", ("*",), DOMAINS, "photo or art split"),
        "family": Field("category", (), FAMILIES, "generator family (fakes only)"),
        "generator": Field("category", (), tuple(FAMILY_OF), "generator (fakes only)"),
        "mask": Field("rle", (), description="generated pixels of a partial fake (COCO RLE)"),
    }
    metrics = {
        "accuracy": MetricSpec("Acc", True),
        "f_acc": MetricSpec("f.Acc", True, description="accuracy on generated images (TPR)"),
        "r_acc": MetricSpec("r.Acc", True, description="accuracy on real images (TNR)"),
        "average_precision": MetricSpec("AP", True),
        "miou": MetricSpec("mIoU", True, description="mean IoU over partial-synthesis images"),
        "art_minus_photo_f_acc": MetricSpec("f.Acc art - photo", True, fmt="signed", lower=-1.0),
        "art_minus_photo_miou": MetricSpec("mIoU art - photo", True, fmt="signed", lower=-1.0),
    }

    def extract(self, kind, text, options):
        return None  # detection rows carry label/score/mask; there is nothing to extract

    def score_block(self, block: Block, ctx: ScoringContext) -> list[MetricRecord]:
        task = block.task.key
        boot = {"n_resamples": ctx.n_resamples, "seed": ctx.seed}
        y = block.truth["label"] == "fake"
        dec = block.pred["decision"].astype(bool)
        score = block.pred["score"]
        scored = bool(len(y)) and bool(block.pred["has_score"].all())
        domain = block.truth["domain"]
        family = block.truth["family"] if "family" in block.truth else np.full(len(y), "")
        generator = block.truth["generator"] if "generator" in block.truth else np.full(len(y), "")
        iou = self._ious(block, y)
        partial = ~np.isnan(iou)
        out: list[MetricRecord] = []

        def rec(metric, sl, value, ci=(None, None), n=0):
            out.append(MetricRecord(task, metric, sl, value, ci[0], ci[1], n))

        def detection(sl, rows):
            t, p = y[rows], dec[rows]
            tp, fp = int((t & p).sum()), int((~t & p).sum())
            n_pos, n = int(t.sum()), int(rows.sum())
            cis = count_metric_cis(tp=tp, fp=fp, tn=n - n_pos - fp, fn=n_pos - tp,
                                   metrics=("accuracy", "recall", "real_accuracy"), **boot)
            rec("accuracy", sl, (tp + n - n_pos - fp) / n if n else None, cis["accuracy"], n)
            rec("f_acc", sl, tp / n_pos if n_pos else None, cis["recall"], n_pos)
            rec("r_acc", sl, (n - n_pos - fp) / (n - n_pos) if n > n_pos else None,
                cis["real_accuracy"], n - n_pos)
            if scored and n_pos:
                ci = (bootstrap_ranking_ci(metric="average_precision", y_true=t,
                                           y_score=score[rows], **boot)
                      if n <= AP_CI_MAX_ROWS else (None, None))
                rec("average_precision", sl, average_precision(y_true=t, y_score=score[rows]), ci, n)
            else:
                rec("average_precision", sl, None, n=n)
            miou(sl, rows)

        def miou(sl, rows):
            sel = rows & partial
            if sel.any():
                v = iou[sel]
                rec("miou", sl, float(v.mean()), bootstrap_mean_ci(v, **boot), int(sel.sum()))

        def f_acc(sl, rows):
            m = int((rows & y).sum())
            if m:
                k = int((rows & y & dec).sum())
                rec("f_acc", sl, k / m, percentile_ci(binomial_draws(n=[m], k=[k], **boot)[:, 0] / m), m)

        everything = np.ones(len(y), dtype=bool)
        detection({}, everything)
        if not scored:
            ctx.notes.append(f"{self.key}/{task}: AP is n/a: it needs a score on every row")
        for d in DOMAINS:
            if (domain == d).any():
                detection({"domain": d}, domain == d)
        for axis, col in (("family", family), ("generator", generator)):
            for value in sorted(set(col[y].tolist()) - {""}):
                rows = col == value
                for sl, sub in (({axis: value}, rows),
                                *(({"domain": d, axis: value}, rows & (domain == d)) for d in DOMAINS)):
                    if (sub & y).any():
                        f_acc(sl, sub)
                        miou(sl, sub)
                self._art_minus_photo(axis, value, rows, y, dec, iou, partial, domain, boot, rec)
        return out

    @staticmethod
    def _ious(block: Block, y: np.ndarray) -> np.ndarray:
        """Per-row IoU for partial fakes (rows with a ground-truth mask), NaN elsewhere."""
        iou = np.full(len(y), np.nan)
        gt = block.truth["mask"] if "mask" in block.truth else None
        if gt is None:
            return iou
        rows = [i for i, g in enumerate(gt.tolist()) if g is not None and y[i]]
        if not rows:
            return iou
        pred = block.pred["mask"] if "mask" in block.pred else np.full(len(y), None, dtype=object)
        # masks were checked against [height, width] when the pack and the predictions loaded
        iou[rows] = rle_iou(gt=[gt[i] for i in rows], pred=[pred[i] for i in rows],
                            assume_valid=True)
        return iou

    @staticmethod
    def _art_minus_photo(axis, value, rows, y, dec, iou, partial, domain, boot, rec) -> None:
        art, photo = rows & y & (domain == "art"), rows & y & (domain == "photo")
        if not (art.any() and photo.any()):
            return
        n = np.array([art.sum(), photo.sum()])
        k = np.array([(art & dec).sum(), (photo & dec).sum()])
        draws = binomial_draws(n=n, k=k, **boot) / n
        rec("art_minus_photo_f_acc", {axis: value}, k[0] / n[0] - k[1] / n[1],
            percentile_ci(draws[:, 0] - draws[:, 1]), int(n.sum()))
        a, p = art & partial, photo & partial
        if a.any() and p.any():
            rec("art_minus_photo_miou", {axis: value}, float(iou[a].mean() - iou[p].mean()),
                n=int(a.sum() + p.sum()))
