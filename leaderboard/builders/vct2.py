"""VCT² pack from the authors' release, with the Visual AI Index.

``--from`` is a parquet file, or a folder holding the two released tables (parquet; a table may be
sharded; shards are read in name order) and/or the image folders the authors' download scripts
write (``saved_images_coco/<column>/image_<row>.jpg`` and ``saved_images_twitter/...``, with
``captions.xlsx``: `leaderboard.builders.vct2_folders`). A subset comes from one place only.
A table's subset is recognized by its columns:

* COCO_AI: ``caption, coco_image, sd35_image, sd3_image, sd21_image, sdxl_image, dalle_image,
  midjourney_image`` (10,017 rows);
* Twitter_AI: ``caption, twitter_image, sd35_image, sd3_image, sd21_image, sdxl_image,
  dalle_image`` (15,909 rows).

Image cells are embedded encoded bytes: a ``{"bytes", "path"}`` struct (the Hugging Face image
feature) or plain binary. Real and fakes are paired by row: row r of a subset is caption ``pair``
r (counted across shards). A null image cell is skipped and counted in the report's notes; a null
caption, an unknown image column or bytes that are no image stop the build naming the file, row
and column.

Streaming: files are read in record batches of ``batch_rows`` rows (``pre_buffer`` off), each image
is written to ``media/images/<id>.<ext>`` as shipped (no re-encoding) and reduced to its twelve VAI
features at once; only ~0.4 KB per image (id, subset, pair, generator, features) stays in memory
(~60 MB for the full release), whatever the images' sizes. Once every image is read, the VAI is fitted per subset
(`leaderboard.features.vai.visual_ai_index`), each row's VAI goes into the hidden ``vai`` label and the
models into ``benchmark.yaml`` under ``vai``, as the demo pack does. ``workers`` > 1 computes the
features in that many processes (the features dominate the time: ~0.14 s for a 512 x 512 image,
~0.66 s at 1024 x 1024 on one core).

Ids are ``vc-`` + the first 16 hex digits of the SHA-256 of the image bytes (a table cell's, or
a downloaded file's; a repeat of identical bytes gets ``-2``, ``-3``, ...): the authors' release
has no ids, and a row or column number would reveal the generator. All images of one caption share a split and part; rows are written in id
order.
"""
from __future__ import annotations

import hashlib
import io
import multiprocessing
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from leaderboard.builders.common import (
    BuildReport,
    MediaStore,
    Progress,
    Splitter,
    fail,
    image_ext,
    open_pack,
)
from leaderboard.builders.vct2_folders import SubsetTree, find_trees, read_tree
from leaderboard.core.benchmarks.vct2 import SUBSET_GENERATORS, SUBSETS
from leaderboard.demo import vct2 as demo
from leaderboard.features.vai import FEATURES, image_features, visual_ai_index

ID_RULE = ("Item ids are `vc-` followed by the first 16 hex digits of the SHA-256 of the image's "
           "encoded bytes as stored in the released tables, or of the image file the authors' "
           "download scripts saved (a repeat of identical bytes gets `-2`, `-3`, ... in "
           "reading order).")
REAL_COLUMN = {"COCO_AI": "coco_image", "Twitter_AI": "twitter_image"}
#: the authors' column of each generator's images; the pack's ``generators:`` table (with the
#: day each became public, `leaderboard.core.generator_dates`) comes with the shared meta
GENERATOR_COLUMN = {"sd21_image": "SD 2.1", "sdxl_image": "SDXL", "sd3_image": "SD3 Medium",
                    "sd35_image": "SD3.5 Large", "dalle_image": "DALL·E 3",
                    "midjourney_image": "Midjourney 6"}


def table_columns(subset: str) -> dict[str, str | None]:
    """Image column -> generator (None for the real image) of one subset's table."""
    cols: dict[str, str | None] = {REAL_COLUMN[subset]: None}
    by_gen = {g: c for c, g in GENERATOR_COLUMN.items()}
    cols.update({by_gen[g]: g for g in SUBSET_GENERATORS[subset]})
    return cols


