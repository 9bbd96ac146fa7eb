"""TriDF pack from the authors' release (TriDF 3.1-3.4, appendices E-H).

``--from`` is a folder; files are recognized by type and content, whatever the sub-folders:

* **Question files** (``*.json`` arrays or ``*.jsonl``, records with ``question``): a record with
  ``options`` is an MCQ (four options; "E. None of the options are correct" is in the question
  text; ``ground_truth`` a list of letters, or "A,C"; ``target_artifact``), any other is a TFQ
  (``ground_truth`` true/false). Both carry ``sample_path``, ``question``, ``modality``
  (img|vid|aud), ``task`` and TFQs ``question_type`` (artifact|location), ``artifact_type``,
  ``artifact``, ``location``. Question ids: ``question_id`` when given (the challenge's ``qtf_...``,
  ``qmc_...``), else ``<file stem>-<index>`` (0-based list or line index).
* **Artifact CSVs** (``*.csv``), one per DeepFake task (the file stem): one row per fake sample
  (``sample_path``; optional ``sample_id``, ``generator``, ``modality``), one column per artifact
  (taxonomy key or name). A cell is true unless empty, false, 0, none, null or [] (any case).
* **Sample lists** (``*.txt``, one path per line, or ``*.json`` arrays of paths or of
  ``{"sample_path", "sample_id"}``) whose stem says ``real`` or ``fake``: ``<task>/real.txt`` or
  ``<task>_fake.txt`` (the task is the stem without the class word, else the folder's name).

Modality comes from the record, else a path part (img/vid/aud/image/video/audio), else the media
extension. Every fake gets an OEQ type A item; every sample an OEQ type B item, with ids
``oeq_a/<sample>`` and ``oeq_b/<sample>`` where ``<sample>`` is the authors' ``sample_id`` (the
challenge's ``s_...``) or ``s-`` + the media file's SHA-256 prefix. Media are stored under
content-derived names (sample paths often say real/fake). All questions about one sample share its
split and part. ``target_artifact`` is read as the artifact type when it is "quality"/"semantic";
the MCQ's hidden ``artifacts`` are the correct options that name taxonomy artifacts.
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
    iter_csv,
    iter_jsonl,
    load_json,
    normalize_key,
    open_pack,
    record,
    resolve_media,
)
from leaderboard.core.taxonomy import ARTIFACT_TYPES, ARTIFACTS_BY_KEY, TRIDF_ARTIFACTS
from leaderboard.demo.tridf import AGREEMENT, NONE_OPTION, OEQ_A, OEQ_B
from leaderboard.demo.tridf import meta as demo_meta
from leaderboard.demo.writer import stable_fraction

MODALITY = {"img": "image", "image": "image", "vid": "video", "video": "video", "aud": "audio",
            "audio": "audio"}
EXTENSIONS = {"image": {".png", ".jpg", ".jpeg", ".webp", ".bmp"},
              "video": {".mp4", ".avi", ".mov", ".mkv", ".webm"},
              "audio": {".wav", ".mp3", ".flac", ".ogg", ".m4a"}}
FALSE_CELLS = {"", "false", "0", "none", "null", "[]"}
META_COLUMNS = {"sample_path", "sample_id", "generator", "modality", "task"}
_LETTERS = re.compile(r"[A-E]")
_PREFIX = re.compile(r"^\s*\(?([A-E])\)?\s*[.:)]\s+")


def _aliases() -> dict[str, str]:
    out = {}
    for a in TRIDF_ARTIFACTS:
        for name in (a.key, a.name, a.name.split(" & ")[0], a.name.split(" or ")[0]):
            out.setdefault(normalize_key(name), a.key)
    return out


ALIASES = _aliases()


def artifact_key(name) -> str | None:
    """The taxonomy key an artifact name or key denotes (None if it names none)."""
    return ALIASES.get(normalize_key(name)) if isinstance(name, str) else None


def truthy(cell) -> bool:
    """The authors' CSV rule: a cell is true unless empty/false/0/none/null/[]."""
    return str(cell if cell is not None else "").strip().lower() not in FALSE_CELLS


def _modality(value, path: Path) -> str | None:
    if value:
        return MODALITY.get(str(value).strip().lower())
    for part in reversed(path.parts[:-1]):
        if part.lower() in MODALITY:
            return MODALITY[part.lower()]
    ext = path.suffix.lower()
    return next((m for m, exts in EXTENSIONS.items() if ext in exts), None)


def _list_class(path: Path) -> tuple[str, str] | None:
    """(class, task) of a sample list file name, or None if the name says neither class."""
    tokens = normalize_key(path.stem).split("_")
    classes = {t for t in tokens if t in ("real", "fake")}
    if len(classes) != 1:
        return None
    cls = classes.pop()
    rest = "_".join(t for t in tokens if t not in ("real", "fake", "samples", "list"))
    return cls, rest or normalize_key(path.parent.name)


