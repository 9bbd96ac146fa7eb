"""VCT² pack from the folders the authors' download scripts write (``data/hf_data_download_*.py``:
``saved_images_coco/<column>/image_<row>.jpg`` and ``captions.xlsx``), a self-written small tree
in that layout; the workbook is written here the way pandas' ``to_excel`` lays it out."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np
import pytest
from PIL import Image

from leaderboard.builders import vct2
from leaderboard.builders.common import SourceError
from leaderboard.builders.vct2_folders import read_captions_xlsx
from leaderboard.core.packs import load_pack
from tests.builders.helpers import labels_of, score_baseline

# the columns their scripts save: no sd35_image (COCO_AI also has midjourney_image)
COCO = ("coco_image", "sd3_image", "sd21_image", "sdxl_image", "dalle_image", "midjourney_image")
TWITTER = ("twitter_image", "sd3_image", "sd21_image", "sdxl_image", "dalle_image")
NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'


def jpeg(seed: int) -> bytes:
    arr = np.random.default_rng(seed).integers(0, 256, size=(24, 32, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="JPEG")  # what their img.save("image_<i>.jpg") writes
    return buf.getvalue()


def write_xlsx(path: Path, rows: list[tuple[int, str]], *, inline: bool = False) -> None:
    """A minimal workbook: header Index, Caption; captions as shared (or inline) strings."""
    strings = ["Index", "Caption"] + [c for _, c in rows]

    def text(col, k, value):
        if inline:
            return f'<c r="{col}{k}" t="inlineStr"><is><t>{escape(value)}</t></is></c>'
        return f'<c r="{col}{k}" t="s"><v>{strings.index(value)}</v></c>'

    body = [f'<row r="1">{text("A", 1, "Index")}{text("B", 1, "Caption")}</row>']
    for k, (i, cap) in enumerate(rows, start=2):
        body.append(f'<row r="{k}"><c r="A{k}"><v>{i}</v></c>{text("B", k, cap)}</row>')
    sheet = f'<worksheet {NS}><sheetData>{"".join(body)}</sheetData></worksheet>'
    sst = (f'<sst {NS} count="{len(strings)}">'
           + "".join(f"<si><t>{escape(s)}</t></si>" for s in strings) + "</sst>")
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", f"<workbook {NS}/>")
        z.writestr("xl/worksheets/sheet1.xml", sheet)
        if not inline:
            z.writestr("xl/sharedStrings.xml", sst)


def write_tree(base: Path, columns, n_rows: int, *, tag: int, captions: bool = True,
               skip=()) -> Path:
    for c, col in enumerate(columns):
        (base / col).mkdir(parents=True, exist_ok=True)
        for i in range(n_rows):
            if (i, col) not in skip:
                (base / col / f"image_{i}.jpg").write_bytes(jpeg(tag * 1000 + i * 10 + c))
    if captions:
        write_xlsx(base / "captions.xlsx", [(i, f"caption {tag}-{i} & more") for i in
                                            range(n_rows)])
    return base


@pytest.fixture(scope="module")
def download(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("vct2-download")
    write_tree(root / "saved_images_coco", COCO, 4, tag=1, skip={(3, "dalle_image")})
    write_tree(root / "saved_images_twitter", TWITTER, 3, tag=2)
    (root / "saved_images_coco" / "coco_image" / ".DS_Store").write_bytes(b"\0")
    return root


def test_builds_from_the_download_folders(download, tmp_path):
    out = tmp_path / "pack"
    report = vct2.build(download, out, dev_fraction=0.0, batch_rows=3)
    pack = load_pack(out)
    pack.validate()
    assert report.counts == {"test": 4 * 6 - 1 + 3 * 5}
    assert any("saved_images_coco row 3: no dalle_image file" in n for n in report.notes)
    assert any("no sd35_image folder: SD3.5 Large" in n for n in report.notes)
    labels = labels_of(out, "test")
    coco = [lab for lab in labels.values() if lab["subset"] == "COCO_AI"]
    assert sum(lab["label"] == "real" for lab in coco) == 4
    by_pair = {(lab["subset"], lab["pair"], lab.get("generator")): lab for lab in labels.values()}
    assert by_pair[("Twitter_AI", 2, "DALL·E 3")]["caption"] == "caption 2-2 & more"
    assert by_pair[("COCO_AI", 1, "Midjourney 6")]["caption"] == "caption 1-1 & more"
    assert ("COCO_AI", 0, "SD3.5 Large") not in by_pair
    first = next(iter(labels))
    assert (out / "media" / "images" / f"{first}.jpg").read_bytes()[:2] == b"\xff\xd8"
    records = score_baseline(pack, "test", "all-fake", tmp_path)
    cell = records[("detection", "accuracy", (("generator", "SDXL"), ("subset", "COCO_AI")))]
    assert cell.value == pytest.approx(0.5)


def test_one_subset_folder_alone_and_without_captions(tmp_path):
    base = write_tree(tmp_path / "dl" / "saved_images_twitter", TWITTER, 3, tag=3, captions=False)
    report = vct2.build(base, tmp_path / "pack", dev_fraction=0.0)
    assert report.counts == {"test": 15}
    assert any("no captions.xlsx" in n for n in report.notes)
    assert all("caption" not in lab for lab in labels_of(tmp_path / "pack", "test").values())


def test_folders_and_tables_of_one_subset_are_refused(download, tmp_path):
    from tests.builders.test_build_vct2 import COCO_COLS, write_table

    mixed = tmp_path / "mixed"
    write_tree(mixed / "saved_images_coco", COCO, 2, tag=4)
    write_table(mixed / "COCO_AI" / "train.parquet", COCO_COLS, range(2), tag=5)
    with pytest.raises(SourceError, match="COCO_AI is found twice"):
        vct2.build(mixed, tmp_path / "pack")


def test_bad_trees_name_the_file(tmp_path):
    bad = write_tree(tmp_path / "a" / "saved_images_coco", COCO, 2, tag=6)
    (bad / "sd9_image").mkdir()
    with pytest.raises(SourceError, match=r"unknown image columns \['sd9_image'\]"):
        vct2.build(bad, tmp_path / "pack")
    (bad / "sd9_image").rmdir()
    (bad / "sdxl_image" / "notes.txt").write_text("x")
    with pytest.raises(SourceError, match="sdxl_image/notes.txt: not an image file named"):
        vct2.build(bad, tmp_path / "pack")
    (bad / "sdxl_image" / "notes.txt").unlink()
    (bad / "sdxl_image" / "image_1.jpg").write_bytes(b"not a jpeg")
    with pytest.raises(SourceError, match="sdxl_image/image_1.jpg: not an encoded image"):
        vct2.build(bad, tmp_path / "pack")
    (bad / "sdxl_image" / "image_1.jpg").write_bytes(jpeg(1))
    write_xlsx(bad / "captions.xlsx", [(0, "only the first")])
    with pytest.raises(SourceError, match=r"captions.xlsx: no caption for row 1"):
        vct2.build(bad, tmp_path / "pack")
    (bad / "captions.xlsx").write_bytes(b"PK not a zip")
    with pytest.raises(SourceError, match="not a readable .xlsx workbook"):
        vct2.build(bad, tmp_path / "pack")
    with pytest.raises(SourceError, match="no parquet tables and no download folders"):
        vct2.build(tmp_path / "a" / "saved_images_coco" / "sdxl_image", tmp_path / "pack")


def test_captions_workbook_inline_strings_and_errors(tmp_path):
    path = tmp_path / "c.xlsx"
    write_xlsx(path, [(0, "a"), (1, "b <c>")], inline=True)
    assert read_captions_xlsx(path, rel="c.xlsx") == {0: "a", 1: "b <c>"}
    write_xlsx(path, [(0, "a"), (0, "b")])
    with pytest.raises(SourceError, match="Index 0 appears twice"):
        read_captions_xlsx(path, rel="c.xlsx")
