"""Small factories shared by the builder tests: images, masks and a scored baseline."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image

from leaderboard.core.baselines import write_baseline
from leaderboard.core.scoring import score_predictions


def png_bytes(seed: int, size: tuple[int, int] = (24, 24)) -> bytes:
    """A small, distinct RGB PNG (distinct seeds give distinct bytes)."""
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, 256, size=(size[1], size[0], 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def write_png(path: Path, seed: int, size: tuple[int, int] = (24, 24)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(seed, size))
    return path


def write_json(path: Path, obj, *, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, ensure_ascii=False, indent=1)
    if encoding == "utf-16":  # Python's utf-16 codec writes the byte-order mark
        path.write_bytes(text.encode("utf-16"))
    else:
        path.write_text(text, encoding=encoding)
    return path


def labels_of(pack_dir: Path, split: str) -> dict[str, dict]:
    rows = (json.loads(line) for line in
            (pack_dir / "splits" / split / "labels.jsonl").read_text().splitlines() if line)
    return {r["id"]: r for r in rows}


def items_of(pack_dir: Path, split: str) -> dict[str, dict]:
    rows = (json.loads(line) for line in
            (pack_dir / "splits" / split / "items.jsonl").read_text().splitlines() if line)
    return {r["id"]: r for r in rows}


def score_baseline(pack, split: str, kind: str, tmp: Path):
    """Write and score a baseline; returns {(task, metric, slice tuple): record}."""
    out = tmp / f"{pack.key}-{split}-{kind}.jsonl"
    write_baseline(pack, split, kind, out)
    result = score_predictions(pack, split, out, n_resamples=50)
    return {(r.task, r.metric, tuple(sorted(r.slice.items()))): r for r in result.parts["all"]}