class _Release:
    """Everything read from the release before rows are written."""

    def __init__(self, root: Path, store: MediaStore):
        self.root, self.store = root, store
        self.samples: dict[str, dict] = {}  # normalized sample path -> facts
        self.problems = Problems()

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def sample(self, value, where: str, *, field: str = "sample_path") -> dict | None:
        """The sample a path names (media stored on first sight); None after a problem."""
        src = resolve_media(self.root, str(value or ""))
        if src is None or not src.is_file():
            self.problems.add(f"sample file {value!r} not found under the release", file=where,
                              field=field)
            return None
        key = src.relative_to(self.root).as_posix()
        if key not in self.samples:
            self.samples[key] = {"path": src, "where": where}
        return self.samples[key]

    def set_fact(self, s: dict, name: str, value, where: str) -> None:
        if value in (None, ""):
            return
        if s.get(name) not in (None, value):
            self.problems.add(f"{name} {value!r} contradicts {s[name]!r} given in {s['where']}",
                              file=where, field=name)
        s[name] = value

    def read_list(self, path: Path, cls: str, task: str) -> None:
        rel = self.rel(path)
        if path.suffix == ".txt":
            entries = [(n, {"sample_path": line.strip()}) for n, line in enumerate(
                path.read_text(encoding="utf-8-sig").splitlines(), start=1) if line.strip()]
        else:
            data = load_json(path, rel=rel)
            entries = [(i, {"sample_path": e} if isinstance(e, str) else e)
                       for i, e in enumerate(data)]
        for n, entry in entries:
            where = f"{rel} line {n}" if path.suffix == ".txt" else record(rel, n)
            s = self.sample(entry.get("sample_path"), where) if isinstance(entry, dict) else None
            if s is None:
                continue
            self.set_fact(s, "cls", cls, where)
            self.set_fact(s, "task", task, where)
            self.set_fact(s, "sample_id", entry.get("sample_id"), where)

    def read_csv(self, path: Path) -> None:
        name, task = self.rel(path), normalize_key(path.stem)
        cols = None
        for n, row in iter_csv(path, rel=name):
            if cols is None:
                cols = {c: normalize_key(c) for c in row}
                if "sample_path" not in cols.values():
                    raise fail("an artifact CSV needs a sample_path column", file=name, line=1)
                bad = [c for c, k in cols.items()
                       if k not in META_COLUMNS and artifact_key(c) is None]
                if bad:
                    raise fail(f"columns {bad} name no TriDF artifact; allowed: taxonomy keys or "
                               f"names, and {sorted(META_COLUMNS)}", file=name, line=1)
            cells = {cols[c]: v for c, v in row.items()}
            where = f"{name} line {n}"
            s = self.sample(cells.get("sample_path"), where)
            if s is None:
                continue
            if "artifacts" in s:
                self.problems.add(f"sample {cells['sample_path']!r} has a second artifact row "
                                  f"(first in {s['artifacts_where']})", file=where)
                continue
            s["artifacts"] = sorted({artifact_key(c) for c, v in row.items()
                                     if cols[c] not in META_COLUMNS and truthy(v)})
            s["artifacts_where"] = where
            self.set_fact(s, "task", normalize_key(cells.get("task") or task), where)
            self.set_fact(s, "sample_id", cells.get("sample_id"), where)
            self.set_fact(s, "generator", cells.get("generator"), where)
            if cells.get("modality"):
                self.set_fact(s, "modality", MODALITY.get(cells["modality"].strip().lower()),
                              where)


def _question(rec: dict, stem: str, index: int, where: str, rel: _Release):
    """(task, item, label, sample) of one TFQ/MCQ record; None after a problem."""
    problems = rel.problems
    before = problems.total
    s = rel.sample(rec.get("sample_path"), where)
    modality = MODALITY.get(str(rec.get("modality", "")).strip().lower())
    if modality is None:
        problems.add(f"modality must be one of {sorted(MODALITY)}, got {rec.get('modality')!r}",
                     file=where, field="modality")
    question = rec.get("question")
    if not isinstance(question, str) or not question.strip():
        problems.add("question must be a non-empty string", file=where, field="question")
    if problems.total > before or s is None:
        return None
    rid = str(rec.get("question_id") or f"{stem}-{index}")
    item = {"id": rid, "modality": modality, "question": question}
    task = normalize_key(rec.get("task") or "")
    label = {"id": rid}
    if task:
        label["deepfake_task"] = task
        rel.set_fact(s, "task", task, where)
    rel.set_fact(s, "modality", modality, where)
    rel.set_fact(s, "cls", "fake", where)  # questions are asked about fakes only
    if "options" in rec:
        return _mcq(rec, item, label, where, problems, s)
    gt = rec.get("ground_truth")
    if isinstance(gt, str) and gt.strip().lower() in ("true", "false"):
        gt = gt.strip().lower() == "true"
    if not isinstance(gt, bool):
        problems.add(f"a TFQ's ground_truth must be true or false, got {gt!r}", file=where,
                     field="ground_truth")
        return None
    qtype = str(rec.get("question_type") or "").strip().lower()
    if qtype not in ("artifact", "location"):
        problems.add(f"question_type must be artifact or location, got {qtype!r}", file=where,
                     field="question_type")
        return None
    item["question_type"] = qtype
    art = rec.get("artifact")
    if art:
        key = artifact_key(art)
        if key is None:
            problems.add(f"unknown artifact {art!r}", file=where, field="artifact")
            return None
        item["artifact"] = key
    atype = str(rec.get("artifact_type") or "").strip().lower()
    if atype in ARTIFACT_TYPES:
        item["artifact_type"] = atype
    elif "artifact" in item:
        item["artifact_type"] = ARTIFACTS_BY_KEY[item["artifact"]].type
    if rec.get("location"):
        item["location"] = str(rec["location"]).strip().lower()
    label["answer"] = "yes" if gt else "no"
    return "tfq", item, label, s


