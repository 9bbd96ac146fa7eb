"""LOKI pack from the authors' release (Ye et al., ICLR 2025; the layout of their public data).

Release layout read (``--from`` is the release root, or its ``data_json`` folder)::

    data_json/{image,video,3D,text}/*.json   JSON arrays of questions (any encoding with a BOM,
                                             else UTF-8; image/open_ended_vqa.json is UTF-16)
    media_data/{image,video,3D}/...          media named by each record's media key

The whole ``data_json`` folder is read in one call; how a record becomes an item is in
`loki_records`. An ``all_questions_combined.json`` beside per-task files repeats their records:
it is checked to hold nothing else and skipped (a note says so), so nothing counts twice; alone it
is read like any question file.

Without a ``media_data`` folder (the authors' GitHub repository ships ``data_json`` only) the pack
is built without media: labels and ids, enough to score uploaded predictions, nothing to download
or run containers on; a note says so. With one, every media file must exist.

Item ids: ``loki/<folder>/<file stem>/<key>``, where ``key`` is the record's own ``id`` when every
record of that file has one, all distinct and made of id characters, and otherwise the record's
0-based list index for every record of the file (the index is the only stable key there). The
hidden labels keep each item's authors' file (``source``, its path under ``data_json``) and index
(``source_index``), and ``benchmark.yaml`` lists every file's record count (``sources``), so a
submission in the authors' own ``{"model", "responses"}`` format is aligned by file and index
(`leaderboard.core.authors_format`).

Splits: items that share a media file are one unit (union of shared files, or of the authors'
media paths when the pack has no media: a sample's two judgment phrasings, its pair's
multiple-choice questions, its selection and explanation items all land in one split and part);
text items have no media and are their own units. Rows are written in an order shuffled by the
seed, so the authors' file order (often grouped by truth) is not visible. Not in the release,
hence never filled: ``difficulty``, ``generator``, text ``language`` and ``length``.
"""
from __future__ import annotations

import json
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
    record,
    resolve_media,
)
from leaderboard.builders.loki_records import MEDIA_KEYS, parse_record
from leaderboard.core.benchmarks.loki import Loki
from leaderboard.demo.loki import AGREEMENT, fidelity_section
from leaderboard.demo.writer import stable_fraction

_ID_OK = re.compile(r"^[A-Za-z0-9._:\-]{1,120}$")
COMBINED = "all_questions_combined"

META = {
    "key": "loki", "title": "LOKI", "version": "1",
    "modalities": ["video", "image", "3d", "text", "audio"],
    "tasks": [
        {"key": "judgment", "kind": "yesno", "title": "Judgment",
         "modalities": ["video", "image", "3d", "text", "audio"], "headline": "accuracy",
         "secondary": ["balanced_accuracy"],
         "description": "Is it AI-generated? / Is it real? Every sample is asked both ways "
                        "(3D as multi-view renders)."},
        {"key": "point_cloud_judgment", "kind": "yesno", "title": "Judgment (3D point clouds)",
         "modalities": ["3d"], "headline": "accuracy", "secondary": ["balanced_accuracy"],
         "description": "The judgment questions on 3D point clouds (the paper's supplement)."},
        {"key": "multiple_choice", "kind": "choice", "title": "Multiple choice",
         "modalities": ["video", "image", "3d", "text", "audio"], "headline": "accuracy",
         "secondary": ["balanced_accuracy"],
         "description": "Pick the AI-generated (or the real) one of a same-domain pair."},
        {"key": "abnormal_selection", "kind": "choice", "title": "Abnormal detail selection",
         "modalities": ["video", "image", "3d", "text", "audio"], "headline": "accuracy",
         "secondary": [], "description": "Pick the inconsistent detail of an AI-generated sample."},
        {"key": "explanation", "kind": "explanation", "title": "Abnormal explanation",
         "modalities": ["video", "image", "3d", "text", "audio"], "headline": "explanation_score",
         "secondary": [], "description": "Explain why the sample is AI-generated; a judge rates "
                                         "the answer against the human annotation."},
    ],
    "splits": ["dev", "test"],
}


def _file_keys(records: list, rel: str) -> list[str]:
    """The authors' ids when usable for the whole file, else list indices (see module doc)."""
    ids = [r.get("id") if isinstance(r, dict) else None for r in records]
    texts = [str(i) for i in ids if isinstance(i, (str, int)) and not isinstance(i, bool)]
    if len(texts) == len(ids) and len(set(texts)) == len(texts) and all(
            _ID_OK.match(t) for t in texts):
        return texts
    return [str(i) for i in range(len(records))]


