"""Validation of a large predictions file in flat memory (issue 2 target: 1 GB, peak <= 200 MB).

Builds the VCT²-scale demo pack (165,573 items, no media) unless --pack is given, writes a
predictions file of about --size-gb gigabytes (one row per item; each row padded with a long
`rationale`, which VCT² validates but does not keep), then validates it in a fresh process and
reports wall time and the process's peak resident memory (ru_maxrss, everything included:
interpreter, numpy, the compiled item table and the id index).

    .venv/bin/python perf/bench_validation.py [--size-gb 1.0] [--pack DIR] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, resource, sys, time
from leaderboard.core.packs import load_pack
from leaderboard.core.predictions import validate_predictions
pack = load_pack(sys.argv[1]); pack.items(sys.argv[2])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
ps = validate_predictions(pack, sys.argv[2], sys.argv[3])
dt = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": dt, "rows": ps.rows, "covered": len(ps.covered),
                  "peak_rss_mb": peak / 1024, "rss_before_mb": base / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-gb", type=float, default=1.0)
    ap.add_argument("--pack", type=Path)
    ap.add_argument("--split", default="test")
    ap.add_argument("--keep", action="store_true", help="keep the temporary files")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-validation-"))
    from leaderboard.core.packs import load_pack
    from leaderboard.demo import generate

    pack_dir = args.pack or generate("vct2", tmp, scale="large", seed=0)
    pack = load_pack(pack_dir)
    items = pack.items(args.split)
    n = len(items)
    target = int(args.size_gb * 1024**3)
    pad = max(0, target // n - 60)
    filler = ("lorem ipsum " * (pad // 12 + 1))[:pad]
    path = tmp / "predictions.jsonl"
    t = time.perf_counter()
    with open(path, "w") as fh:
        for i, rid in enumerate(items.ids.tolist()):
            s = ((i * 2654435761) % 1000) / 1000
            fh.write(json.dumps({"id": rid, "score": s, "rationale": filler}) + "\n")
    size = path.stat().st_size
    print(f"wrote {n} rows, {size / 1024**3:.2f} GiB in {time.perf_counter() - t:.1f} s")
    out = subprocess.run([sys.executable, "-c", CHILD, str(pack_dir), args.split, str(path)],
                         capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    if out.returncode != 0:
        sys.exit(out.stderr)
    res = json.loads(out.stdout)
    print(f"validated {res['rows']} rows ({size / 1024**3:.2f} GiB) in {res['seconds']:.1f} s: "
          f"{size / 1024**2 / res['seconds']:.0f} MiB/s, peak RSS {res['peak_rss_mb']:.0f} MB "
          f"(before validating: {res['rss_before_mb']:.0f} MB); target <= 200 MB")
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