def _mcq(rec: dict, item: dict, label: dict, where: str, problems: Problems, s: dict):
    opts = rec.get("options")
    if isinstance(opts, dict):
        opts = [opts[k] for k in sorted(opts)]
    if not isinstance(opts, list) or len(opts) not in (4, 5) or not all(
            isinstance(o, str) for o in opts):
        problems.add("options must be a list of 4 option texts", file=where, field="options")
        return None
    options = {}
    for j, text in enumerate(opts[:4]):
        m = _PREFIX.match(text)
        options["ABCD"[j]] = text[m.end():] if m and m.group(1) == "ABCD"[j] else text
    options["E"] = NONE_OPTION
    gt = rec.get("ground_truth")
    letters = _LETTERS.findall(gt.upper()) if isinstance(gt, str) else gt
    if not isinstance(letters, list) or not letters or not all(
            isinstance(x, str) and x.strip().upper() in options for x in letters):
        problems.add(f"an MCQ's ground_truth must be a non-empty list of letters A-E, got {gt!r}",
                     file=where, field="ground_truth")
        return None
    letters = sorted({x.strip().upper() for x in letters})
    if "E" in letters and len(letters) > 1:
        problems.add(f"E (none of the options) cannot be combined with {letters}", file=where,
                     field="ground_truth")
        return None
    target = str(rec.get("target_artifact") or "").strip().lower()
    qtype = str(rec.get("question_type") or "").strip().lower()
    if qtype not in ("artifact", "location"):
        qtype = "location" if target == "location" else "artifact"
    item.update(question_type=qtype, options=options)
    atype = str(rec.get("artifact_type") or target).strip().lower()
    if atype in ARTIFACT_TYPES:
        item["artifact_type"] = atype
    arts = []
    if qtype == "artifact":
        arts = sorted({k for k in (artifact_key(options[x]) for x in letters if x != "E") if k})
    label.update(answer=letters, artifacts=arts)
    return "mcq", item, label, s


