"""UniAIDet pack from a manifest (seed 003). No public release format is known, so this is ours.

``--from`` is a manifest file (``.csv`` or ``.jsonl``) or a folder holding ``manifest.csv`` or
``manifest.jsonl``. Paths in it are relative to the manifest's folder. One row per image:

=============  ========================================================================
``image``      image path (also ``image_path``, ``path``, ``file``); required
``split``      ``photo`` or ``art`` (also ``domain``); required
``label``      ``real`` or ``fake``; required
``generator``  one of UniAIDet's 20 generators (case and punctuation ignored: ``sd 1.5``)
``family``     text-to-image, image-to-image, inpainting, editing, deepfake (derived from
               the generator when empty; must agree with it when both are given)
``mask``       PNG of generated pixels (non-zero = generated; also ``mask_path``),
               required for the partial families (inpainting, editing, deepfake), refused
               for real and fully generated images; its size must be the image's
``id``         optional item id, kept verbatim (make sure it does not reveal the answer);
               default ``ua-`` + the image's SHA-256 prefix
``width``,     optional image size in pixels; checked against the image when it is there,
``height``     and needed in a scoring-only build for an absent image without a mask
=============  ========================================================================

Scoring-only builds (``scoring_only=True``) copy no image and accept rows whose image is not in
the release: the size then comes from ``width``/``height`` or from the mask (masks are labels and
must be there), and the default id from the digest of ``"absent:" + <image path as written in the
manifest>`` (`common.absent_digest`).

CSV is read row by row and JSONL line by line; every problem names the manifest line and column.
Masks become COCO RLE (`leaderboard.core.metrics.masks.encode_mask`); items carry ``width`` and
``height``; images are stored under content-derived names.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PIL import Image

from leaderboard.builders.common import (
    BuildReport,
    MediaStore,
    Problems,
    Progress,
    Splitter,
    fail,
    iter_csv,
    iter_jsonl,
    normalize_key,
    open_pack,
    resolve_media,
)
from leaderboard.core.benchmarks.uniaidet import DOMAINS, FAMILIES, FAMILY_OF, PARTIAL
from leaderboard.core.metrics.masks import encode_mask
from leaderboard.demo import uniaidet as demo

COLUMNS = {"image": ("image", "image_path", "path", "file"), "split": ("split", "domain"),
           "label": ("label",), "generator": ("generator",), "family": ("family",),
           "mask": ("mask", "mask_path"), "id": ("id",), "width": ("width",),
           "height": ("height",)}
GENERATOR = {normalize_key(g): g for g in FAMILY_OF}
FAMILY = {normalize_key(f): f for f in FAMILIES}
_ID_OK = re.compile(r"^[A-Za-z0-9._:\-/]{1,200}$")
ID_RULE = ("Item ids are the manifest's `id` where it gives one, otherwise `ua-` followed by the "
           "first 16 hex digits of the SHA-256 of the image file as released (for an image that "
           "was not in the release when the pack was built: of the text `absent:` followed by the "
           "image path as the manifest writes it).")


def find_manifest(source: Path) -> Path:
    source = Path(source)
    if source.is_file():
        return source
    for name in ("manifest.csv", "manifest.jsonl"):
        if (source / name).is_file():
            return source / name
    raise fail("no manifest: give a .csv/.jsonl file, or a folder with manifest.csv or "
               "manifest.jsonl", file=str(source))


def _rows(manifest: Path, rel: str):
    if manifest.suffix.lower() == ".csv":
        return iter_csv(manifest, rel=rel)
    if manifest.suffix.lower() == ".jsonl":
        return iter_jsonl(manifest, rel=rel)
    raise fail("the manifest must be .csv or .jsonl", file=rel)


def _cell(row: dict, name: str) -> str:
    for alias in COLUMNS[name]:
        v = row.get(alias)
        if v not in (None, ""):
            return str(v).strip()
    return ""


def read_mask(path: Path) -> np.ndarray:
    """A PNG mask as bool (True = generated): any non-zero colour channel counts."""
    with Image.open(path) as im:
        if im.mode in ("RGBA", "LA", "PA"):
            im = im.convert("RGB")  # alpha is opacity, not "generated"
        arr = np.asarray(im)
    return arr.any(axis=2) if arr.ndim == 3 else arr != 0


def _absent_path(base: Path, text: str) -> Path | None:
    """Where a manifest path would be (None for an absolute path or one with ``..``)."""
    p = Path(text.strip().removeprefix("./"))
    return None if not text.strip() or p.is_absolute() or ".." in p.parts else base / p


def _size(row: dict, n: int, rel: str, problems: Problems) -> tuple[int, int] | None:
    """(width, height) from the manifest's columns, None when absent or bad (a problem)."""
    w, h = _cell(row, "width"), _cell(row, "height")
    if not w and not h:
        return None
    try:
        size = int(w), int(h)
    except ValueError:
        size = (0, 0)
    if min(size) < 1:
        problems.add(f"width and height must be positive integers, got {w!r} x {h!r}", file=rel,
                     line=n, field="width")
        return None
    return size


