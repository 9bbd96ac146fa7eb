"""Time VCT² scoring at the paper's scale (165,573 rows with scores), CIs included.

Usage (from the repo root)::

    python perf/bench_vct2.py                  # score_block on an in-memory block
    python perf/bench_vct2.py --end-to-end     # + a large pack on disk, score_predictions

Prints wall seconds (best of ``--repeat``) and peak traced memory (tracemalloc) of the scoring
step alone. Targets: <= 0.3 s and <= 300 MB for score_block.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leaderboard.core.benchmarks.base import Block, ScoringContext, TaskSpec  # noqa: E402
from leaderboard.core.benchmarks.vct2 import SUBSET_GENERATORS, Vct2  # noqa: E402

PAIRS = {"COCO_AI": 10_017, "Twitter_AI": 15_909}


def paper_scale_block(seed: int = 0) -> Block:
    rng = np.random.default_rng(seed)
    subset, generator = [], []
    for name, n in PAIRS.items():
        for gen in ("", *SUBSET_GENERATORS[name]):
            subset += [name] * n
            generator += [gen] * n
    subset, generator = np.array(subset), np.array(generator)
    label = np.where(generator == "", "real", "fake")
    y = label == "fake"
    score = np.clip(np.where(y, 0.6, 0.4) + rng.normal(0, 0.25, len(y)), 0, 1)
    n = len(y)
    task = TaskSpec("detection", "detection", ("image",), "mean_accuracy")
    return Block(task, np.array([f"i{i}" for i in range(n)]), {},
                 {"label": label, "subset": subset, "generator": generator,
                  "vai": np.full(n, np.nan)},
                 {"label": np.full(n, -1, np.int8), "score": score, "decision": score >= 0.5,
                  "has_score": np.ones(n, bool)})


def timed(fn, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak, out


def end_to_end(repeat: int) -> None:
    from leaderboard.core.packs import load_pack
    from leaderboard.core.scoring import score_predictions
    from leaderboard.demo.vct2 import generate

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        pack = load_pack(generate(Path(tmp) / "vct2", scale="large"))
        split = "test"
        items, labels = pack.items(split), pack.labels(split)
        print(f"large pack written and compiled: {time.perf_counter() - t:.1f} s, "
              f"{len(items)} {split} rows")
        y = labels.decoded("label") == "fake"
        rng = np.random.default_rng(0)
        score = np.clip(np.where(y, 0.6, 0.4) + rng.normal(0, 0.25, len(y)), 0, 1)
        preds = Path(tmp) / "preds.jsonl"
        with open(preds, "w") as fh:
            for rid, s in zip(items.ids.tolist(), score.tolist()):
                fh.write(json.dumps({"id": rid, "score": round(s, 6)}) + "\n")
        secs, peak, result = timed(lambda: score_predictions(pack, split, preds), repeat)
        print(f"score_predictions ({split}: public, private, all; incl. parsing the file): "
              f"{secs:.3f} s, peak {peak / 2**20:.0f} MB, {len(result.records)} records")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--end-to-end", action="store_true")
    args = ap.parse_args()
    block = paper_scale_block()
    bench = Vct2()
    secs, peak, records = timed(lambda: bench.score_block(block, ScoringContext(
        seed=0, n_resamples=1000)), args.repeat)
    head = next(r for r in records if r.metric == "mean_accuracy" and not r.slice)
    print(f"score_block: {len(block)} rows, {len(records)} records, best of {args.repeat}: "
          f"{secs:.3f} s, peak {peak / 2**20:.0f} MB (target <= 0.3 s, <= 300 MB); "
          f"mean accuracy {head.value:.4f} [{head.ci_low:.4f}, {head.ci_high:.4f}]")
    if args.end_to_end:
        end_to_end(max(1, args.repeat // 2))


if __name__ == "__main__":
    main()
