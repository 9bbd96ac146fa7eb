"""A small VCT² release in the authors' Hugging Face table shape, and detector scores per case.

Shared by the conformance adapter (`conformance/adapters/vct2.py`) and the pinned tests
(``test_vct2_*.py``). The tables are what ``data/hf_data_download_coco.py`` (Hasnat79/VCT_2)
loads from ``anonymous1233/COCO_AI`` and ``.../Twitter_AI``: one row per caption, a ``caption``
column and one image column per source, each cell a ``{"bytes", "path"}`` struct.

`cells` lists every image as (subset, row, column, is_fake, generator column) in table order;
`scores` gives each case's detector output for them: a ``score`` (probability of fake) and, where
the case has one, the ``label`` the authors' scripts derive (``score > 0.5``).
"""
from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
from PIL import Image

COLUMNS = {
    "COCO_AI": ("coco_image", "sd21_image", "sdxl_image", "sd3_image", "sd35_image",
                "dalle_image", "midjourney_image"),
    "Twitter_AI": ("twitter_image", "sd21_image", "sdxl_image", "sd3_image", "sd35_image",
                   "dalle_image"),
}
ROWS = {"COCO_AI": 7, "Twitter_AI": 5}
CASES = ("perfect", "constant", "random", "all_real", "adversarial", "ties")


def image_bytes(subset: str, row: int, col: int) -> bytes:
    """A 40 x 32 PNG: textured noise, blurrier for the generated columns (so the VAI has signal)."""
    rng = np.random.default_rng([len(subset), row, col])
    arr = rng.integers(0, 256, size=(32, 40, 3)).astype(np.float64)
    if col:
        k = 1 + col % 3
        arr = np.cumsum(arr, axis=1)
        arr = (arr[:, k:] - arr[:, :-k]) / k
        arr = np.pad(arr, ((0, 0), (0, k), (0, 0)), mode="edge")
    buf = io.BytesIO()
    Image.fromarray(arr.clip(0, 255).astype(np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def cells() -> list[tuple[str, int, str, bool, bytes]]:
    """(subset, row, column, is_fake, bytes) of every image, in table order."""
    out = []
    for subset, cols in COLUMNS.items():
        for r in range(ROWS[subset]):
            for c, col in enumerate(cols):
                out.append((subset, r, col, c > 0, image_bytes(subset, r, c)))
    return out


def write_release(root: Path) -> Path:
    """``<root>/<subset>/train-00000-of-00001.parquet`` for both subsets; returns ``root``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    for subset, cols in COLUMNS.items():
        data = {"caption": pa.array([f"{subset} caption {r}" for r in range(ROWS[subset])])}
        for c, col in enumerate(cols):
            data[col] = pa.array([{"bytes": image_bytes(subset, r, c), "path": f"image_{r}.jpg"}
                                  for r in range(ROWS[subset])], type=image)
        path = Path(root) / subset / "train-00000-of-00001.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table(data), path)
    return Path(root)


def item_id(data: bytes) -> str:
    """The pack's id of an image (`leaderboard.builders.vct2`: ``vc-`` + SHA-256 prefix)."""
    return "vc-" + hashlib.sha256(data).hexdigest()[:16]


def scores(case: str) -> list[tuple[float, str | None]]:
    """(score, label or None) for every image of `cells`, in the same order."""
    if case not in CASES:
        raise ValueError(f"case must be one of {CASES}, got {case!r}")
    rng = np.random.default_rng(sum(map(ord, case)))
    out = []
    for k, (_, _, _, fake, _) in enumerate(cells()):
        label = True
        if case == "perfect":
            s = 0.9 if fake else 0.1
        elif case == "constant":
            s, label = 0.7, False
        elif case == "random":
            s, label = float(rng.random()), False
        elif case == "all_real":  # nothing called fake: precision has no predicted positive
            s, label = float(rng.random()) * 0.49, False
        elif case == "adversarial":
            s = 0.2 if fake else 0.8
        else:  # ties, 0.5 included: the label carries the authors' decision (score > 0.5)
            s = (0.25, 0.5, 0.75)[(k * 7 + fake) % 3]
        out.append((s, ("fake" if s > 0.5 else "real") if label else None))
    return out
