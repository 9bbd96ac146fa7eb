"""LOKI pack from the authors' release (Ye et al., ICLR 2025; the layout of their public data).

Release layout read (``--from`` is the release root, or its ``data_json`` folder)::

    data_json/{image,video,3D,text}/*.json   JSON arrays of questions (any encoding with a BOM,
                                             else UTF-8; image/open_ended_vqa.json is UTF-16)
    media_data/{image,video,3D}/...          media named by each record's media key

Record fields: ``question``, ``answer`` ("Yes"/"No" or an option letter), ``metric``
(``open-ended`` -> task ``judgment``; ``multi-choice`` -> ``multiple_choice`` when the
``question_type`` is ``<mod>_mc_{real_from_fake|fake_from_real}_<subcat>``, else
``abnormal_selection``; ``model-as-judge`` -> ``explanation``), ``modality`` (``image-text``,
``video-text``, ``point-text``, ``text-only``; ``audio-text`` accepted for a future audio part),
``question_type``, ``choices``, a media key (``image_path``, ``video_path``, ``point_path``; a
string, a list, or a folder of views), optional ``id``, and for explanations ``problems``
(global and regional annotations, stored as the hidden ``reference``).

``question_type`` of a judgment is ``<mod>_tf_<mod>_{real|fake}_ask_{real|fake}_<subcat>``: the
first real/fake is the truth, the second the phrasing (``ask_fake`` asks "is it AI-generated?");
the answer must agree with them (a disagreement stops the build: the file is then misread).
Multiple choice ``fake_from_real`` asks for the AI-generated one (``ask_fake``).

Item ids: ``loki/<folder>/<file stem>/<key>``, where ``key`` is the record's own ``id`` when every
record of that file has one, all distinct and made of id characters, and otherwise the record's
0-based list index for every record of the file (the index is the only stable key there).

Splits: items that share a media file are one unit (union of shared files: a sample's two
judgment phrasings, its pair's multiple-choice questions, its selection and explanation items all
land in one split and part); text items have no media and are their own units. Rows are written
in an order shuffled by the seed, so the authors' file order (often grouped by truth) is not
visible. Not in the release, hence never filled: ``difficulty``, ``generator``, text ``language``
and ``length``.
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
    record,
    resolve_media,
)
from leaderboard.core.benchmarks.loki import Loki
from leaderboard.demo.loki import AGREEMENT
from leaderboard.demo.writer import stable_fraction

MODALITY = {"image-text": "image", "video-text": "video", "point-text": "3d", "text-only": "text",
            "audio-text": "audio"}
METRICS = ("open-ended", "multi-choice", "model-as-judge")
MEDIA_KEYS = ("image_path", "video_path", "point_path", "audio_path")
NOUN = {"image": "image", "video": "video", "3d": "3D object", "text": "text", "audio": "audio"}
_TF = re.compile(r"^[^_]+_tf_[^_]+_(real|fake)_ask_(real|fake)_(.+)$", re.I)
_MC = re.compile(r"^[^_]+_mc_(real_from_fake|fake_from_real)_(.+)$", re.I)
_ID_OK = re.compile(r"^[A-Za-z0-9._:\-]{1,120}$")
_LETTER_PREFIX = re.compile(r"^\s*\(?([A-Z])\)?\s*[.:)]\s+")
_ANSWER_LETTER = re.compile(r"^\(?([A-Za-z])\)?[.:]?$")

META = {
    "key": "loki", "title": "LOKI", "version": "1",
    "modalities": ["video", "image", "3d", "text", "audio"],
    "tasks": [
        {"key": "judgment", "kind": "yesno", "title": "Judgment",
         "modalities": ["video", "image", "3d", "text", "audio"], "headline": "accuracy",
         "secondary": ["balanced_accuracy"],
         "description": "Is it AI-generated? / Is it real? Every sample is asked both ways."},
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


def _options(rec: dict, media: list[str], modality: str, where: str, problems: Problems
             ) -> dict[str, str] | None:
    choices = rec.get("choices")
    if isinstance(choices, dict) and choices:
        return {str(k).strip().upper().strip("()."): str(v) for k, v in choices.items()}
    if isinstance(choices, list) and choices:
        out = {}
        for j, text in enumerate(choices):
            letter = chr(ord("A") + j)
            text = str(text)
            m = _LETTER_PREFIX.match(text)
            out[letter] = text[m.end():] if m and m.group(1) == letter else text
        return out
    if len(media) >= 2:  # image/video pairs are often shipped without option texts
        ordinals = ("first", "second", "third", "fourth")
        return {chr(ord("A") + j): f"the {ordinals[j]} {NOUN[modality]}"
                for j in range(min(len(media), 4))}
    problems.add("a multiple-choice record needs 'choices' (or two media files)", file=where,
                 field="choices")
    return None


def _letter(answer, options: dict, where: str, problems: Problems) -> str | None:
    m = _ANSWER_LETTER.match(str(answer).strip()) if answer is not None else None
    if not m or m.group(1).upper() not in options:
        problems.add(f"answer must be one of the option letters {sorted(options)}, got "
                     f"{answer!r}", file=where, field="answer")
        return None
    return m.group(1).upper()


def _parse(rec, where: str, folder_modality: str | None, problems: Problems):
    """(task, item fields, label fields, media values) of one record; None after a problem."""
    if not isinstance(rec, dict):
        problems.add("each record must be a JSON object", file=where)
        return None
    before = problems.total
    metric = rec.get("metric")
    if metric not in METRICS:
        problems.add(f"unknown metric {metric!r}; allowed: {list(METRICS)}", file=where,
                     field="metric")
    raw_mod = rec.get("modality")
    modality = MODALITY.get(str(raw_mod).strip().lower()) if raw_mod else folder_modality
    if modality is None:
        problems.add(f"unknown modality {raw_mod!r}; allowed: {list(MODALITY)}", file=where,
                     field="modality")
    question = rec.get("question")
    if not isinstance(question, str) or not question.strip():
        problems.add("question must be a non-empty string", file=where, field="question")
    media = []
    for key in MEDIA_KEYS:
        v = rec.get(key)
        if v:
            media += [str(x) for x in (v if isinstance(v, list) else [v])]
    if problems.total > before:
        return None
    qtype = str(rec.get("question_type") or "")
    item, label = {"modality": modality, "question": question}, {}
    if metric == "open-ended":
        task = "judgment"
        m = _TF.match(qtype)
        if not m:
            problems.add("a judgment needs question_type <mod>_tf_<mod>_{real|fake}_ask_"
                         f"{{real|fake}}_<subcat>, got {qtype!r}", file=where,
                         field="question_type")
            return None
        truth, ask, sub = m.group(1).lower(), m.group(2).lower(), m.group(3)
        answer = str(rec.get("answer", "")).strip().rstrip(".").lower()
        if answer not in ("yes", "no"):
            problems.add(f'answer must be "Yes" or "No", got {rec.get("answer")!r}', file=where,
                         field="answer")
            return None
        if (answer == "yes") != (truth == ask):
            problems.add(f"answer {rec.get('answer')!r} contradicts question_type {qtype!r}",
                         file=where, field="answer")
            return None
        item["phrasing"] = f"ask_{ask}"
        label.update(answer=answer, truth=truth, subcategory=sub)
    elif metric == "multi-choice":
        m = _MC.match(qtype)
        task = "multiple_choice" if m else "abnormal_selection"
        options = _options(rec, media, modality, where, problems)
        if options is None:
            return None
        letter = _letter(rec.get("answer"), options, where, problems)
        if letter is None:
            return None
        item["options"] = options
        label["answer"] = letter
        if m:
            item["phrasing"] = "ask_fake" if m.group(1).lower() == "fake_from_real" else "ask_real"
            label["subcategory"] = m.group(2)
    else:
        task = "explanation"
        ref = rec.get("problems")
        if not isinstance(ref, dict) or not ref:
            problems.add('an explanation needs "problems": {"global": [...], "regional": [...]}',
                         file=where, field="problems")
            return None
        label["reference"] = ref
    return task, item, label, media


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


def build(source: Path, out: Path, *, dev_fraction: float = 0.3, private_fraction: float = 0.5,
          seed: int = 0, link_media: bool = False, progress: Progress | None = None
          ) -> BuildReport:
    """Write a LOKI pack at ``out`` (replaced) from the release at ``source``."""
    splitter = Splitter(dev_fraction, private_fraction, seed)
    source = Path(source)
    data = source / "data_json" if (source / "data_json").is_dir() else source
    root = data.parent if data.name == "data_json" else source
    files = sorted(data.rglob("*.json"))
    if not files:
        raise fail("no JSON question files found (expected data_json/<modality>/*.json)",
                   file=str(source))
    report = BuildReport("loki", Path(out))
    rows, units = [], _Units()
    with open_pack(Path(out), META, description=_description(source.name),
                   agreement=AGREEMENT) as w:
        store = MediaStore(w, link=link_media)
        for k, path in enumerate(files):
            rel = path.relative_to(root).as_posix()
            folder = path.parent.relative_to(data).as_posix()
            records = load_json(path, rel=rel)
            if not isinstance(records, list):
                raise fail("must be a JSON array of question records", file=rel)
            problems = Problems()
            keys = _file_keys(records, rel)
            folder_mod = {"image": "image", "video": "video", "3d": "3d", "text": "text",
                          "audio": "audio"}.get(path.parent.name.lower())
            for i, rec in enumerate(records):
                where = record(rel, i)
                parsed = _parse(rec, where, folder_mod, problems)
                if parsed is None:
                    continue
                task, item, label, media = parsed
                rid = f"loki/{folder}/{path.stem}/{keys[i]}"
                item = {"id": rid, "task": task, **item}
                stored = _store_media(root, media, store, item["modality"], where, problems)
                if stored is None:
                    continue
                if stored[0]:
                    item["media"] = stored[0]
                    units.union([f"m:{d}" for d in stored[1]] + [f"i:{rid}"])
                else:
                    units.union([f"i:{rid}"])
                rows.append((item, {"id": rid, **label}))
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
        w.meta = report.fit_meta(w.meta)
    return report


def _description(source_name: str) -> str:
    metrics = "\n".join(f"- **{spec.title}** (`{name}`): {spec.description}"
                        for name, spec in Loki.metrics.items())
    return f"""# LOKI

LOKI (Ye et al., *LOKI: A Comprehensive Synthetic Data Detection Benchmark using Large Multimodal
Models*, ICLR 2025) asks large multimodal models whether video, image, 3D and text samples are
AI-generated, and why. This pack was built from the authors' release ({source_name}).

## Tasks
- **Judgment** (yes/no): "Is it AI-generated?" (`phrasing` = `ask_fake`) or "Is it real?"
  (`ask_real`).
- **Multiple choice**: pick the AI-generated (or the real) one of a same-domain pair.
- **Abnormal detail selection**: pick the inconsistent detail.
- **Abnormal explanation**: explain why the sample is AI-generated; a judge rates the answer
  against the human annotation.

## Metrics
{metrics}

Free-text answers are read with LOKI's rules; unparsable answers are wrong and counted. 95%
bootstrap confidence intervals over items, fixed seed.
"""
