"""UniAIDet pack from a generic CSV/JSONL manifest with PNG masks converted to RLE."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from leaderboard.builders import uniaidet
from leaderboard.builders.common import SourceError
from leaderboard.core.metrics.masks import encode_mask
from leaderboard.core.packs import load_pack
from tests.builders.helpers import items_of, labels_of, score_baseline, write_png

ROWS = [  # image, split, label, generator, family, mask
    ("photo/real_0.png", "photo", "real", "", "", ""),
    ("photo/real_1.png", "photo", "real", "", "", ""),
    ("art/real_2.png", "art", "real", "", "", ""),
    ("photo/t2i_0.png", "photo", "fake", "sd 1.5", "", ""),
    ("art/t2i_1.png", "art", "fake", "FLUX.1-dev", "text-to-image", ""),
    ("photo/inp_0.png", "photo", "fake", "SDXL-Inpaint", "Inpainting", "masks/inp_0.png"),
    ("art/df_0.png", "art", "fake", "REFace", "", "masks/df_0.png"),
]


def _mask(path: Path, box: tuple[int, int, int, int], *, rgba: bool = False) -> np.ndarray:
    arr = np.zeros((20, 30), dtype=bool)
    y0, y1, x0, x1 = box
    arr[y0:y1, x0:x1] = True
    path.parent.mkdir(parents=True, exist_ok=True)
    if rgba:  # opaque everywhere: only the colour says "generated"
        px = np.zeros((20, 30, 4), dtype=np.uint8)
        px[..., 3] = 255
        px[arr, 0] = 255
        Image.fromarray(px, "RGBA").save(path)
    else:
        Image.fromarray(arr.astype(np.uint8) * 255).save(path)
    return arr


def make_release(root: Path, *, fmt: str = "csv") -> tuple[Path, dict]:
    for k, row in enumerate(ROWS):
        write_png(root / row[0], seed=200 + k, size=(30, 20))
    masks = {"masks/inp_0.png": _mask(root / "masks/inp_0.png", (2, 8, 3, 12)),
             "masks/df_0.png": _mask(root / "masks/df_0.png", (5, 15, 10, 20), rgba=True)}
    header = ("image", "split", "label", "generator", "family", "mask")
    if fmt == "csv":
        lines = [",".join(header)] + [",".join(r) for r in ROWS]
        (root / "manifest.csv").write_text("\n".join(lines) + "\n")
    else:
        (root / "manifest.jsonl").write_text("".join(
            json.dumps({k: v for k, v in zip(header, r) if v}) + "\n" for r in ROWS))
    return root, masks


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_builds_from_manifest_with_masks(tmp_path, fmt):
    release, masks = make_release(tmp_path / "uni", fmt=fmt)
    out = tmp_path / "pack"
    uniaidet.build(release, out, dev_fraction=0.0)
    pack = load_pack(out)
    pack.validate()
    items, labels = items_of(out, "test"), labels_of(out, "test")
    assert len(items) == 7
    assert all((it["width"], it["height"]) == (30, 20) for it in items.values())
    by_gen = {lab.get("generator"): lab for lab in labels.values()}
    assert by_gen["SD-1.5"]["family"] == "text-to-image"
    assert by_gen["REFace"]["family"] == "deepfake" and by_gen["REFace"]["domain"] == "art"
    assert by_gen["SDXL-Inpaint"]["mask"] == encode_mask(masks["masks/inp_0.png"])
    assert by_gen["REFace"]["mask"] == encode_mask(masks["masks/df_0.png"])
    assert sum(lab["label"] == "real" for lab in labels.values()) == 3
    records = score_baseline(pack, "test", "all-real", tmp_path)
    assert records[("detection", "accuracy", ())].value == pytest.approx(3 / 7)
    assert records[("detection", "r_acc", (("domain", "photo"),))].value == 1.0
    assert ("detection", "miou", ()) in records


@pytest.mark.parametrize("row, field", [
    ("photo/real_0.png,photo,fake,SD-9,,", "line 9, field 'generator'"),
    ("photo/real_0.png,photo,fake,SDXL-Inpaint,,", "line 9, field 'mask'"),
    ("photo/real_0.png,video,real,,,", "line 9, field 'split'"),
    ("photo/real_0.png,photo,fake,SDXL,inpainting,", "line 9, field 'family'"),
    ("photo/nothere.png,photo,real,,,", "line 9, field 'image'"),
    ("photo/real_0.png,photo,fake,CSCS,,photo/real_1.png", "line 9, field 'mask'"),
])
def test_malformed_rows_name_line_and_field(tmp_path, row, field):
    release, _ = make_release(tmp_path / "uni")
    if "CSCS" in row:  # a mask whose size is not the image's
        Image.new("L", (7, 7), 255).save(release / "photo/real_1.png")
    with open(release / "manifest.csv", "a") as fh:
        fh.write(row + "\n")
    with pytest.raises(SourceError) as exc:
        uniaidet.build(release, tmp_path / "pack")
    assert f"manifest.csv, {field}" in str(exc.value)
    shutil.rmtree(release)


def test_scoring_only_without_images(tmp_path):
    """Only the manifest and the masks (labels): sizes from masks or width/height columns."""
    root, _ = make_release(tmp_path / "rel")
    full = tmp_path / "full"
    uniaidet.build(root, full, dev_fraction=0.0)
    for name in ("photo/real_1.png", "photo/inp_0.png", "art/df_0.png"):
        (root / name).unlink()
    text = (root / "manifest.csv").read_text().splitlines()
    text[0] += ",width,height"
    text[1:] = [line + (",30,20" if "real_1" in line else ",,") for line in text[1:]]
    (root / "manifest.csv").write_text("\n".join(text) + "\n")
    out = tmp_path / "pack"
    report = uniaidet.build(root, out, dev_fraction=0.0, scoring_only=True)
    pack = load_pack(out)
    pack.validate()
    assert pack.scoring_only and report.absent == {"images": 7} and report.not_in_release == 3
    items, full_items = items_of(out, "test"), items_of(full, "test")
    assert len(set(items) & set(full_items)) == 4            # the images that are there keep ids
    assert {(it["width"], it["height"]) for it in items.values()} == {(30, 20)}
    assert not any((out / "media").rglob("*.png"))
    assert score_baseline(pack, "test", "all-fake", tmp_path)[("detection", "f_acc", ())].value == 1.0
    (root / "manifest.csv").write_text("\n".join(text[:2] + [text[2].replace(",30,20", ",,")]) + "\n")
    with pytest.raises(SourceError, match="give its width and height"):
        uniaidet.build(root, tmp_path / "p2", scoring_only=True)
    with pytest.raises(SourceError, match="not found next to the manifest"):
        uniaidet.build(root, tmp_path / "p3")