def subset_of(names: list[str], *, rel: str) -> str:
    """The subset a table's column names say; SourceError naming the file otherwise."""
    subsets = [s for s, c in REAL_COLUMN.items() if c in names]
    if len(subsets) != 1 or "caption" not in names:
        raise fail(f"columns {names} are neither COCO_AI's (caption, coco_image, ...) nor "
                   "Twitter_AI's (caption, twitter_image, ...)", file=rel)
    subset = subsets[0]
    expected = table_columns(subset)
    images = [n for n in names if n.endswith("_image")]
    unknown = sorted(set(images) - set(expected))
    missing = sorted(set(expected) - set(images))
    if unknown or missing:
        raise fail(f"{subset} table: unknown image columns {unknown}, missing {missing}",
                   file=rel)
    return subset


def cell_bytes(value) -> bytes | None:
    """Encoded image bytes of a cell: a {"bytes", "path"} struct or plain binary."""
    if value is None:
        return None
    if isinstance(value, dict):
        value = value.get("bytes")
    return bytes(value) if value is not None else None


def features_of(data: bytes) -> np.ndarray | str:
    """The twelve VAI features of encoded image bytes, or the reason they cannot be read."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            rgb = np.asarray(im.convert("RGB"))
        return image_features(rgb)
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        return f"image cannot be decoded ({type(exc).__name__}: {exc})"


class _Rows:
    """Compact per-image facts kept until the VAI is fitted (no pixels, no bytes)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.exts: list[str] = []  # interned: a handful of distinct strings
        self.facts: list[tuple[int, int, int]] = []  # subset index, pair, generator index or -1
        self.features: list[np.ndarray] = []
        self.captions: dict[str, dict[int, str | None]] = {s: {} for s in SUBSETS}
        self.origin: dict[str, str] = {}  # subset -> where its images came from
        self.digests: dict[str, int] = {}
        self.empty: Counter = Counter()  # (file, column) -> empty cells skipped

    def new_id(self, data: bytes) -> str:
        base = "vc-" + hashlib.sha256(data).hexdigest()[:16]
        k = self.digests.get(base, 0) + 1
        self.digests[base] = k
        return base if k == 1 else f"{base}-{k}"


def _claim(rows: _Rows, subset: str, where: str, *, alone: bool) -> None:
    """A subset comes from one place: its tables (shards of one table) or one download folder."""
    before = rows.origin.get(subset)
    if before is not None and (alone or not before.startswith("table")):
        raise fail(f"{subset} is found twice (also in {before.split(':', 1)[1]}); point --from "
                   "at one release", file=where)
    rows.origin[subset] = ("folder:" if alone else "table:") + where


