"""SynCred-Bench pack from the authors' release (seed 002: 600 positives + FP450).

Release layout read (``--from`` is its folder; the authors' ``scripts/evaluate_mllm.py`` reads
the same names)::

    <any folder>/CONTENT_STYLE_INDEX.png   the 600 GPT-Image-2 positives, e.g. AD_CC_50.png
                                           (content ML IN PI CR AD AM; style NR SC CC FC SP CV OP)
    <folder named *FP450*>/...             the 450 real negatives (label "real"); a negative named
                                           CONTENT_STYLE_INDEX gets that form and style too
    <any folder>/meta.json                 metadata, as the authors' ``load_metadata`` reads it

Images are .png, .jpg, .jpeg, .webp or .bmp (the authors' ``IMAGE_SUFFIXES``); other files are
ignored. A ``meta.json`` may sit in any folder and applies to the images under that folder. Its
shapes are the authors': a list of row objects, ``{"data": [...]}`` or ``{"items": [...]}``, or a
single row object; also our earlier mapping ``{"<file>": {fields}}``. A row names its image by
``image``, ``file`` or ``filename`` (the first non-empty, as the authors do) and is matched by the
file's base name (their ``Path(image).name``), or by its path below the meta.json's folder. Fields
read (the authors' ``infer_category`` / ``infer_style`` order, meta before the file name):

* form: ``labels.artifact_type``, else ``category``, else ``form``: a code (``AD``) or the
  authors' name (``Analytical Display``), any case;
* style: ``labels.style``, else ``style``: a code (``CC``) or name (``Camera Copy``);
* language: ``labels.language``, ``language`` or ``lang``: zh / en (or Chinese / English);
* label: ``label`` or ``ground_truth``: ai / fake / real (the authors pass it per run with
  ``--ground-truth``; here an FP450 folder says "real").

Other keys are ignored, as the authors ignore them; a row without an image name is skipped (they
skip it too) and counted in the notes. A row naming no image of the release is ignored (a note);
in a scoring-only build (``scoring_only=True``) it becomes an item whose image is absent. A value
the benchmark does not know, a positive whose form or style is known neither from meta.json nor
from its name, two rows giving one image different values, or two identical images stop the
build, naming file, row and field.

Ids and media names are ``sc-`` + the first 16 hex digits of the image's SHA-256 (file names reveal
the hidden form and style). In a scoring-only build an image that is not in the release gets the
digest of ``"absent:" + <its path below the release folder>`` instead (`common.absent_digest`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from leaderboard.builders.common import (
    BuildReport,
    MediaStore,
    Problems,
    Progress,
    Splitter,
    fail,
    load_json,
    open_pack,
)
from leaderboard.core.benchmarks.syncred import FORMS, LANGUAGES, STYLES
from leaderboard.demo import syncred as demo

IMAGE_EXTS = {".png", ".jpg", ".jpeg", ".webp", ".bmp"}
NAME = re.compile(r"^(?P<form>[A-Za-z]{2})_(?P<style>[A-Za-z]{2})_(?P<index>\d+)$")
#: the authors' CATEGORY_LABELS and STYLE_LABELS (evaluate_mllm.py), by lower-cased name
FORM_NAMES = {"media layout": "ML", "institutional notice": "IN", "platform interface": "PI",
              "credential record": "CR", "analytical display": "AD", "assessment material": "AM"}
STYLE_NAMES = {"native rendering": "NR", "scanned copy": "SC", "camera copy": "CC",
               "fax copy": "FC", "screen photograph": "SP", "cropped view": "CV",
               "online compression": "OP"}
VALUES = {
    "form": {**{f.lower(): f for f in FORMS}, **FORM_NAMES},
    "style": {**{s.lower(): s for s in STYLES}, **STYLE_NAMES},
    "language": {"zh": "zh", "en": "en", "chinese": "zh", "english": "en"},
    "label": {"ai": "fake", "fake": "fake", "real": "real"},
}
ALLOWED = {"label": ("fake", "real", "ai"), "form": FORMS + tuple(FORM_NAMES),
           "style": STYLES + tuple(STYLE_NAMES), "language": LANGUAGES}
ID_RULE = ("Item ids are `sc-` followed by the first 16 hex digits of the SHA-256 of the image "
           "file as released; for an image that was not in the release when the pack was built, of "
           "the text `absent:` followed by its path below the release folder.")


def parse_name(stem: str) -> dict | None:
    """{form, style} from ``CONTENT_STYLE_INDEX`` (None when the name is not of that shape)."""
    m = NAME.match(stem)
    if not m or m["form"].upper() not in FORMS or m["style"].upper() not in STYLES:
        return None
    return {"form": m["form"].upper(), "style": m["style"].upper()}


def _is_negative(rel: Path) -> bool:
    return any("fp450" in part.lower() for part in rel.parts[:-1])


@dataclass
class MetaRow:
    where: str          # "FP450/meta.json record 3" (or "entry 'x.png'" for the mapping shape)
    scope: Path         # the meta.json's folder: the row applies to images below it
    image: str          # the name the row gives
    fields: dict


def _rows_of(data, rel: str) -> list[tuple[str, object]]:
    """(where, row) of one meta.json in any of the accepted shapes."""
    if isinstance(data, dict):
        if "data" in data or "items" in data:  # the authors: rows.get("data") or rows.get("items")
            data = data.get("data") or data.get("items") or [data]
        elif data and not any(k in data for k in ("image", "file", "filename")) and all(
                isinstance(v, dict) for v in data.values()):
            return [(f"{rel} entry {k!r}", {"image": k, **v}) for k, v in data.items()]
        else:
            data = [data]
    if not isinstance(data, list):
        raise fail("must be a list of rows, {\"data\": [...]}, {\"items\": [...]} or one row "
                   "object", file=rel)
    return [(f"{rel} record {i}", row) for i, row in enumerate(data)]


def _fields(row: dict, where: str, problems: Problems) -> dict:
    labels = row.get("labels") or {}
    if not isinstance(labels, dict):
        problems.add("must be an object", file=where, field="labels")
        labels = {}
    raw = {"form": labels.get("artifact_type") or row.get("category") or row.get("form"),
           "style": labels.get("style") or row.get("style"),
           "language": labels.get("language") or row.get("language") or row.get("lang"),
           "label": row.get("label") or row.get("ground_truth")}
    out = {}
    for key, value in raw.items():
        if value is None or value == "":
            continue
        got = VALUES[key].get(str(value).strip().lower())
        if got is None:
            problems.add(f"{key} must be one of {list(ALLOWED[key])}, got {value!r}", file=where,
                         field=key)
            continue
        out[key] = got
    return out


def read_meta(root: Path, report: BuildReport) -> list[MetaRow]:
    """Every row of every meta.json under ``root`` (sorted by path, as the authors read them)."""
    problems, out, nameless = Problems(), [], 0
    for path in sorted(root.rglob("meta.json")):
        rel = path.relative_to(root).as_posix()
        for where, row in _rows_of(load_json(path, rel=rel), rel):
            if not isinstance(row, dict):
                problems.add("must be an object", file=where)
                continue
            image = row.get("image") or row.get("file") or row.get("filename")
            if not image:
                nameless += 1
                continue
            out.append(MetaRow(where, path.parent, str(image), _fields(row, where, problems)))
    problems.check("meta.json is not in SynCred-Bench's shape")
    if nameless:
        report.notes.append(f"{nameless} meta.json rows name no image (no image/file/filename): "
                            "skipped, as the authors' load_metadata skips them")
    return out


def _apply(rows: list[MetaRow], facts: dict[Path, dict], root: Path, scoring_only: bool,
           report: BuildReport) -> None:
    """Merge meta.json rows into ``facts`` (image path -> label fields), in place."""
    by_name: dict[str, list[Path]] = {}
    for p in facts:
        by_name.setdefault(p.name, []).append(p)
    problems, source, unmatched = Problems(), {}, 0
    for row in rows:
        exact = row.scope / row.image
        if exact in facts:
            targets = [exact]
        else:
            targets = [p for p in by_name.get(Path(row.image).name, ()) if row.scope in p.parents]
        if not targets and scoring_only:
            targets = [exact]
            rel = exact.relative_to(root) if root in exact.parents else None
            if rel is None or ".." in Path(row.image).parts or Path(row.image).is_absolute():
                problems.add("must name an image below the meta.json's folder", file=row.where,
                             field="image")
                continue
            if exact.suffix.lower() not in IMAGE_EXTS:
                problems.add(f"must name an image ({sorted(IMAGE_EXTS)})", file=row.where,
                             field="image")
                continue
            label = row.fields.get("label") or (
                "real" if _is_negative(rel) else "fake" if parse_name(exact.stem) else None)
            if label is None:
                problems.add("an image that is not in the release needs its label (ai or real), "
                             "or a CONTENT_STYLE_INDEX name, or a place under FP450",
                             file=row.where, field="label")
                continue
            facts.setdefault(exact, {"label": label, **(parse_name(exact.stem) or {})})
        elif not targets:
            unmatched += 1
            continue
        for target in targets:
            for key, value in row.fields.items():
                before = source.get((target, key))
                if before is not None and before[1] != value:
                    problems.add(f"{key} {value!r} contradicts {before[1]!r} given by {before[0]}",
                                 file=row.where, field=key)
                    continue
                source[(target, key)] = (row.where, value)
                facts[target][key] = value
    problems.check("meta.json is not in SynCred-Bench's shape")
    if unmatched:
        report.notes.append(f"{unmatched} meta.json rows name images that are not in the release: "
                            "ignored, as the authors' load_metadata ignores them (build with "
                            "--scoring-only to score them without their images)")


def build(source: Path, out: Path, *, dev_fraction: float = 0.3, private_fraction: float = 0.5,
          seed: int = 0, link_media: bool = False, progress: Progress | None = None,
          scoring_only: bool = False) -> BuildReport:
    """Write a SynCred-Bench pack at ``out`` (replaced) from the release at ``source``."""
    splitter = Splitter(dev_fraction, private_fraction, seed)
    root = Path(source)
    report = BuildReport("syncred", Path(out))
    facts: dict[Path, dict] = {}
    for p in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_EXTS):
        rel = p.relative_to(root)
        facts[p] = {"label": "real" if _is_negative(rel) else "fake", **(parse_name(p.stem) or {})}
    _apply(read_meta(root, report), facts, root, scoring_only, report)
    if not facts:
        raise fail("no images found (and no meta.json rows for a scoring-only build)",
                   file=str(root))
    problems = Problems()
    for p, f in facts.items():
        if f["label"] == "fake" and not {"form", "style"} <= set(f):
            problems.add("a positive must be named CONTENT_STYLE_INDEX (content one of "
                         f"{list(FORMS)}, style one of {list(STYLES)}) or get its form and style "
                         "from meta.json", file=p.relative_to(root).as_posix())
    if not any(f["label"] == "real" for f in facts.values()):
        problems.add("no FP450 folder with real negatives", file=root.name)
    problems.check("the release is not in SynCred-Bench's shape")
    origin = f"This pack was built from the authors' release ({root.name})."
    with open_pack(Path(out), demo.meta(), description=demo.description(source=origin),
                   agreement=demo.agreement(demo=False), scoring_only=scoring_only,
                   id_rule=ID_RULE) as w:
        store = MediaStore(w, link=link_media, scoring_only=scoring_only, report=report)
        rows, seen = [], {}
        for k, (p, fields) in enumerate(facts.items()):
            rel = p.relative_to(root).as_posix()
            media, digest = store.add_file(p, "images", key=rel)
            item_id = f"sc-{digest[:16]}"
            if item_id in seen:
                raise fail(f"the same image as {seen[item_id]}", file=rel)
            seen[item_id] = rel
            rows.append(({"id": item_id, "task": "detection", "modality": "image",
                          "media": [media]}, {"id": item_id, **fields}))
            if progress and (k + 1) % 100 == 0:
                progress(k + 1, len(facts), rel)
        rows.sort(key=lambda r: r[0]["id"])  # id order: the file order says nothing
        for item, label in rows:
            split, part = splitter.assign(item["id"])
            if part:
                label["part"] = part
            w.add(split, item, label)
            report.count(split, "detection", "image")
        w.meta = report.fit_meta(w.meta)
    n_fake = sum(f["label"] == "fake" for f in facts.values())
    report.notes.append(f"{n_fake} positives, {len(facts) - n_fake} negatives")
    return report
