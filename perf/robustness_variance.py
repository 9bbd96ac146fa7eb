"""What the robustness design's "each item in one condition per invocation" costs in variance
(issue 36; not a test, not a timing: the numbers in docs/robustness.md come from here).

    .venv/bin/python perf/robustness_variance.py [--reps 20]

For a subset of n items and C = 25 conditions, two ways to keep every base item to one condition
per invocation of the container:

* **split the subset** (one invocation): each condition degrades n / C of the n items;
* **one item set per condition** (the copies' assignment: C x n distinct items in one invocation
  when the split has them, else C invocations over the same n items, one condition per item in
  each): each condition degrades n items.

Per design it prints the mean 95% CI width (1,000 bootstrap resamples, the scorer's own
`assigned_draws`, the drop paired with the clean predictions on the same items) of one
condition's drop and of the mean drop over all conditions, over ``--reps`` simulated detectors:
SynCred's TPR at 5% FPR on the demo dev split's labels (n = 92, 54 fake / 38 real) and at the
default plan's size (n = 100 per condition; 2,500 items), and an accuracy (LOKI, UniAIDet). The
detector: clean scores N(+1, 1) for fakes and N(-1, 1) for reals (squashed to [0, 1]); a
degradation shrinks the margin by 40% and adds N(0, 0.5) noise per item, so the true drop is
the same in every condition and design, and only the widths differ.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from leaderboard.core.outcomes import Outcome  # noqa: E402
from leaderboard.core.robustness.scoring import assigned_draws  # noqa: E402
from leaderboard.core.robustness.subset import assign_conditions  # noqa: E402

C = 25


def demo_labels() -> np.ndarray:
    """1 = fake, for the SynCred demo dev split (the test packs' data)."""
    from leaderboard.core.packs import load_pack
    from leaderboard.demo import generate

    with tempfile.TemporaryDirectory() as tmp:
        pack = load_pack(generate("syncred", tmp, scale="small", seed=0))
        return (pack.labels("dev").decoded("label") == "fake").astype(np.int16)


def outcome(y: np.ndarray, x: np.ndarray, metric: str) -> Outcome:
    if metric == "tpr_at_fpr_5":
        return Outcome("detection", metric, "tpr_at_fpr", x.astype(np.float32), y,
                       np.zeros(len(y), np.uint8), ("image",),
                       {"max_fpr": 0.05, "scored": True})
    return Outcome("detection", metric, "mean", x.astype(np.float32), np.zeros(len(y), np.int16),
                   np.zeros(len(y), np.uint8), ("image",))


def simulate(y: np.ndarray, rng: np.random.Generator, metric: str):
    margin = np.where(y == 1, 1.0, -1.0) + rng.normal(0, 1, len(y))
    degraded = 0.6 * margin + rng.normal(0, 0.5, len(y))
    if metric == "tpr_at_fpr_5":
        return 1 / (1 + np.exp(-margin)), 1 / (1 + np.exp(-degraded))
    sign = np.where(y == 1, 1, -1)
    return (sign * margin > 0).astype(float), (sign * degraded > 0).astype(float)


def widths(y: np.ndarray, per_condition_items: int | None, metric: str, reps: int,
           seed: int) -> tuple[float, float, float]:
    """Mean CI width of one condition's drop and of the mean drop over C conditions, and the
    share of resamples in which one condition's drop is undefined (a class left empty).
    ``per_condition_items=None``: split the n items over the C conditions; else each condition
    degrades its own ``len(y)`` items (the clean reference scored on them)."""
    rng = np.random.default_rng(seed)
    one, mean, undefined = [], [], []
    for _ in range(reps):
        if per_condition_items is None:
            blocks = assign_conditions(y, C, 1, seed=int(rng.integers(1 << 30)),
                                       modality="image")[0]
            ys, pos = y, blocks
        else:  # C disjoint item sets of n (C x n distinct items), each its own condition
            ys = np.tile(y, C)
            pos = [np.arange(k * len(y), (k + 1) * len(y)) for k in range(C)]
        clean, deg = simulate(ys, rng, metric)
        base = outcome(ys, clean, metric)
        series = []
        for p in pos:
            series += [(outcome(ys[p], clean[p], metric), p), (outcome(ys[p], deg[p], metric), p)]
        _, draws = assigned_draws(base, series, n_resamples=1000,
                                  seed=int(rng.integers(1 << 30)))
        drops = draws[:, 0::2] - draws[:, 1::2]
        undefined.append(float(np.mean(~np.isfinite(drops[:, 0]))))
        lo, hi = np.nanpercentile(drops[:, 0], [2.5, 97.5])
        one.append(hi - lo)
        lo, hi = np.nanpercentile(np.nanmean(drops, axis=1), [2.5, 97.5])
        mean.append(hi - lo)
    return float(np.mean(one)), float(np.mean(mean)), float(np.mean(undefined))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    demo = demo_labels()
    paper = (np.arange(100) < 59).astype(np.int16)  # 100 per condition, the demo's class mix
    print("| data | metric | n | design | items per condition | CI width: one condition's "
          "drop | its resamples undefined | CI width: mean drop |")
    print("|---|---|---|---|---|---|---|---|")
    for name, y in (("demo dev", demo), ("default plan", paper)):
        for metric in ("tpr_at_fpr_5", "accuracy"):
            for design, per in (("split the subset, 1 invocation", None),
                                ("own items per condition", len(y))):
                k = f"{len(y) / C:.1f}" if per is None else str(len(y))
                w1, wm, nan = widths(y, per, metric, args.reps, seed=7)
                print(f"| {name} | {metric} | {len(y)} | {design} | {k} | {w1:.3f} | "
                      f"{nan:.0%} | {wm:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
