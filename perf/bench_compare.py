"""Cost of one paired comparison (issue 24): at most 1 s of CPU on the largest benchmark.

Usage (from the repo root)::

    python perf/bench_compare.py [--repeat 5] [--unbounded]

Outcome files are synthesized directly (building the 166,000-item VCT² pack takes minutes and
only its strata matter here), written with `leaderboard.server.services.outcome_store` into a
temporary data directory, and compared with the service's own computation
(`leaderboard.server.services.compare._compute`: read both files, plan the budget, every
slice's bootstrap and test; the cache is bypassed, so every run is a cache miss):

* ``vct2``: 166,000 items, VCT²'s headline (mean accuracy over subset x generator cells, model
  ``cells``, 14 strata), one modality, so two slices (overall, image) of 166,000 items each;
  0/1 correctness from a latent model (item difficulty shared, a skill per submission).
* ``syncred``: 80,000 items (the large demo pack's size), TPR at 5% FPR from scores (model
  ``tpr_at_fpr``, every item weighed one by one: the costliest model per item), two slices.

CPU seconds are process time with BLAS limited to one thread (as the service runs it), wall
seconds beside them; the median of ``--repeat`` runs. ``--unbounded`` also times what the same
comparison cost before the budget (every item, 1,000 resamples, item by item; SynCred's is
estimated from 100 resamples x 10, it would take tens of seconds).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leaderboard.core.benchmarks import vct2  # noqa: E402
from leaderboard.core.outcomes import Outcome  # noqa: E402
from leaderboard.core.rank_intervals import joint_draws  # noqa: E402
from leaderboard.server.services import compare as svc  # noqa: E402
from leaderboard.server.services import outcome_store  # noqa: E402

TARGET_CPU_S = 1.0


def _vct2(rng, n=166_000):
    n_gen = len(vct2.GENERATORS)
    fake = rng.random(n) < 0.5
    sub = rng.integers(0, 2, n)
    gen = np.where(fake, rng.integers(0, n_gen, n), n_gen)
    strata = (sub * (n_gen + 1) + gen).astype(np.int16)
    difficulty = rng.normal(0, 1, n)

    def one(skill):
        ok = (rng.normal(0, 0.7, n) + skill - difficulty) > 0
        return Outcome("detection", "mean_accuracy", "cells", ok, strata,
                       np.zeros(n, np.uint8), ("image",), {"n_gen": n_gen})
    info = {"tasks": [{"key": "detection", "headline": "mean_accuracy", "title": "Detection"}],
            "metrics": {"mean_accuracy": {"title": "Mean accuracy", "fmt": "pct",
                                          "higher_is_better": True}}}
    return info, one(0.6), one(0.7)


def _syncred(rng, n=80_000):
    y = (rng.random(n) < 0.5).astype(np.int16)
    difficulty = rng.normal(0, 1, n)

    def one(skill):
        score = 1 / (1 + np.exp(-(np.where(y == 1, 1, -1) * (skill - difficulty)
                                  + rng.normal(0, 0.5, n))))
        return Outcome("detection", "tpr_at_fpr_5", "tpr_at_fpr", score.astype(np.float32), y,
                       np.zeros(n, np.uint8), ("image",), {"max_fpr": 0.05, "scored": True})
    info = {"tasks": [{"key": "detection", "headline": "tpr_at_fpr_5", "title": "Detection"}],
            "metrics": {"tpr_at_fpr_5": {"title": "TPR at 5% FPR", "fmt": "pct",
                                         "higher_is_better": True}}}
    return info, one(1.0), one(1.1)


def _timed(fn):
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--unbounded", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(20261203)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DATA_DIR"] = tmp  # `intervals.data_dir` outside an app
        for name, make in (("vct2", _vct2), ("syncred", _syncred)):
            info, a, b = make(rng)
            info = {**info, "private_revealed": False, "title": name}
            outcome_store.write(tmp, 1, {"all": {"detection": a}})
            outcome_store.write(tmp, 2, {"all": {"detection": b}})
            runs = [_timed(lambda: svc._compute(info, "test", 1, 2)) for _ in range(args.repeat)]
            cpu = statistics.median(r[0] for r in runs)
            wall = statistics.median(r[1] for r in runs)
            body = runs[-1][2]
            s = body["tasks"][0]["slices"][0]
            print(f"{name}: {len(a):,} items, {len(body['tasks'][0]['slices'])} slices; "
                  f"median of {args.repeat}: {cpu:.3f} s CPU, {wall:.3f} s wall "
                  f"(target <= {TARGET_CPU_S} s CPU: {'met' if cpu <= TARGET_CPU_S else 'NOT met'}); "
                  f"resamples {s['resamples']}, bootstrap items {s['bootstrap_items']:,}, "
                  f"difference {s['difference']:+.4f} [{s['ci_low']:+.4f}, {s['ci_high']:+.4f}]")
            if args.unbounded:
                b_resamples = 1000 if a.model != "tpr_at_fpr" else 100
                c, w, (point, draws) = _timed(lambda: joint_draws([a, b], n_resamples=b_resamples))
                scale = 1000 / b_resamples
                d = draws[:, 0] - draws[:, 1]
                lo, hi = np.quantile(d, [0.025, 0.975])
                print(f"  unbounded (before issue 24), per slice: {c * scale:.2f} s CPU, "
                      f"{w * scale:.2f} s wall{' (estimated from 100 resamples)' if scale > 1 else ''}; "
                      f"difference {point[0] - point[1]:+.4f} [{lo:+.4f}, {hi:+.4f}]")


if __name__ == "__main__":
    main()
