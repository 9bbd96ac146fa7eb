"""The toolkit teams install: size of the base install and wall time of its commands.

Usage (from the repo root)::

    python perf/bench_base_install.py [--repeat 5]

Builds the wheel, installs it with no extras into a fresh venv (dependencies from the configured
package index and pip's cache), then times, best of ``--repeat``: ``leaderboard score --help``
and scoring a random baseline on the small SynCred-Bench demo pack's dev and test splits (the
pack is generated with the full environment, as a team downloads it). Prints the venv size and
the distributions installed. Targets (issue 15): no server, judge or builder dependency; < 150 MB.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.distribution.base_venv import (  # noqa: E402
    build_wheel,
    clean_env,
    installed,
    make_base_venv,
    size_bytes,
)


def best_of(repeat: int, args: list[str]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True, env=clean_env(), cwd="/")
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from leaderboard.demo import generate

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        start = time.perf_counter()
        wheel = build_wheel(tmp / "dist")
        bin_dir = make_base_venv(wheel, tmp / "venv")
        setup_s = time.perf_counter() - start
        pack = generate("syncred", tmp / "packs", scale="small", seed=0)
        lb = str(bin_dir / "leaderboard")
        rows = [("leaderboard score --help", best_of(args.repeat, [lb, "score", "--help"]))]
        for split in ("dev", "test"):
            preds = tmp / f"{split}.jsonl"
            subprocess.run([lb, "baseline", "--pack", str(pack), "--split", split, "--kind",
                            "random", "--out", str(preds)], check=True, capture_output=True,
                           env=clean_env())
            rows.append((f"leaderboard score (SynCred small demo, {split})",
                         best_of(args.repeat, [lb, "score", "--pack", str(pack), "--split", split,
                                               "--predictions", str(preds)])))
        names = installed(bin_dir)
        print(f"wheel build + venv install: {setup_s:.1f} s (pip cache warm or cold as it is)")
        print(f"venv size: {size_bytes(tmp / 'venv') / 2**20:.1f} MiB")
        print("installed: " + ", ".join(f"{k}=={v}" for k, v in sorted(names.items())))
        for what, secs in rows:
            print(f"{what}: {secs:.3f} s (best of {args.repeat})")


if __name__ == "__main__":
    main()
