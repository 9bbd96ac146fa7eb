"""VCT² pack from the two released parquet tables with embedded image bytes, and the VAI."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from leaderboard.builders import vct2
from leaderboard.builders.common import SourceError
from leaderboard.core.packs import load_pack
from tests.builders.helpers import items_of, labels_of, png_bytes, score_baseline

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
COCO_COLS = ("coco_image", "sd35_image", "sd3_image", "sd21_image", "sdxl_image", "dalle_image",
             "midjourney_image")
TWITTER_COLS = ("twitter_image", "sd35_image", "sd3_image", "sd21_image", "sdxl_image",
                "dalle_image")


def write_table(path: Path, cols, rows: range, *, tag: int, plain: tuple[str, ...] = (),
                nulls=(), row_group_size: int = 3, bad=None) -> None:
    """A table in the authors' shape: caption + image columns of {"bytes", "path"} structs."""
    data = {"caption": [f"caption {tag}-{r}" for r in rows]}
    types = {"caption": pa.string()}
    for c_idx, col in enumerate(cols):
        cells = []
        for r in rows:
            if (r, col) in nulls:
                cells.append(None)
                continue
            raw = b"not an image" if (r, col) == bad else png_bytes(tag * 1000 + r * 10 + c_idx,
                                                                     (32, 32))
            cells.append(raw if col in plain else {"bytes": raw, "path": f"{r}_{col}.png"})
        data[col] = cells
        types[col] = pa.binary() if col in plain else IMAGE
    table = pa.table({k: pa.array(v, type=types[k]) for k, v in data.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group_size)


def make_release(root: Path) -> Path:
    write_table(root / "COCO_AI/train-00000-of-00001.parquet", COCO_COLS, range(6), tag=1,
                nulls={(4, "midjourney_image")})
    write_table(root / "Twitter_AI/train-00000-of-00002.parquet", TWITTER_COLS, range(3), tag=2,
                plain=("dalle_image",))
    write_table(root / "Twitter_AI/train-00001-of-00002.parquet", TWITTER_COLS, range(3, 5),
                tag=2, plain=("dalle_image",))
    return root


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return make_release(tmp_path_factory.mktemp("vct2") / "VCT2")


def test_builds_both_tables_with_the_vai(release, tmp_path):
    out = tmp_path / "pack"
    report = vct2.build(release, out, dev_fraction=0.0, batch_rows=2)
    pack = load_pack(out)
    pack.validate()
    assert report.counts == {"test": 6 * 7 - 1 + 5 * 6}
    # the authors' six generator columns, each with the day it became public (issue 37)
    assert [g.key for g in pack.meta.generators] == list(vct2.GENERATOR_COLUMN.values())
    assert all(g.date.year >= 2022 for g in pack.meta.generators)
    assert any("row 4: midjourney_image is empty" in n for n in report.notes)
    labels = labels_of(out, "test")
    coco = [lab for lab in labels.values() if lab["subset"] == "COCO_AI"]
    twitter = [lab for lab in labels.values() if lab["subset"] == "Twitter_AI"]
    assert sum(lab["label"] == "real" for lab in coco) == 6
    assert sorted({lab["pair"] for lab in twitter}) == [0, 1, 2, 3, 4]  # counted across shards
    by_pair = {(lab["pair"], lab.get("generator")): lab for lab in twitter}
    assert by_pair[(4, "DALL·E 3")]["caption"] == "caption 2-4"
    assert "Midjourney 6" not in {lab.get("generator") for lab in twitter}
    assert all(0.0 <= lab["vai"] <= 1.0 for lab in labels.values())
    meta = yaml.safe_load((out / "benchmark.yaml").read_text())
    assert set(meta["vai"]["subsets"]) == {"COCO_AI", "Twitter_AI"}
    assert meta["vai"]["subsets"]["COCO_AI"]["n_real"] == 6
    items = items_of(out, "test")
    first = next(iter(items.values()))
    assert first["media"][0].endswith(".png")
    assert (out / first["media"][0]).read_bytes()[:4] == b"\x89PNG"
    records = score_baseline(pack, "test", "all-fake", tmp_path)
    cell = records[("detection", "accuracy", (("generator", "SDXL"), ("subset", "COCO_AI")))]
    assert cell.value == pytest.approx(0.5)
    assert ("detection", "vai_mean", (("generator", "real"), ("subset", "COCO_AI"))) in records


def test_images_of_a_caption_share_split_and_part(release, tmp_path):
    out = tmp_path / "pack"
    vct2.build(release, out, dev_fraction=0.5, seed=2)
    load_pack(out).validate()
    where: dict[tuple, set] = {}
    for split in ("dev", "test"):
        for lab in labels_of(out, split).values():
            where.setdefault((lab["subset"], lab["pair"]), set()).add((split, lab.get("part")))
    assert all(len(v) == 1 for v in where.values())
    assert {s for v in where.values() for s, _ in v} == {"dev", "test"}


def test_feature_workers_give_the_same_pack(release, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    vct2.build(release, one, seed=5)
    vct2.build(release, two, seed=5, workers=2)
    for split in ("dev", "test"):
        assert (one / f"splits/{split}/labels.jsonl").read_bytes() == \
            (two / f"splits/{split}/labels.jsonl").read_bytes()


def test_malformed_tables_name_file_row_and_column(tmp_path):
    root = tmp_path / "bad"
    write_table(root / "coco.parquet", COCO_COLS, range(2), tag=1, bad=(1, "sdxl_image"))
    with pytest.raises(SourceError) as exc:
        vct2.build(root, tmp_path / "pack")
    assert "coco.parquet row 1, field 'sdxl_image': not an encoded image" in str(exc.value)
    other = tmp_path / "other"
    write_table(other / "x.parquet", ("coco_image", "sd9_image"), range(2), tag=1)
    with pytest.raises(SourceError, match=r"x.parquet: COCO_AI table: unknown image columns "
                                          r"\['sd9_image'\]"):
        vct2.build(other, tmp_path / "pack")
    (other / "x.parquet").write_bytes(b"PAR1 nope")
    with pytest.raises(SourceError, match="x.parquet: not a readable parquet file"):
        vct2.build(other, tmp_path / "pack")


def test_scoring_only_writes_no_image_and_keeps_ids_labels_and_vai(release, tmp_path):
    full, lean = tmp_path / "full", tmp_path / "lean"
    vct2.build(release, full, dev_fraction=0.0)
    report = vct2.build(release, lean, dev_fraction=0.0, scoring_only=True)
    pack = load_pack(lean)
    pack.validate()
    assert pack.scoring_only and not any((lean / "media").rglob("*.png"))
    assert report.absent == {"images": 71} and report.not_in_release == 0
    assert labels_of(lean, "test") == labels_of(full, "test")
    assert items_of(lean, "test") == items_of(full, "test")
    assert "Scoring-only benchmark" in pack.text("description")
