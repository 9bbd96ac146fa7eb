"""Time and memory of building a VCT² pack from parquet tables at scale (not a test).

    .venv/bin/python perf/bench_build_vct2.py [--rows 90] [--size 256] [--workers 1]

Writes synthetic tables in the authors' shape (COCO_AI: caption + 7 image columns, Twitter_AI:
caption + 6; images as embedded PNG bytes in ``{"bytes", "path"}`` structs, one row group per 16
rows), split between the subsets in the release's ratio (10,017 : 15,909), then builds the pack
with `leaderboard.builders.vct2.build` in a fresh process and prints: images, wall time, time per
10,000 images, the builder process's peak RSS (which includes the VAI fit at the end), and its RSS
after the first batch, half-way and at the end of reading, with the growth per image over the
second half (pyarrow's mimalloc pool warms up over the first few hundred images, then stays
flat). ``--rows`` is the number of captions (x ~6.6 images).
The default (90 captions, ~600 images of 256 x 256) runs in about a minute on one core.

Full scale (the release's 25,926 captions = 165,573 images): generate nothing, point the builder at
the real tables and give it the machine's cores, e.g.

    .venv/bin/python -m leaderboard build-pack vct2 --from /data/VCT2 --out /data/packs/vct2 \
        --workers 16

Time is dominated by the twelve VAI features (``leaderboard.features.vai.image_features``: ~0.08 s at
256 x 256, ~0.14 s at 512 x 512, ~0.66 s at 1024 x 1024 per image on one core), so the full build
costs about 166K x (per-image feature time) / workers: roughly 1.5 h with 16 workers at 512 px,
about 2 h with most images at 1024 px. ``--size`` and ``--workers`` here measure that scaling.
Memory stays flat: images are streamed by record batch and only ~0.4 KB of facts per image (id,
subset, pair, generator, twelve features) is kept until the VAI is fitted (~60 MB at full scale).
"""
from __future__ import annotations

import argparse
import io
import multiprocessing as mp
import pathlib
import resource
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

COCO = ("coco_image", "sd35_image", "sd3_image", "sd21_image", "sdxl_image", "dalle_image",
        "midjourney_image")
TWITTER = ("twitter_image", "sd35_image", "sd3_image", "sd21_image", "sdxl_image", "dalle_image")
COCO_SHARE = 10_017 / (10_017 + 15_909)


def _png(rng: np.random.Generator, base: np.ndarray, size: int, fake: bool) -> bytes:
    from PIL import Image

    img = base.copy()
    if fake:  # smoother, more saturated: something for the VAI to learn
        img = (img.astype(np.float32) * 0.8 + img.mean() * 0.2).astype(np.uint8)
    noise = rng.integers(0, 24, size=(size, size, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(np.clip(img + noise, 0, 255).astype(np.uint8)).save(buf, format="PNG",
                                                                        compress_level=1)
    return buf.getvalue()


def write_tables(root: pathlib.Path, rows: int, size: int, seed: int = 0) -> int:
    """Synthetic COCO_AI and Twitter_AI tables, written row group by row group."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    rng = np.random.default_rng(seed)
    n_coco = max(1, round(rows * COCO_SHARE))
    images = 0
    for name, cols, n in (("COCO_AI", COCO, n_coco), ("Twitter_AI", TWITTER, rows - n_coco)):
        schema = pa.schema([("caption", pa.string())] + [(c, image) for c in cols])
        path = root / name / "train-00000-of-00001.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        with pq.ParquetWriter(path, schema) as writer:
            for start in range(0, n, 16):
                batch = range(start, min(n, start + 16))
                data = {"caption": [f"{name} caption {r}" for r in batch]}
                for c in cols:
                    data[c] = []
                for r in batch:
                    yy, xx = np.mgrid[0:size, 0:size]
                    base = np.stack([(xx + r * 7) % 256, (yy * 2) % 256, (xx + yy) % 256],
                                    axis=-1).astype(np.uint8)
                    for k, c in enumerate(cols):
                        data[c].append({"bytes": _png(rng, base, size, k > 0), "path": None})
                        images += 1
                writer.write_table(pa.table(data, schema=schema))
    return images


def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _child(source: str, out: str, workers: int, batch_rows: int, queue) -> None:
    from leaderboard.builders import vct2

    samples: list[tuple[int, int]] = []  # (images read, RSS kB) after each batch
    started = time.perf_counter()
    report = vct2.build(pathlib.Path(source), pathlib.Path(out), workers=workers,
                        batch_rows=batch_rows,
                        progress=lambda d, t, m: samples.append((d, _rss_kb())))
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    queue.put((seconds, sum(report.counts.values()), peak, kids,
               [samples[0], samples[len(samples) // 2], samples[-1]]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=90, help="captions (x ~6.6 images)")
    ap.add_argument("--size", type=int, default=256, help="image side in pixels")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--batch-rows", type=int, default=32)
    ap.add_argument("--dir", type=pathlib.Path, default=None, help="work folder (default: temp)")
    args = ap.parse_args(argv)
    work = args.dir or pathlib.Path(tempfile.mkdtemp(prefix="bench_vct2_"))
    try:
        t0 = time.perf_counter()
        n = write_tables(work / "release", args.rows, args.size)
        print(f"wrote {n} images ({args.rows} captions, {args.size}x{args.size}) in "
              f"{time.perf_counter() - t0:.1f} s")
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        proc = ctx.Process(target=_child, args=(str(work / "release"), str(work / "pack"),
                                                args.workers, args.batch_rows, queue))
        proc.start()
        seconds, images, peak, kids, rss = queue.get()
        proc.join()
        print(f"built {images} images in {seconds:.1f} s with {args.workers} worker(s): "
              f"{seconds / images * 10_000:.0f} s per 10,000 images")
        (n0, r0), (n1, r1), (n2, r2) = rss
        print(f"builder peak RSS {peak / 1024:.0f} MiB (feature workers: {kids / 1024:.0f} MiB)")
        print(f"RSS while reading: {r0 / 1024:.0f} MiB after {n0} images, {r1 / 1024:.0f} MiB "
              f"after {n1}, {r2 / 1024:.0f} MiB after {n2}: second half "
              f"{(r2 - r1) * 1024 / max(n2 - n1, 1):+.0f} bytes per image")
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
