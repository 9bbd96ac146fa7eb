"""Robustness track timings (issue 26; not a test).

    .venv/bin/python perf/bench_robustness.py [--items 40] [--run-items 20]

1. **Build throughput per suite**: every degradation at every level of ``images@1``,
   ``video@1`` and ``audio@1`` over ``--items`` demo files of each modality (64x64 PNGs,
   48x48 8-frame 8 fps MJPEG clips = 1 s each, 1 s 16 kHz WAVs), one process, as the build job
   does: images/s, seconds of video per second, seconds of audio per second.
2. **Added wall time of a robustness run** vs the clean run, through the real harness and
   Docker: a busybox detector that reads every media file it is given (sha256) runs once on the
   SynCred demo dev split (clean, 92 items), then over the combined inputs of 25 conditions x
   ``--run-items`` items (the server's `robustness_run` path: each invocation's fresh input
   with each item once, the runs, splitting the predictions back; 92 items are too few for
   25 x 20 in one invocation, so several). Target: added <= (sum of the conditions' items) x
   (the clean run's per-item time) + 1 s per invocation.
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from leaderboard.builders import degrade  # noqa: E402
from leaderboard.core.robustness.suites import SUITES  # noqa: E402
from leaderboard.demo import media  # noqa: E402

DETECTOR = r"""
set -e
cd /input
while IFS= read -r line; do
  id=$(echo "$line" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
  m=$(echo "$line" | sed -n 's/.*"media": *\["\([^"]*\)".*/\1/p')
  h=$(sha256sum "$m" | cut -c1-2)
  echo "{\"id\": \"$id\", \"score\": 0.5}" >> /output/predictions.jsonl
done < items.jsonl
"""


def build_throughput(n: int, tmp: pathlib.Path) -> None:
    files = {
        "image": ([media.image(tmp / f"i{k}.png", seed=k).read_bytes() for k in range(n)],
                  ".png", 1.0),
        "video": ([media.video(tmp / f"v{k}.avi", seed=k).read_bytes() for k in range(n)],
                  ".avi", 1.0),
        "audio": ([media.audio(tmp / f"a{k}.wav", seed=k, seconds=1.0, rate=16000).read_bytes()
                   for k in range(n)], ".wav", 1.0),
    }
    print(f"## build throughput ({n} files per modality, every degradation x 5 levels)")
    print("| suite | degradation | files/s | media s per s |")
    print("|---|---|---|---|")
    for suite in (s for s in SUITES.values() if s.version == "1"):
        blobs, suffix, seconds = files[suite.modality]
        total_t, total_f = 0.0, 0
        for d in suite.degradations:
            t0 = time.perf_counter()
            for level in range(1, 6):
                for k, data in enumerate(blobs):
                    degrade.apply(suite.modality, d.name, d.level(level), data, seed=k,
                                  suffix=suffix)
            dt = time.perf_counter() - t0
            total_t, total_f = total_t + dt, total_f + 5 * len(blobs)
            rate = 5 * len(blobs) / dt
            print(f"| {suite.ref} | {d.name} | {rate:.1f} | {rate * seconds:.1f} |")
        rate = total_f / total_t
        print(f"| **{suite.ref}** | all | **{rate:.1f}** | **{rate * seconds:.1f}** |")


def run_overhead(run_items: int, tmp: pathlib.Path, repeat: int) -> None:
    import docker

    from harness import Limits, run_submission
    from leaderboard.builders.copies import build_copies, plan_copies
    from leaderboard.core.robustness.layout import read_manifest
    from leaderboard.demo import generate
    from leaderboard.server.jobs.container_inputs import build_input_dir
    from leaderboard.server.jobs.robustness_run import (
        build_combined_input,
        collect_predictions,
        round_entries,
        write_condition_files,
    )
    from tests.harness.images.build import build_script_image
    from tests.robustness.conftest import set_plan

    pack = generate("syncred", tmp / "packs", scale="small", seed=0)
    set_plan(pack, {"items_per_condition": run_items})
    t0 = time.perf_counter()
    copies = build_copies(plan_copies(pack, "dev"), tmp / "copies")
    build_s = time.perf_counter() - t0
    manifest = read_manifest(copies)
    conds = len(manifest["conditions"])
    items = sum(c["items"] for c in manifest["conditions"])
    client = docker.from_env()
    image = build_script_image(client, tag="lb-bench-robust:detector", script=DETECTOR)
    limits = Limits(wall_s=600, memory_bytes=256 << 20, cpus=1.0, poll_s=0.05)
    clean_t, added_t = [], []
    try:
        for r in range(repeat):
            run = tmp / f"run{r}"
            cin = build_input_dir(pack, "dev", run / "clean-in")
            (run / "clean-out").mkdir()
            t = time.perf_counter()
            res = run_submission(client=client, image_id=image, input_dir=cin,
                                 output_dir=run / "clean-out", limits=limits, submission_id=1)
            clean_t.append(time.perf_counter() - t)
            assert res.ok, res.message
            t = time.perf_counter()
            rows: dict = {}
            for k, entries in enumerate(round_entries(copies, manifest)):
                mapping = build_combined_input(copies, entries, run / f"rob-in{k}")
                (run / f"rob-out{k}").mkdir()
                res = run_submission(client=client, image_id=image, input_dir=run / f"rob-in{k}",
                                     output_dir=run / f"rob-out{k}", limits=limits,
                                     submission_id=1)
                assert res.ok, res.message
                collect_predictions(res.predictions_path, mapping, rows)
            write_condition_files(rows, {c["split"] for c in manifest["conditions"]},
                                  run / "split")
            added_t.append(time.perf_counter() - t)
    finally:
        client.images.remove(image, force=True)
    clean, added = statistics.median(clean_t), statistics.median(added_t)
    per_item = clean / 92
    rounds = len(manifest["rounds"])
    target = items * per_item + rounds * 1.0
    print(f"\n## robustness run vs clean run (median of {repeat})")
    print(f"copies: {conds} conditions, {items} files in {rounds} invocations (each item once "
          f"per invocation), built in {build_s:.1f} s")
    print(f"clean run (92 items): {clean:.2f} s = {per_item * 1000:.1f} ms per item")
    print(f"added (input + run over {items} items + split): {added:.2f} s")
    print(f"target: <= {items} x {per_item * 1000:.1f} ms + {rounds} x 1 s = {target:.1f} s -> "
          f"{'met' if added <= target else 'NOT met'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--run-items", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-run", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lb-bench-robust-") as tmp:
        build_throughput(args.items, pathlib.Path(tmp))
        if not args.skip_run:
            run_overhead(args.run_items, pathlib.Path(tmp), args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