def _parse(row: dict, n: int, rel: str, base: Path, problems: Problems,
           scoring_only: bool = False):
    """(fields, image path, mask path) of one manifest row; None after a problem."""
    before = problems.total
    add = lambda msg, f: problems.add(msg, file=rel, line=n, field=f)  # noqa: E731
    unknown = sorted(set(row) - {a for names in COLUMNS.values() for a in names})
    if unknown:
        add(f"unknown columns {unknown}; allowed: {sorted(COLUMNS)}", unknown[0])
    image = resolve_media(base, _cell(row, "image")) if _cell(row, "image") else None
    if scoring_only and image is None:
        image = _absent_path(base, _cell(row, "image"))
    if image is None or not (image.is_file() or scoring_only):
        add(f"image {_cell(row, 'image')!r} not found next to the manifest", "image")
    domain, label = _cell(row, "split").lower(), _cell(row, "label").lower()
    if domain not in DOMAINS:
        add(f"must be one of {list(DOMAINS)}, got {_cell(row, 'split')!r}", "split")
    if label not in ("real", "fake"):
        add(f"must be real or fake, got {_cell(row, 'label')!r}", "label")
    gen_text, fam_text = _cell(row, "generator"), _cell(row, "family")
    generator = GENERATOR.get(normalize_key(gen_text)) if gen_text else None
    family = FAMILY.get(normalize_key(fam_text)) if fam_text else None
    if gen_text and generator is None:
        add(f"unknown generator {gen_text!r}; known: {sorted(FAMILY_OF)}", "generator")
    if fam_text and family is None:
        add(f"unknown family {fam_text!r}; known: {list(FAMILIES)}", "family")
    if generator and family and FAMILY_OF[generator] != family:
        add(f"{generator} is {FAMILY_OF[generator]}, not {family}", "family")
    family = family or (FAMILY_OF[generator] if generator else None)
    mask_text = _cell(row, "mask")
    mask = resolve_media(base, mask_text) if mask_text else None
    if label == "real" and (generator or family or mask_text):
        add("a real image has no generator, family or mask", "label")
    if mask_text and mask is None:
        add(f"mask {mask_text!r} not found next to the manifest", "mask")
    if label == "fake" and family in PARTIAL and not mask_text:
        add(f"a {family} image needs its mask", "mask")
    if mask_text and label == "fake" and family not in PARTIAL:
        add(f"only partial fakes ({list(PARTIAL)}) have masks; this is {family}", "mask")
    rid = _cell(row, "id")
    if rid and not _ID_OK.match(rid):
        add("id must be 1-200 characters of letters, digits, . _ : - /", "id")
    if problems.total > before:
        return None
    fields = {"label": label, "domain": domain}
    if family:
        fields["family"] = family
    if generator:
        fields["generator"] = generator
    return fields, rid, image, mask


def build(source: Path, out: Path, *, dev_fraction: float = 0.3, private_fraction: float = 0.5,
          seed: int = 0, link_media: bool = False, progress: Progress | None = None,
          scoring_only: bool = False) -> BuildReport:
    """Write a UniAIDet pack at ``out`` (replaced) from a manifest (see module doc)."""
    splitter = Splitter(dev_fraction, private_fraction, seed)
    manifest = find_manifest(Path(source))
    base, rel = manifest.parent, manifest.name
    report = BuildReport("uniaidet", Path(out))
    problems, rows, seen = Problems(), [], {}
    origin = f"This pack was built from the manifest {manifest.name}."
    with open_pack(Path(out), demo.meta(), description=demo.description(source=origin),
                   agreement=demo.agreement(demo=False), scoring_only=scoring_only,
                   id_rule=ID_RULE) as w:
        store = MediaStore(w, link=link_media, scoring_only=scoring_only, report=report)
        for k, (n, row) in enumerate(_rows(manifest, rel)):
            parsed = _parse(row, n, rel, base, problems, scoring_only)
            if parsed is None:
                continue
            fields, rid, image, mask_path = parsed
            given = _size(row, n, rel, problems)
            size = None
            if image.is_file():
                try:
                    with Image.open(image) as im:
                        size = im.size
                except OSError as exc:
                    problems.add(f"image cannot be read ({exc})", file=rel, line=n, field="image")
                    continue
                if given is not None and given != size:
                    problems.add(f"width x height {given[0]}x{given[1]} is not the image's "
                                 f"{size[0]}x{size[1]}", file=rel, line=n, field="width")
                    continue
            mask = None
            if mask_path is not None:
                try:
                    mask = read_mask(mask_path)
                except OSError as exc:
                    problems.add(f"mask cannot be read ({exc})", file=rel, line=n, field="mask")
                    continue
                size = size or given or (mask.shape[1], mask.shape[0])
                if mask.shape != (size[1], size[0]):
                    problems.add(f"mask is {mask.shape[1]}x{mask.shape[0]}, the image is "
                                 f"{size[0]}x{size[1]}", file=rel, line=n, field="mask")
                    continue
                if not mask.any():
                    problems.add("mask has no generated pixel", file=rel, line=n, field="mask")
                    continue
                fields["mask"] = encode_mask(mask)
            size = size or given
            if size is None:
                problems.add("the image is not in the release: give its width and height columns "
                             "(or a mask) to build it scoring-only", file=rel, line=n,
                             field="width")
                continue
            media, digest = store.add_file(image, "images", key=_cell(row, "image"))
            rid = rid or f"ua-{digest[:16]}"
            if rid in seen:
                problems.add(f"id {rid!r} repeats line {seen[rid]} (the same image twice?)",
                             file=rel, line=n, field="id")
                continue
            seen[rid] = n
            rows.append(({"id": rid, "task": "detection", "modality": "image", "width": size[0],
                          "height": size[1], "media": [media]}, {"id": rid, **fields}))
            if progress and (k + 1) % 500 == 0:
                progress(k + 1, None, f"{rel} line {n}")
        problems.check(f"{rel} is not a valid UniAIDet manifest")
        rows.sort(key=lambda r: r[0]["id"])
        for item, label in rows:
            split, part = splitter.assign(item["id"])
            if part:
                label["part"] = part
            w.add(split, item, label)
            report.count(split, "detection", "image")
        w.meta = report.fit_meta(w.meta)
    return report
