"""SynCred-Bench pack from the authors' release (seed 002: 600 positives + FP450).

Release layout read (``--from`` is its folder)::

    <any folder>/CONTENT_STYLE_INDEX.png   the 600 GPT-Image-2 positives, e.g. ML_SC_017.png
                                           (content ML IN PI CR AD AM; style NR SC CC FC SP CV OP)
    <folder named *FP450*>/...             the 450 real negatives (label "real"); a negative named
                                           CONTENT_STYLE_INDEX gets that form and style too
    meta.json (optional, at the top)       per-file overrides: {"ML_SC_017.png": {"label": ...,
                                           "form": ..., "style": ..., "language": "zh"|"en"}}
                                           or a list of such objects with a "file" key

Images are .png, .jpg, .jpeg or .webp; other files are ignored. An image outside FP450 whose name
is not CONTENT_STYLE_INDEX stops the build (naming it), as does a meta.json entry for a file that is
not there or with a value the benchmark does not know. File names reveal the hidden form and style,
so item ids and media names are ``sc-`` + the first 16 hex digits of the image's SHA-256; two
identical images stop the build. Language is only known from meta.json.
"""
from __future__ import annotations

import re
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

IMAGE_EXTS = {".png", ".jpg", ".jpeg", ".webp"}
NAME = re.compile(r"^(?P<form>[A-Za-z]{2})_(?P<style>[A-Za-z]{2})_(?P<index>\d+)$")
ALLOWED = {"label": ("fake", "real"), "form": FORMS, "style": STYLES, "language": LANGUAGES}


def parse_name(stem: str) -> dict | None:
    """{form, style} from ``CONTENT_STYLE_INDEX`` (None when the name is not of that shape)."""
    m = NAME.match(stem)
    if not m or m["form"].upper() not in FORMS or m["style"].upper() not in STYLES:
        return None
    return {"form": m["form"].upper(), "style": m["style"].upper()}


def _overrides(path: Path, names: dict[str, Path], root: Path) -> dict[Path, dict]:
    """meta.json entries by image path; problems name the entry."""
    data = load_json(path, rel="meta.json")
    if isinstance(data, dict):
        entries = [(str(k), v, f"meta.json entry {k!r}") for k, v in data.items()]
    elif isinstance(data, list):
        entries = [(str(e.get("file") or e.get("filename") or "") if isinstance(e, dict) else "",
                    e, f"meta.json record {i}") for i, e in enumerate(data)]
    else:
        raise fail("must map file names to label objects, or be a list of objects with 'file'",
                   file="meta.json")
    problems, out = Problems(), {}
    for name, value, where in entries:
        target = names.get(name) or names.get(Path(name).name)
        if target is None and (root / name).is_file():
            target = root / name
        if target is None:
            problems.add(f"no image {name!r} in the release", file=where)
            continue
        if not isinstance(value, dict):
            problems.add("must be an object of label fields", file=where)
            continue
        fields = {}
        for key in ALLOWED:
            v = value.get(key)
            if v is None:
                continue
            v = str(v).strip()
            v = v.lower() if key in ("label", "language") else v.upper()
            if v not in ALLOWED[key]:
                problems.add(f"{key} must be one of {list(ALLOWED[key])}, got {value.get(key)!r}",
                             file=where, field=key)
            fields[key] = v
        out[target] = fields
    problems.check("meta.json is not in SynCred-Bench's shape")
    return out


def build(source: Path, out: Path, *, dev_fraction: float = 0.3, private_fraction: float = 0.5,
          seed: int = 0, link_media: bool = False, progress: Progress | None = None
          ) -> BuildReport:
    """Write a SynCred-Bench pack at ``out`` (replaced) from the release at ``source``."""
    splitter = Splitter(dev_fraction, private_fraction, seed)
    root = Path(source)
    images = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_EXTS)
    if not images:
        raise fail("no images found", file=str(root))
    problems, facts = Problems(), {}
    for p in images:
        rel = p.relative_to(root).as_posix()
        negative = any("fp450" in part.lower() for part in p.relative_to(root).parts[:-1])
        parsed = parse_name(p.stem)
        if parsed is None and not negative:
            problems.add("a positive must be named CONTENT_STYLE_INDEX (content one of "
                         f"{list(FORMS)}, style one of {list(STYLES)})", file=rel)
            continue
        facts[p] = {"label": "real" if negative else "fake", **(parsed or {})}
    if not any(f["label"] == "real" for f in facts.values()):
        problems.add("no FP450 folder with real negatives", file=root.name)
    problems.check("the release is not in SynCred-Bench's shape")
    meta_path = root / "meta.json"
    if meta_path.is_file():
        by_name: dict[str, Path] = {}
        for p in facts:
            by_name.setdefault(p.name, p)
            by_name[p.relative_to(root).as_posix()] = p
        for p, fields in _overrides(meta_path, by_name, root).items():
            facts[p].update(fields)
    report = BuildReport("syncred", Path(out))
    origin = f"This pack was built from the authors' release ({root.name})."
    with open_pack(Path(out), demo.meta(), description=demo.description(source=origin),
                   agreement=demo.agreement(demo=False)) as w:
        store, rows, seen = MediaStore(w, link=link_media), [], {}
        for k, (p, fields) in enumerate(facts.items()):
            rel = p.relative_to(root).as_posix()
            media, digest = store.add_file(p, "images")
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

