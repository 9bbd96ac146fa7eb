"""Image inspection speed: how fast `harness.inspect_tarball` reads a layer (not a test).

Inspection decompresses every layer (counting it against the image cap and hashing it against
the config's diff ids), at upload time in the web process and again on the GPU worker, so its
throughput bounds how long a large image takes to be accepted. The layer here is 256 MiB of
half random, half zero bytes (compressing to about half), gzip level 1 and zstd level 3.

    .venv/bin/python perf/bench_inspect.py [--mib 256] [--repeat 3]
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import zstandard

from harness import Limits, inspect_tarball
from tests.harness.images.savetar import layer_tar, write_save_tar


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    quarter = (args.mib << 20) // 4
    noise = os.urandom(quarter)
    tar = layer_tar({"blob": noise + bytes(quarter) + noise + bytes(quarter)})
    diff = "sha256:" + hashlib.sha256(tar).hexdigest()
    limits = Limits(tarball_bytes=4 << 30, image_bytes=4 << 30)
    compressors = {"gzip": lambda b: gzip.compress(b, 1),
                   "zstd": zstandard.ZstdCompressor(level=3).compress, "none": lambda b: b}
    with tempfile.TemporaryDirectory() as tmp:
        for name, compress in compressors.items():
            layer = compress(tar)
            path = write_save_tar(pathlib.Path(tmp) / f"{name}.tar", layers=[layer],
                                  config_overrides={"rootfs": {"type": "layers",
                                                               "diff_ids": [diff]}})
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                inspect_tarball(path, limits)
                times.append(time.perf_counter() - started)
            best = min(times)
            print(json.dumps({"compression": name, "layer_mib": round(len(tar) / 2**20),
                              "compressed_mib": round(len(layer) / 2**20), "best_s": round(best, 2),
                              "mib_per_s": round(len(tar) / 2**20 / best),
                              "load_average_1m": round(os.getloadavg()[0], 1)}))


if __name__ == "__main__":
    main()
