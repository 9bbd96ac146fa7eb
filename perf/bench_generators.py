"""Seen/unseen generators and one matrix row at VCT²'s full size (issue 37).

One submission's outcome on 115,770 items (two subsets x six generators plus reals, VCT²'s
``cells`` model): the time `row_numbers` takes for its seen, unseen, gap and six cells with
1,000 resamples, the cost of one board row when the generators view is first read after a change.

    PYTHONPATH=$PWD python perf/bench_generators.py
"""
from __future__ import annotations

import datetime as dt
import time

import numpy as np

from leaderboard.core.outcomes import Outcome
from leaderboard.server.boards.generators import row_numbers


def main(n: int = 115_770, n_gen: int = 6, repeats: int = 5) -> None:
    rng = np.random.default_rng(0)
    sub, gen = rng.integers(0, 2, n), rng.integers(-1, n_gen, n)
    cell = (sub * (n_gen + 1) + np.where(gen < 0, n_gen, gen)).astype(np.int16)
    o = Outcome("detection", "mean_accuracy", "cells", rng.integers(0, 2, n), cell, np.zeros(n),
                ("image",), {"n_gen": n_gen}, generator=gen,
                generators=tuple(f"g{i}" for i in range(n_gen)))
    gens = [{"key": f"g{i}", "name": f"g{i}", "modality": "image", "date": f"202{i}-01-01"}
            for i in range(n_gen)]
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        row_numbers(o, gens, dt.date(2022, 6, 1))
        times.append(time.perf_counter() - t)
    print(f"row_numbers, {n:,} items x {n_gen} generators: median {np.median(times):.3f} s "
          f"(min {min(times):.3f}) over {repeats}")


if __name__ == "__main__":
    main()
