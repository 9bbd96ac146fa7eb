"""Cost of a board's rank intervals (issue 14): 1,000 ranked submissions, top 100 get intervals.

Usage (from the repo root)::

    python perf/bench_rank_intervals.py [--submissions 1000] [--repeat 3] [--packs DIR]

For the VCT² large demo pack's test split and LOKI's judgment task (large demo pack), it scores
one baseline to get the split's real strata (the outcome file the scoring job writes), then
writes ``--submissions`` synthetic outcome files into a temporary data directory: correctness
from a latent model (item difficulty shared by every submission, a skill per submission), so
submissions are correlated as real detectors are. Then it times what a board refresh adds,
`leaderboard.server.boards.intervals.board_intervals` on the ranked rows (reading the top 100
rows' files, 1,000 joint resamples, the rank counts): CPU seconds (process time, BLAS limited to
one thread as on the server), wall seconds, peak traced memory (tracemalloc, in a separate run;
numpy reports its buffers) and the process's peak RSS; and a cached board read (an in-process `BoardCache` hit:
the intervals are not recomputed). The "all" part is measured (the largest: every test item).

Targets: <= 2 s CPU and <= 500 MB per board refresh; board reads unchanged (cached).
"""
from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from leaderboard.core.baselines import write_baseline  # noqa: E402
from leaderboard.core.outcomes import Outcome  # noqa: E402
from leaderboard.core.packs import load_pack  # noqa: E402
from leaderboard.core.scoring import score_predictions  # noqa: E402
from leaderboard.server.boards.cache import BoardCache  # noqa: E402
from leaderboard.server.boards.intervals import TOP, board_intervals  # noqa: E402
from leaderboard.server.services import outcome_store  # noqa: E402

CASES = (("vct2", "detection"), ("loki", "judgment"))


def template(pack_dir: Path, task: str, tmp: Path) -> Outcome:
    pack = load_pack(pack_dir)
    preds = tmp / f"{pack.key}.jsonl"
    write_baseline(pack, "test", "random", preds, seed=0)
    return score_predictions(pack, "test", preds).outcomes["all"][task]


def synthesize(tpl: Outcome, n_subs: int, data_dir: Path, seed: int = 0) -> list[dict]:
    """Write ``n_subs`` outcome files like ``tpl``; returns the ranked board rows."""
    rng = np.random.default_rng(seed)
    n = len(tpl)
    difficulty = rng.normal(size=n).astype(np.float32)
    skill = np.sort(rng.uniform(-0.5, 1.5, n_subs))[::-1]
    values = []
    for sid, s in enumerate(skill, start=1):
        x = (s - difficulty + rng.normal(scale=1.0, size=n).astype(np.float32)) > 0
        o = Outcome(tpl.task, tpl.metric, tpl.model, x, tpl.strata, tpl.modality,
                    tpl.modalities, dict(tpl.params), True, tpl.metric_version)
        outcome_store.write(data_dir, sid, {"all": {tpl.task: o}})
        values.append((float(x.mean()), sid))
    values.sort(key=lambda v: (-v[0], v[1]))
    return [{"submission_id": sid, "rank": i + 1} for i, (_, sid) in enumerate(values)]


def measure(tpl: Outcome, rows: list[dict], data_dir: Path, repeat: int) -> dict:
    task = {"key": tpl.task, "headline": tpl.metric}
    kw = dict(task=task, part="all", slice_key="", primary=tpl.metric, higher_is_better=True,
              rows=rows, directory=data_dir)
    cpu, wall = [], []
    for _ in range(repeat):  # timed without tracemalloc (it slows every allocation)
        c0, w0 = time.process_time(), time.perf_counter()
        found = board_intervals(**kw)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    tracemalloc.start()
    board_intervals(**kw)
    peak = [tracemalloc.get_traced_memory()[1] / 2**20]
    tracemalloc.stop()
    cache = BoardCache(ttl_s=3600)
    cache.get_or_compute("bench", ("board",), lambda: {"rows": rows, "iv": board_intervals(**kw)})
    reads = 10_000
    r0 = time.perf_counter()
    for _ in range(reads):
        cache.get_or_compute("bench", ("board",), lambda: 1 / 0)  # a miss would raise
    read_us = (time.perf_counter() - r0) / reads * 1e6
    tied = sum(v["tied_first"] for v in found.values())
    widths = [v["hi"] - v["lo"] for v in found.values()]
    return {"cpu": cpu, "wall": wall, "peak": peak, "read_us": read_us, "rows": len(found),
            "tied": tied, "median_width": statistics.median(widths)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--submissions", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--packs", type=Path, default=None,
                    help="directory with large demo packs vct2/ and loki/ (made if absent)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        packs = args.packs or tmp / "packs"
        from leaderboard.demo import generate
        for key, task in CASES:
            if not (packs / key).exists():
                generate(key, packs, scale="large", seed=0)
            tpl = template(packs / key, task, tmp)
            data_dir = tmp / f"data-{key}"
            t0 = time.perf_counter()
            rows = synthesize(tpl, args.submissions, data_dir)
            write_s = time.perf_counter() - t0
            size = outcome_store.path_of(data_dir, 1).stat().st_size
            m = measure(tpl, rows, data_dir, args.repeat)
            print(f"{key}/{task}: {len(tpl):,} items, {args.submissions:,} ranked submissions, "
                  f"top {TOP} get intervals; outcome file {size / 1024:.0f} KiB "
                  f"(written at {write_s / args.submissions * 1000:.1f} ms each)")
            print(f"  board refresh (intervals): CPU {min(m['cpu']):.2f} s best / "
                  f"{statistics.median(m['cpu']):.2f} s median, wall {min(m['wall']):.2f} s, "
                  f"peak traced {max(m['peak']):.0f} MiB")
            print(f"  cached board read: {m['read_us']:.1f} us; rows with an interval "
                  f"{m['rows']}, tied for first {m['tied']}, median width {m['median_width']}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS {rss:.0f} MiB (pack generation and scoring included)")


if __name__ == "__main__":
    main()