def _classify(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix == ".txt":
        return "list" if _list_class(path) else "skip"
    if suffix in (".json", ".jsonl"):
        if _list_class(path) and suffix == ".json":
            head = path.read_bytes()[:4096]
            if b'"question"' not in head and b'"\x00q\x00u\x00e' not in head:
                return "list"
        return "questions"
    return "skip"


def build(source: Path, out: Path, *, dev_fraction: float = 0.3, private_fraction: float = 0.5,
          seed: int = 0, link_media: bool = False, progress: Progress | None = None
          ) -> BuildReport:
    """Write a TriDF pack at ``out`` (replaced) from the release at ``source``."""
    splitter = Splitter(dev_fraction, private_fraction, seed)
    root = Path(source)
    files = [p for p in sorted(root.rglob("*")) if p.is_file()]
    kinds = {p: _classify(p) for p in files}
    if not any(k == "questions" for k in kinds.values()):
        raise fail("no question files (*.json / *.jsonl with TFQ or MCQ records) found",
                   file=str(root))
    report = BuildReport("tridf", Path(out))
    rows = []
    with open_pack(Path(out), demo_meta(), description=_description(root.name),
                   agreement=AGREEMENT) as w:
        rel = _Release(root, MediaStore(w, link=link_media))
        for p in files:
            if kinds[p] == "list":
                rel.read_list(p, *_list_class(p))
        for p in files:
            if kinds[p] == "csv":
                rel.read_csv(p)
        rel.problems.check("sample lists or artifact CSVs are not in TriDF's shape")
        questions = [p for p in files if kinds[p] == "questions"]
        qids: dict[str, str] = {}
        for k, p in enumerate(questions):
            name = rel.rel(p)
            if p.suffix == ".jsonl":
                records = iter_jsonl(p, rel=name)
            else:
                data = load_json(p, rel=name)
                if not isinstance(data, list):  # dataset cards, configs: not question files
                    report.notes.append(f"{name}: not a JSON array, skipped")
                    continue
                records = enumerate(data)
            for n, rec in records:
                where = f"{name} line {n}" if p.suffix == ".jsonl" else record(name, n)
                if not isinstance(rec, dict):
                    rel.problems.add("each record must be a JSON object", file=where)
                    continue
                index = n - 1 if p.suffix == ".jsonl" else n
                parsed = _question(rec, p.stem, index, where, rel)
                if parsed is None:
                    continue
                qid = parsed[1]["id"]
                if qid in qids:
                    rel.problems.add(f"duplicate question id {qid!r} (first: {qids[qid]})",
                                     file=where, field="question_id")
                    continue
                qids[qid] = where
                rows.append(parsed)
            if progress:
                progress(k + 1, len(questions), name)
        rel.problems.check("question files are not in TriDF's shape")
        keys: dict[str, str] = {}
        for s in rel.samples.values():
            _finish_sample(s, rel)
            if s["key"] in keys:
                rel.problems.add(f"sample id {s['key']!r} also names {keys[s['key']]}",
                                 file=s["where"], field="sample_id")
            keys[s["key"]] = rel.rel(s["path"])
        rel.problems.check("samples are not in TriDF's shape")
        rows += _oeq_rows(rel)
        rows.sort(key=lambda r: stable_fraction("order", r[1]["id"], seed=seed))
        for task, item, label, s in rows:
            item = {**item, "task": task, "media": [s["media"]]}
            if s.get("generator"):
                label["generator"] = s["generator"]
            if s.get("task") and "deepfake_task" not in label:
                label["deepfake_task"] = s["task"]
            split, part = splitter.assign(s["key"])
            if part:
                label["part"] = part
            w.add(split, item, label)
            report.count(split, task, item["modality"])
        w.meta = report.fit_meta(w.meta)
    return report


def _finish_sample(s: dict, rel: _Release) -> None:
    """Store the media and fix the sample's key, class and modality."""
    s["media"], digest = rel.store.add_file(s["path"], "samples")
    s["key"] = str(s.get("sample_id") or f"s-{digest[:16]}")
    if s.get("modality") is None:
        s["modality"] = _modality(None, Path(rel.rel(s["path"])))
    if s["modality"] is None:
        rel.problems.add("cannot tell the modality of this sample (no record or folder names "
                         "it, and its extension is unknown)", file=s["where"], field="sample_path")
    if s.get("cls") == "fake" and "artifacts" not in s:
        rel.problems.add(f"fake sample {rel.rel(s['path'])!r} has no row in any artifact CSV",
                         file=s["where"], field="sample_path")
    if s.get("cls") == "real" and s.get("artifacts"):
        rel.problems.add("a real sample has annotated artifacts", file=s["artifacts_where"])
    if s.get("cls") is None:
        rel.problems.add("sample is in an artifact CSV but in no real/fake sample list",
                         file=s["artifacts_where"], field="sample_path")


def _oeq_rows(rel: _Release) -> list:
    rows = []
    for s in rel.samples.values():
        m = s["modality"]
        hidden = {"artifacts": s.get("artifacts", []) if s["cls"] == "fake" else [],
                  "label": s["cls"]}
        if s["cls"] == "fake":
            rid = f"oeq_a/{s['key']}"
            rows.append(("oeq_a", {"id": rid, "modality": m, "question": OEQ_A.format(m=m)},
                         {"id": rid, **hidden}, s))
        rid = f"oeq_b/{s['key']}"
        rows.append(("oeq_b", {"id": rid, "modality": m, "question": OEQ_B.format(m=m)},
                     {"id": rid, **hidden}, s))
    return rows


def _description(source_name: str) -> str:
    from leaderboard.core.benchmarks.tridf import TriDF

    metrics = "\n".join(f"- **{spec.title}** (`{name}`): {spec.description}"
                        for name, spec in TriDF.metrics.items())
    return f"""# TriDF

TriDF evaluates interpretable DeepFake detection by multimodal LLMs: Perception (true/false,
multiple-choice and open-ended type A questions), Detection (open-ended type B: authentic or
manipulated?) and Hallucination (CHAIR, Hal and F0.5 of the open answers), over image, video and
audio. This pack was built from the authors' release ({source_name}).

## Metrics
{metrics}

Open answers may give `artifacts` (taxonomy keys) directly ("self-mapped"); otherwise a judge maps
`response` onto the item modality's artifacts. The authors' challenge ZIP (four JSONL files) is
accepted as a submission. 95% bootstrap confidence intervals over items, fixed seed.
"""

