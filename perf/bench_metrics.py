"""Timing and peak memory of the metric library at paper scale (not a test).

    .venv/bin/python perf/bench_metrics.py [--repeat 5]

(i) VCT²-like scoring: 165,573 rows with scores; subsets COCO_AI (10,017 reals, 6 generators)
    and Twitter_AI (15,909 reals, 5 generators, no Midjourney). Per subset x generator (that
    generator's fakes with the subset's reals): accuracy, precision, recall (= f.Acc), r.Acc, AP,
    a 95% CI for accuracy; per subset the mean accuracy over generators and its CI.
    Target: <= 0.3 s in-process.
(ii) mIoU over 10,000 RLE mask pairs of 512 x 512. Target: <= 0.2 s. The masks are drawn from a
    pool of 500 random ellipses per side (encoding 20,000 fresh 512 x 512 masks would dominate the
    run); IoU work per item is the same whether a mask repeats or not (nothing is cached).

Data generation is excluded from the timings; the best of ``--repeat`` runs is reported, with the
tracemalloc peak of one run (numpy reports its buffers to tracemalloc).
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time
import tracemalloc

import numpy as np

# Run as a plain script from anywhere: make the repository root importable.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from leaderboard.core.metrics import bootstrap, classification, masks, ranking  # noqa: E402

SUBSETS = {"COCO_AI": 10_017, "Twitter_AI": 15_909}
GENERATORS = ["SD2.1", "SDXL", "SD3", "SD3.5", "DALL·E 3", "Midjourney"]


def make_vct2(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    subset, generator = [], []
    for s_idx, (name, n_real) in enumerate(SUBSETS.items()):
        gens = GENERATORS if name == "COCO_AI" else GENERATORS[:-1]
        subset.append(np.full(n_real * (len(gens) + 1), s_idx, dtype=np.int8))
        generator.append(np.repeat(np.arange(-1, len(gens), dtype=np.int8), n_real))  # -1 = real
    subset, generator = np.concatenate(subset), np.concatenate(generator)
    y_true = generator >= 0
    shift = np.where(y_true, 0.1 + 0.05 * generator, 0.0)
    score = np.clip(rng.normal(0.4 + shift, 0.2), 0.0, 1.0)
    return {"subset": subset, "generator": generator, "y_true": y_true, "score": score,
            "y_pred": score >= 0.5}


def score_vct2(d: dict[str, np.ndarray]) -> dict:
    """What the VCT² scorer computes, through the public metric API."""
    out = {}
    for s_idx, name in enumerate(SUBSETS):
        in_subset = d["subset"] == s_idx
        gen = d["generator"][in_subset]
        y_true, y_pred, score = d["y_true"][in_subset], d["y_pred"][in_subset], d["score"][in_subset]
        n_gen = int(gen.max()) + 1
        real = gen < 0
        # Sufficient statistics for every generator at once.
        tp = np.bincount(gen[~real], weights=y_pred[~real], minlength=n_gen).astype(np.int64)
        n_fake = np.bincount(gen[~real], minlength=n_gen)
        tn = int(np.count_nonzero(~y_pred[real]))
        fp = int(real.sum()) - tn
        rows = {}
        for g in range(n_gen):
            counts = dict(tp=int(tp[g]), fp=fp, tn=tn, fn=int(n_fake[g] - tp[g]))
            block = real | (gen == g)
            row = {m: float(classification.FROM_COUNTS[m](*counts.values()))
                   for m in ("accuracy", "precision", "recall", "real_accuracy")}
            row["average_precision"] = ranking.average_precision(y_true=y_true[block], y_score=score[block])
            row["accuracy_ci"] = bootstrap.count_metric_cis(**counts, metrics=["accuracy"])["accuracy"]
            rows[GENERATORS[g]] = row
        mean_acc = float(np.mean([r["accuracy"] for r in rows.values()]))
        mean_ci = bootstrap.shared_negatives_mean_ci(tp=tp, fn=n_fake - tp, tn=tn, fp=fp)
        out[name] = {"generators": rows, "mean_accuracy": mean_acc, "mean_accuracy_ci": mean_ci}
    return out


def make_masks(n: int, pool: int = 500, size: int = 512, seed: int = 0):
    """Ground-truth ellipses and predictions that are shifted, resized copies (or missing)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size]

    def ellipse(cy, cx, ry, rx):
        return masks.encode_mask(((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1.0)

    gt_pool, pred_pool = [], []
    for _ in range(pool):
        cy, cx = rng.integers(96, size - 96, 2)
        ry, rx = rng.integers(16, 96, 2)
        gt_pool.append(ellipse(cy, cx, ry, rx))
        dy, dx = rng.integers(-20, 21, 2)
        pred_pool.append(ellipse(cy + dy, cx + dx, ry * rng.uniform(0.7, 1.3), rx * rng.uniform(0.7, 1.3)))
    pick = rng.integers(0, pool, n)
    gt = [gt_pool[i] for i in pick]
    pred = [pred_pool[i] if rng.random() > 0.05 else None for i in pick]
    return gt, pred


def timed(fn, repeat: int):
    """(result, best wall seconds, best CPU seconds, tracemalloc peak bytes)."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, best_wall, best_cpu, peak


def ms(wall: float, cpu: float) -> str:
    return f"{wall * 1000:.1f} ms wall / {cpu * 1000:.1f} ms CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    data = make_vct2()
    result, wall, cpu, peak = timed(lambda: score_vct2(data), args.repeat)
    print(f"(i) VCT²-like scoring, {len(data['y_true']):,} rows: {ms(wall, cpu)} (target 300 ms), "
          f"peak {peak / 2**20:.1f} MiB")
    for name, sub in result.items():
        lo, hi = sub["mean_accuracy_ci"]
        print(f"    {name}: mean accuracy {sub['mean_accuracy']:.4f} [{lo:.4f}, {hi:.4f}]")
        for gen, row in sub["generators"].items():
            lo, hi = row["accuracy_ci"]
            print(f"      {gen:<11} acc {row['accuracy']:.4f} [{lo:.4f}, {hi:.4f}]  P {row['precision']:.4f}"
                  f"  R {row['recall']:.4f}  r.Acc {row['real_accuracy']:.4f}  AP {row['average_precision']:.4f}")

    gt, pred = make_masks(10_000)
    given = [p for p in pred if p is not None]
    miou, wall, cpu, peak = timed(lambda: masks.mean_iou(gt=gt, pred=pred, assume_valid=True), args.repeat)
    print(f"(ii) mIoU over {len(gt):,} RLE pairs of 512x512, masks validated at load: {ms(wall, cpu)} "
          f"(target 200 ms), peak {peak / 2**20:.1f} MiB, mIoU {miou:.4f}")
    _, wall, cpu, _ = timed(lambda: masks.validate_rles(gt + given), args.repeat)
    print(f"     validate_rles on the same {len(gt) + len(given):,} masks in one batch: {ms(wall, cpu)}")
    _, wall, cpu, _ = timed(lambda: [masks.validate_rle(m) for m in gt[:2000]], 1)
    print(f"     validate_rle one mask at a time: {wall / 2000 * 1e6:.0f} us wall per mask")
    _, wall, cpu, _ = timed(lambda: masks.mean_iou(gt=gt, pred=pred), args.repeat)
    print(f"     mIoU with validation inside rle_iou: {ms(wall, cpu)}")
    _, wall, cpu, _ = timed(lambda: bootstrap.bootstrap_mean_ci(masks.rle_iou(gt=gt, pred=pred, assume_valid=True)),
                            args.repeat)
    print(f"     mIoU + its bootstrap CI ({bootstrap.N_RESAMPLES} resamples): {ms(wall, cpu)}")

if __name__ == "__main__":
    main()
