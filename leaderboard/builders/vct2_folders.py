"""VCT²'s download layout: the image folders the authors' download scripts write.

``data/hf_data_download_coco.py`` and ``data/hf_data_download_twitter.py`` (Hasnat79/VCT_2) load
the Hugging Face tables and save every cell as ``<base>/<column>/image_<row>.jpg`` (re-encoded by
Pillow's ``img.save``), then the captions as ``<base>/captions.xlsx`` (columns ``Index``,
``Caption``, written by pandas at the very end of the run)::

    saved_images_coco/coco_image/image_0.jpg ... sd3_image/ sd21_image/ sdxl_image/ dalle_image/
        midjourney_image/ captions.xlsx
    saved_images_twitter/twitter_image/image_0.jpg ... sd3_image/ sd21_image/ sdxl_image/
        dalle_image/ captions.xlsx

A folder is one subset's tree when it holds ``coco_image/`` (COCO_AI) or ``twitter_image/``
(Twitter_AI); its name does not matter. Their scripts save no ``sd35_image`` column, so SD3.5
Large has no images in such a tree (a ``sd35_image/`` folder is read when present); a generator
column missing from the tree is noted, an image column the subset does not have is an error.
Row ``r`` (``image_<r>.<ext>``) is caption pair ``r``. Without ``captions.xlsx`` (a download cut
short) the pack has no captions, and the report says so.

`read_captions_xlsx` reads the workbook with the standard library (the zip's first worksheet,
shared and inline strings), so no spreadsheet package is needed.
"""
from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from leaderboard.builders.common import fail

REAL_FOLDERS = {"coco_image": "COCO_AI", "twitter_image": "Twitter_AI"}
CAPTIONS = "captions.xlsx"
_NAME = re.compile(r"image_(\d+)\.(jpe?g|png|webp|bmp|gif|tiff?)", re.IGNORECASE)
_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


@dataclass
class SubsetTree:
    """One subset's download folder: per image column, row -> file; captions by row (or None)."""

    root: Path
    rel: str
    subset: str
    files: dict[str, dict[int, Path]] = field(default_factory=dict)
    captions: dict[int, str] | None = None

    @property
    def rows(self) -> list[int]:
        return sorted({r for by_row in self.files.values() for r in by_row})


def find_trees(source: Path) -> list[Path]:
    """Folders under ``source`` (itself included) that hold a subset's real-image column."""
    source = Path(source)
    if not source.is_dir():
        return []
    found = {p.parent for name in REAL_FOLDERS for p in source.rglob(name) if p.is_dir()}
    return sorted(found)


def read_tree(root: Path, rel: str, columns_of) -> SubsetTree:
    """The files and captions of one download folder; SourceError naming what is wrong.

    ``columns_of(subset)`` gives the subset's image columns (column -> generator or None)."""
    subsets = sorted({s for name, s in REAL_FOLDERS.items() if (root / name).is_dir()})
    if len(subsets) != 1:
        raise fail(f"holds both {sorted(REAL_FOLDERS)} folders: one subset per folder, as the "
                   "authors' download scripts write them", file=rel)
    subset = subsets[0]
    expected = columns_of(subset)
    present = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name.endswith("_image"))
    unknown = sorted(set(present) - set(expected))
    if unknown:
        raise fail(f"{subset} download folder: unknown image columns {unknown} (known: "
                   f"{sorted(expected)})", file=rel)
    tree = SubsetTree(root, rel, subset)
    for col in present:
        by_row: dict[int, Path] = {}
        for path in sorted((root / col).iterdir()):
            if path.name.startswith(".") or path.is_dir():
                continue  # .DS_Store and the like
            m = _NAME.fullmatch(path.name)
            if not m:
                raise fail("not an image file named image_<row>.<ext>, as the authors' download "
                           "scripts name them", file=f"{rel}/{col}/{path.name}")
            row = int(m.group(1))
            if row in by_row:
                raise fail(f"row {row} has two files ({by_row[row].name}, {path.name})",
                           file=f"{rel}/{col}")
            by_row[row] = path
        tree.files[col] = by_row
    captions = root / CAPTIONS
    if captions.is_file():
        tree.captions = read_captions_xlsx(captions, rel=f"{rel}/{CAPTIONS}")
    return tree


def _cell_text(cell, shared: list[str]) -> str | None:
    kind = cell.get("t")
    if kind == "inlineStr":
        return "".join(t.text or "" for t in cell.iter(f"{_NS}t"))
    v = cell.find(f"{_NS}v")
    if v is None or v.text is None:
        return None
    if kind == "s":
        return shared[int(v.text)]
    return v.text


def _column(ref: str) -> str:
    return "".join(c for c in ref if c.isalpha())


def read_captions_xlsx(path: Path, *, rel: str) -> dict[int, str]:
    """``Index`` -> ``Caption`` of the first worksheet of ``path`` (pandas' ``to_excel`` output).

    SourceError naming the file when it is no workbook, lacks either column, or repeats an index.
    """
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            sheets = sorted(n for n in names if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n))
            if not sheets:
                raise fail("an .xlsx workbook without a worksheet", file=rel)
            shared = []
            if "xl/sharedStrings.xml" in names:
                sst = ElementTree.fromstring(z.read("xl/sharedStrings.xml"))
                shared = ["".join(t.text or "" for t in si.iter(f"{_NS}t"))
                          for si in sst.iter(f"{_NS}si")]
            sheet = ElementTree.fromstring(z.read(sheets[0]))
    except (zipfile.BadZipFile, ElementTree.ParseError, KeyError, OSError) as exc:
        raise fail(f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})",
                   file=rel) from None
    rows = []
    for r in sheet.iter(f"{_NS}row"):
        rows.append({_column(c.get("r", "")): _cell_text(c, shared) for c in r.iter(f"{_NS}c")})
    if not rows:
        raise fail("the worksheet is empty (expected columns Index and Caption)", file=rel)
    header = {(v or "").strip(): k for k, v in rows[0].items()}
    if "Index" not in header or "Caption" not in header:
        raise fail(f"the first row must name the columns Index and Caption, got "
                   f"{sorted(k for k in header if k)}", file=rel)
    out: dict[int, str] = {}
    for line, r in enumerate(rows[1:], start=2):
        raw = r.get(header["Index"])
        if raw is None:
            continue
        try:
            index = int(float(raw))
        except ValueError:
            raise fail(f"Index must be a row number, got {raw!r}", file=rel, line=line,
                       field="Index") from None
        if index in out:
            raise fail(f"Index {index} appears twice", file=rel, line=line, field="Index")
        out[index] = r.get(header["Caption"]) or ""
    return out
