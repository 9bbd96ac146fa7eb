"""Harness overhead over a bare ``docker run --rm`` of the same image (not a test).

    bash scripts/start-docker.sh
    .venv/bin/python perf/bench_harness.py [--repeat 10]

Both sides run the same busybox image (``FROM scratch``, writes one prediction line and exits):
the bare side is ``docker run --rm --network none IMAGE`` through the CLI (and, to exclude the
CLI's own start-up, ``client.containers.run(..., remove=True)`` in-process), the harness side is
``run_submission`` with every limit on (inspection of the image, staging dir, log and memory
threads, /output polling, safe copy, removal). The median of ``--repeat`` runs is reported for
each; the differences are the overhead. Target: <= 0.5 s.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

# Run as a plain script from anywhere: make the repository root importable.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import docker  # noqa: E402

from harness import Limits, run_submission  # noqa: E402
from tests.harness.images.build import build_script_image  # noqa: E402
from tests.harness.images.scenarios import QUICK  # noqa: E402

TARGET_S = 0.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    client = docker.from_env()
    image_id = build_script_image(client, tag="lb-harness-bench:quick", script=QUICK)
    limits = Limits(wall_s=30, memory_bytes=256 << 20, cpus=1.0, pids=64, tmp_bytes=16 << 20,
                    shm_bytes=16 << 20, output_bytes=16 << 20)
    bare, sdk, harness = [], [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            input_dir, output_dir = pathlib.Path(tmp, "in"), pathlib.Path(tmp, "out")
            input_dir.mkdir()
            output_dir.mkdir()
            (input_dir / "items.jsonl").write_text('{"id": "a"}\n')
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                subprocess.run(["docker", "run", "--rm", "--network", "none", "-v", f"{tmp}/out:/output",
                                image_id], check=True, capture_output=True)
                bare.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                client.containers.run(image_id, network_mode="none", remove=True,
                                      volumes={f"{tmp}/out": {"bind": "/output", "mode": "rw"}})
                sdk.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                result = run_submission(client=client, image_id=image_id, input_dir=input_dir,
                                        output_dir=output_dir, limits=limits, submission_id="bench")
                harness.append(time.perf_counter() - t0)
                if not result.ok:
                    raise SystemExit(f"harness run failed: {result.reason}: {result.message}")
    finally:
        client.images.remove(image_id, force=True)
    b, s, h = statistics.median(bare), statistics.median(sdk), statistics.median(harness)
    print(f"bare docker run --rm  : median {b:.3f} s  (min {min(bare):.3f}, n={len(bare)})")
    print(f"bare SDK run(remove)  : median {s:.3f} s  (min {min(sdk):.3f}, n={len(sdk)})")
    print(f"harness run_submission: median {h:.3f} s  (min {min(harness):.3f}, n={len(harness)})")
    print(f"overhead vs CLI: {h - b:+.3f} s, vs SDK: {h - s:+.3f} s "
          f"(target <= {TARGET_S} s: {'met' if max(h - b, h - s) <= TARGET_S else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