def _ingest(cells: list[tuple[str, str | None, int, str, bytes]], subset: str, rows: _Rows,
            store: MediaStore, pool) -> None:
    """Check, store and reduce to VAI features the images ``cells`` = (where, field, pair,
    column, bytes); the first bad one stops the build naming its ``where`` and ``field``."""
    for where, fld, _, _, data in cells:
        if image_ext(data) is None:
            raise fail("not an encoded image (unknown format)", file=where, field=fld)
    datas = [c[4] for c in cells]
    feats = (pool.map(features_of, datas, chunksize=max(1, len(datas) // 32)) if pool
             else map(features_of, datas))
    s_idx = SUBSETS.index(subset)
    columns = table_columns(subset)
    generators = list(GENERATOR_COLUMN.values())
    for (where, fld, pair, col, data), f in zip(cells, feats):
        if isinstance(f, str):
            raise fail(f, file=where, field=fld)
        item_id, ext = rows.new_id(data), image_ext(data)
        store.add_bytes(data, "images", f"{item_id}.{ext}")
        gen = columns[col]
        rows.ids.append(item_id)
        rows.exts.append(ext)
        rows.facts.append((s_idx, pair, -1 if gen is None else generators.index(gen)))
        rows.features.append(f)


def _read_file(path: Path, rel: str, rows: _Rows, store: MediaStore, pool, batch_rows: int,
               report: BuildReport, progress: Progress | None) -> None:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise fail(f"not a readable parquet file ({type(exc).__name__}: {exc})",
                   file=rel) from None
    subset = subset_of(pf.schema_arrow.names, rel=rel)
    _claim(rows, subset, rel, alone=False)
    columns = table_columns(subset)
    row0 = 0
    for batch in pf.iter_batches(batch_size=batch_rows, columns=["caption", *columns]):
        captions = batch.column("caption").to_pylist()
        for i, caption in enumerate(captions):
            if not isinstance(caption, str) or not caption.strip():
                raise fail("caption is missing", file=f"{rel} row {row0 + i}", field="caption")
        # row r of a subset is caption pair r, counted across shards
        base_pair = len(rows.captions[subset])
        cells = []
        for col in columns:
            for i, value in enumerate(batch.column(col).to_pylist()):
                data = cell_bytes(value)
                if data is None:
                    if not rows.empty[(rel, col)]:
                        report.notes.append(f"{rel} row {row0 + i}: {col} is empty (skipped)")
                    rows.empty[(rel, col)] += 1
                    continue
                cells.append((f"{rel} row {row0 + i}", col, base_pair + i, col, data))
        _ingest(cells, subset, rows, store, pool)
        rows.captions[subset].update(enumerate(captions, start=base_pair))
        row0 += len(captions)
        if progress:
            progress(len(rows.ids), None, f"{rel}: {row0} rows")


def _read_tree(tree: SubsetTree, rows: _Rows, store: MediaStore, pool, batch_rows: int,
               report: BuildReport, progress: Progress | None) -> None:
    """One download folder (`leaderboard.builders.vct2_folders`): row r is caption pair r."""
    subset, rel = tree.subset, tree.rel
    _claim(rows, subset, rel, alone=True)
    columns = table_columns(subset)
    for col, gen in columns.items():
        if col not in tree.files:
            report.notes.append(f"{rel}: no {col} folder: {gen} has no images from it (the "
                                "authors' download scripts do not save that column)")
    if tree.captions is None:
        report.notes.append(f"{rel}: no captions.xlsx (written last by the download script): "
                            "the pack has no captions for this subset")
    all_rows = tree.rows
    if not all_rows:
        raise fail(f"the {subset} download folder holds no images", file=rel)
    for start in range(0, len(all_rows), batch_rows):
        chunk = all_rows[start:start + batch_rows]
        cells = []
        for r in chunk:
            if tree.captions is not None and r not in tree.captions:
                raise fail(f"no caption for row {r} (image_{r}.*)", file=f"{rel}/captions.xlsx")
            for col in columns:
                path = tree.files.get(col, {}).get(r)
                if path is None:
                    if col in tree.files:
                        if not rows.empty[(rel, col)]:
                            report.notes.append(f"{rel} row {r}: no {col} file (skipped)")
                        rows.empty[(rel, col)] += 1
                    continue
                cells.append((f"{rel}/{col}/{path.name}", None, r, col, path.read_bytes()))
            rows.captions[subset][r] = None if tree.captions is None else tree.captions[r]
        _ingest(cells, subset, rows, store, pool)
        if progress:
            progress(len(rows.ids), None, f"{rel}: {start + len(chunk)} rows")


def build(source: Path, out: Path, *, dev_fraction: float = 0.3, private_fraction: float = 0.5,
          seed: int = 0, link_media: bool = False, progress: Progress | None = None,
          workers: int = 1, batch_rows: int = 32, scoring_only: bool = False) -> BuildReport:
    """Write a VCT² pack at ``out`` (replaced) from the released parquet tables and/or the
    authors' download folders at ``source``.

    ``link_media`` has no effect (images are written: table cells have no file to link, and
    the download folders' files are read once for their features and bytes anyway).
    ``scoring_only``: no image is written (the ~166K images are too large to host); ids, labels
    and the Visual AI Index are computed from the tables exactly as in a full build.
    """
    splitter = Splitter(dev_fraction, private_fraction, seed)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, int) or batch_rows < 1:
        raise ValueError(f"batch_rows must be a positive integer, got {batch_rows!r}")
    source = Path(source)
    files = [source] if source.is_file() else sorted(source.rglob("*.parquet"))
    roots = [] if source.is_file() else find_trees(source)
    if not files and not roots:
        raise fail("no parquet tables and no download folders found (the authors' tables, or "
                   "saved_images_coco/coco_image/image_0.jpg, ... as their download scripts "
                   "write them)", file=str(source))
    report = BuildReport("vct2", Path(out))
    rows = _Rows()
    # spawn, not fork: pyarrow's reader threads are running when the pool starts
    pool = (ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
            if workers > 1 else None)
    try:
        origin = ("This pack was built from the authors' released tables." if not roots else
                  "This pack was built from the images the authors' download scripts save.")
        with open_pack(Path(out), demo.meta(), description=demo.description(source=origin),
                       agreement=demo.agreement(demo=False), scoring_only=scoring_only,
                       id_rule=ID_RULE) as w:
            store = MediaStore(w, scoring_only=scoring_only, report=report)
            for path in files:
                rel = path.name if source.is_file() else path.relative_to(source).as_posix()
                _read_file(path, rel, rows, store, pool, batch_rows, report, progress)
            for root in roots:
                rel = root.relative_to(source).as_posix() if root != source else source.name
                tree = read_tree(root, rel, table_columns)
                _read_tree(tree, rows, store, pool, batch_rows, report, progress)
            for (rel, col), n in sorted(rows.empty.items()):
                if n > 1:
                    report.notes.append(f"{rel}: {n} empty {col} cells in all (skipped)")
            _write(w, rows, splitter, report)
    finally:
        if pool:
            pool.shutdown()
    return report


def _write(w, rows: _Rows, splitter: Splitter, report: BuildReport) -> None:
    """Fit the VAI per subset and write every row (id order)."""
    if not rows.ids:
        raise fail("the tables hold no images", file=str(w.root))
    facts = np.array(rows.facts, dtype=np.int64).reshape(-1, 3)
    subset = np.array(SUBSETS)[facts[:, 0]]
    try:
        vai, models = visual_ai_index(features=np.vstack(rows.features), is_real=facts[:, 2] < 0,
                                      subset=subset)
    except ValueError as exc:
        raise fail(f"the Visual AI Index cannot be fitted: {exc}", file="(all tables)") from None
    rows.features.clear()
    w.meta["vai"] = {"features": list(FEATURES),
                     "subsets": {k: m.as_dict() for k, m in models.items()}}
    generators = list(GENERATOR_COLUMN.values())
    for i in sorted(range(len(rows.ids)), key=rows.ids.__getitem__):
        item_id, (s, pair, g) = rows.ids[i], facts[i]
        name = SUBSETS[s]
        item = {"id": item_id, "task": "detection", "modality": "image",
                "media": [f"media/images/{item_id}.{rows.exts[i]}"]}
        label = {"id": item_id, "label": "real" if g < 0 else "fake", "subset": name,
                 "pair": int(pair), "vai": float(vai[i])}
        caption = rows.captions[name].get(int(pair))
        if caption is not None:
            label["caption"] = caption
        if g >= 0:
            label["generator"] = generators[g]
        split, part = splitter.assign(f"{name}:{int(pair)}")
        if part:
            label["part"] = part
        w.add(split, item, label)
        report.count(split, "detection", "image")
    w.meta = report.fit_meta(w.meta)

