"""A small VCT² release in the authors' Hugging Face table shape, and detector scores per case.

Shared by the conformance adapter (`conformance/adapters/vct2.py`) and the pinned tests
(``test_vct2_*.py``). The tables are what ``data/hf_data_download_coco.py`` (Hasnat79/VCT_2)
loads from ``anonymous1233/COCO_AI`` and ``.../Twitter_AI``: one row per caption, a ``caption``
column and one image column per source, each cell a ``{"bytes", "path"}`` struct.

`cells` lists every image as (subset, row, column, is_fake, generator column) in table order;
`scores` gives each case's detector output for them: a ``score`` (probability of fake) and, in
the two cases whose scores are never 0.5 (perfect, adversarial), also a ``label`` that says the
same. Every other case is scores only, as the authors' detectors give them, so the decision is the
scorer's own rule (theirs: ``score > 0.5``): ``ties`` mixes 0.25, 0.5 and 0.75, ``all_half`` is a
detector that answers 0.5 for every image (recall 0 and precision 0 by their rule).
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
CASES = ("perfect", "constant", "random", "all_real", "adversarial", "ties", "all_half")


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
        label = False
        if case == "perfect":
            s, label = (0.9 if fake else 0.1), True
        elif case == "constant":
            s = 0.7
        elif case == "random":
            s = float(rng.random())
        elif case == "all_real":  # nothing called fake: precision has no predicted positive
            s = float(rng.random()) * 0.49
        elif case == "adversarial":
            s, label = (0.2 if fake else 0.8), True
        elif case == "ties":  # 0.5 included, no label: the scorer's rule decides a tie
            s = (0.25, 0.5, 0.75)[(k * 7 + fake) % 3]
        else:  # all_half: every score exactly 0.5, no label
            s = 0.5
        out.append((s, ("fake" if s > 0.5 else "real") if label else None))
    return out