class _Units:
    """Union-find over media digests: items sharing a file form one split unit."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, keys: list[str]) -> None:
        roots = sorted({self.find(k) for k in keys})
        for r in roots[1:]:
            self.parent[r] = roots[0]


def _store_media(root: Path, values: list[str], store: MediaStore, modality: str, where: str,
                 problems: Problems) -> tuple[list[str], list[str]] | None:
    rels, digests = [], []
    for v in values:
        src = resolve_media(root, v, bases=("", "media_data"))
        if src is None:
            problems.add(f"media file {v!r} not found under the release (nor media_data/)",
                         file=where, field="media")
            return None
        files = sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else [src]
        if not files:
            problems.add(f"media folder {v!r} is empty", file=where, field="media")
            return None
        for f in files:
            rel, digest = store.add_file(f, modality)
            rels.append(rel)
            digests.append(digest)
    return rels, digests


def _record_key(rec) -> str:
    """What makes two records the same question (the combined file repeats per-task records)."""
    if not isinstance(rec, dict):
        return json.dumps(rec, sort_keys=True, ensure_ascii=False)
    core = {k: rec.get(k) for k in ("question", "answer", "question_type", "choices",
                                    *MEDIA_KEYS)}
    return json.dumps(core, sort_keys=True, ensure_ascii=False, default=str)


def _question_files(data: Path, root: Path, report: BuildReport) -> list[Path]:
    """Every question file, without a combined file that only repeats the per-task files."""
    files = sorted(data.rglob("*.json"))
    combined = [f for f in files if f.stem.lower().startswith(COMBINED)]
    per_task = [f for f in files if f not in combined]
    if not combined or not per_task:
        return files
    known = set()
    for f in per_task:
        records = load_json(f, rel=f.relative_to(root).as_posix())
        known.update(_record_key(r) for r in records if isinstance(records, list))
    for f in combined:
        rel = f.relative_to(root).as_posix()
        records = load_json(f, rel=rel)
        if not isinstance(records, list):
            raise fail("must be a JSON array of question records", file=rel)
        for i, rec in enumerate(records):
            if _record_key(rec) not in known:
                raise fail("this combined file holds a question that no per-task file has; "
                           "keep either the per-task files or the combined file",
                           file=record(rel, i))
        report.notes.append(f"{rel}: skipped, its {len(records)} records repeat the per-task "
                            "files")
    return per_task


def build(source: Path, out: Path, *, dev_fraction: float = 0.3, private_fraction: float = 0.5,
          seed: int = 0, link_media: bool = False, progress: Progress | None = None
          ) -> BuildReport:
    """Write a LOKI pack at ``out`` (replaced) from the release at ``source``."""
    splitter = Splitter(dev_fraction, private_fraction, seed)
    source = Path(source)
    data = source / "data_json" if (source / "data_json").is_dir() else source
    root = data.parent if data.name == "data_json" else source
    report = BuildReport("loki", Path(out))
    files = _question_files(data, root, report)
    if not files:
        raise fail("no JSON question files found (expected data_json/<modality>/*.json)",
                   file=str(source))
    with_media = (root / "media_data").is_dir()
    if not with_media:
        report.notes.append("no media_data/ folder: the pack has labels and ids but no media "
                            "(it scores uploaded predictions; nothing to download or run)")
    rows, units, sources = [], _Units(), {}
    with open_pack(Path(out), META, description=_description(source.name, with_media),
                   agreement=AGREEMENT) as w:
        store = MediaStore(w, link=link_media)
        for k, path in enumerate(files):
            rel = path.relative_to(root).as_posix()
            src = path.relative_to(data).as_posix()
            folder = path.parent.relative_to(data).as_posix()
            records = load_json(path, rel=rel)
            if not isinstance(records, list):
                raise fail("must be a JSON array of question records", file=rel)
            sources[src] = len(records)
            problems = Problems()
            keys = _file_keys(records, rel)
            for i, rec in enumerate(records):
                where = record(rel, i)
                parsed = parse_record(rec, where, path.parent.name.lower(), problems)
                if parsed is None:
                    continue
                task, item, label, media = parsed
                rid = f"loki/{folder}/{path.stem}/{keys[i]}"
                item = {"id": rid, "task": task, **item}
                label = {"id": rid, **label, "source": src, "source_index": i}
                shared = [f"p:{m}" for m in media]
                if with_media:
                    stored = _store_media(root, media, store, item["modality"], where, problems)
                    if stored is None:
                        continue
                    if stored[0]:
                        item["media"] = stored[0]
                    shared = [f"m:{d}" for d in stored[1]]
                units.union(shared + [f"i:{rid}"])
                rows.append((item, label))
            problems.check(f"{rel}: records are not in LOKI's shape")
            if progress:
                progress(k + 1, len(files), rel)
        rows.sort(key=lambda r: stable_fraction("order", r[0]["id"], seed=seed))
        for item, label in rows:
            split, part = splitter.assign(units.find(f"i:{item['id']}"))
            if part:
                label["part"] = part
            w.add(split, item, label)
            report.count(split, item["task"], item["modality"])
        w.meta = {**report.fit_meta(w.meta), "sources": sources}
    return report


def _description(source_name: str, with_media: bool) -> str:
    metrics = "\n".join(f"- **{spec.title}** (`{name}`): {spec.description}"
                        for name, spec in Loki.metrics.items())
    media = "" if with_media else (
        "\n\nThe release had no media (`media_data/`): this pack holds the questions' labels and "
        "ids only. It scores uploaded predictions; there is nothing to download and no container "
        "run.")
    return f"""# LOKI

LOKI (Ye et al., *LOKI: A Comprehensive Synthetic Data Detection Benchmark using Large Multimodal
Models*, ICLR 2025) asks large multimodal models whether video, image, 3D and text samples are
AI-generated, and why. This pack was built from the authors' release ({source_name}).{media}

## Tasks
- **Judgment** (yes/no): "Is it AI-generated?" (`phrasing` = `ask_fake`) or "Is it real?"
  (`ask_real`); 3D as multi-view renders (the paper's main input).
- **Judgment (3D point clouds)**: the same questions on point clouds (the paper's supplement;
  the authors' `3D/point_true_or_false.json`).
- **Multiple choice**: pick the AI-generated (or the real) one of a same-domain pair.
- **Abnormal detail selection**: pick the inconsistent detail.
- **Abnormal explanation**: explain why the sample is AI-generated; a judge rates the answer
  against the human annotation.

## Metrics
{metrics}

95% bootstrap confidence intervals over items, fixed seed.

{fidelity_section()}"""
