"""TriDF pack from the authors' release (TriDF 3.1-3.4, appendices E-H), in one call.

``--from`` is a folder: the authors' GitHub release (j1anglin/TriDF), with or without the gated
data (``1_DATA/``, ``2_GT_Final/``), or the TRIDENT challenge's data root
(`leaderboard.builders.tridf_trident`). Files are recognized by type and content, wherever they are:

* **Question files** (``*.json`` arrays or ``*.jsonl`` of records with ``question``:
  ``benchmark_perception_tf/``, ``benchmark_perception_mc/``), read by
  `leaderboard.builders.tridf_questions`. Question ids are the authors' (``make_question_id`` of
  ``score_perception_original.py``): ``<file stem>-<index>``, or the record's ``question_id``.
  ``all_questions_combined*.json`` next to other question files is the same questions again and
  is skipped (the authors' inference skips it too).
* **Ground-truth CSVs** (``<task>.csv``, ``<task>_com.csv``: ``2_GT_Final``), read by
  `leaderboard.builders.tridf_gt` as ``cal_score.py`` reads them.
* **Real-sample lists** (``*.txt``, one sample path a line, or ``*.json`` arrays of paths or of
  ``{"sample_path", "sample_id"}``) whose name says ``real`` (``<task>_real.txt``, ``real.txt`` in
  the task's folder); lists saying ``fake`` add fakes without annotations.

True/false and multiple-choice questions need nothing but the question files. The open-ended
tasks need the ground truth: OEQ type A for every annotated or listed fake, OEQ type B for those
fakes and the listed reals (only when some reals are listed); the build notes each task skipped
for want of them. Ids ``oeq_a/<sample>`` and ``oeq_b/<sample>``: ``<sample>`` is the authors'
``sample_id`` when given, else ``s-`` and a hash of the media file or, with no media, of the
sample path keyed by the ground-truth files (so a participant cannot tell real from fake by
hashing the public paths). Media are stored under content-derived names when the release has them
(``sample_path`` under the folder or its ``1_DATA/``); items whose media are absent list none
(the pack then scores uploaded predictions only). All questions about one sample share its split
and part.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from leaderboard.builders import tridf_gt, tridf_trident
from leaderboard.builders.common import (
    BuildReport,
    MediaStore,
    Problems,
    Progress,
    Splitter,
    fail,
    iter_jsonl,
    load_json,
    normalize_key,
    open_pack,
    record,
    resolve_media,
)
from leaderboard.builders.tridf_questions import MODALITY, modality_of, question_rows
from leaderboard.demo.tridf import AGREEMENT, OEQ_A, OEQ_B
from leaderboard.demo.tridf import meta as demo_meta
from leaderboard.demo.writer import opaque_id, stable_fraction

EXTENSIONS = {"image": {".png", ".jpg", ".jpeg", ".webp", ".bmp"},
              "video": {".mp4", ".avi", ".mov", ".mkv", ".webm"},
              "audio": {".wav", ".mp3", ".flac", ".ogg", ".m4a"}}
MEDIA_BASES = ("", "1_DATA")
COMBINED = "all_questions_combined"


class Samples:
    """Every sample the release names, by its authors' key (sample path or ``sample_id``)."""

    def __init__(self, root: Path, store: MediaStore, problems: Problems):
        self.root, self.store, self.problems = root, store, problems
        self.by_key: dict[str, dict] = {}

    def get(self, key: str, where: str, *, media: str | None = None,
            bases: tuple[str, ...] = MEDIA_BASES) -> dict:
        key = str(key).strip().removeprefix("./")
        if key not in self.by_key:
            self.by_key[key] = {"key": key, "where": where, "media_path": media or key,
                                "bases": bases}
        return self.by_key[key]

    def fact(self, s: dict, name: str, value, where: str) -> None:
        if value in (None, ""):
            return
        if s.get(name) not in (None, value):
            self.problems.add(f"{name} {value!r} contradicts {s[name]!r} given in {s['where']}",
                              file=where, field=name)
        s[name] = value

    def finish(self, salt: str) -> int:
        """Store media, fix ids and modalities; the number of samples without a media file.

        A release has every sample's media or none (the public question files alone): a file
        missing while others are there is a problem, not a scoring-only sample.
        """
        found = {k: resolve_media(self.root, s["media_path"], bases=s["bases"])
                 for k, s in self.by_key.items()}
        found = {k: v for k, v in found.items() if v is not None and v.is_file()}
        absent = 0
        for key, s in self.by_key.items():
            if key in found:
                s["media"], digest = self.store.add_file(found[key], "samples")
                uid = f"s-{digest[:16]}"
            else:
                absent += 1
                if found:
                    self.problems.add(f"media file {s['media_path']!r} not found under the "
                                      f"release (other samples have theirs)", file=s["where"],
                                      field="sample_path")
                uid = opaque_id("s", s["key"], seed=salt)
            s["uid"] = str(s.get("sample_id") or uid)
            if s.get("modality") is None:
                s["modality"] = _modality_from_path(Path(s["media_path"]))
            if s["modality"] is None:
                self.problems.add("cannot tell the modality of this sample (no record or folder "
                                  "names it, and its extension is unknown)", file=s["where"],
                                  field="sample_path")
        return absent


def _modality_from_path(path: Path) -> str | None:
    for part in path.parts[:-1]:
        low = part.lower()
        if low in MODALITY:
            return MODALITY[low]
        if low.split("_", 1)[0] in ("img", "vid", "aud"):  # the authors' task folders
            return MODALITY[low.split("_", 1)[0]]
    ext = path.suffix.lower()
    return next((m for m, exts in EXTENSIONS.items() if ext in exts), None)


def _list_class(path: Path) -> tuple[str, str] | None:
    """(class, task) of a sample-list file name, or None if the name says neither class."""
    tokens = normalize_key(path.stem).split("_")
    classes = {t for t in tokens if t in ("real", "fake")}
    if len(classes) != 1:
        return None
    cls = classes.pop()
    rest = "_".join(t for t in tokens if t not in ("real", "fake", "samples", "list"))
    return cls, rest or path.parent.name


def _classify(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "gt"
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
    report = BuildReport("tridf", Path(out))
    layout = tridf_trident.find(root, files)
    kinds = {} if layout else {p: _classify(p) for p in files}
    if not layout and "questions" not in kinds.values():
        raise fail("no question files (*.json / *.jsonl with TFQ or MCQ records) and no TRIDENT "
                   "data (OEQ/, MCQ/, TFQ/ split folders) found", file=str(root))
    with open_pack(Path(out), demo_meta(), description=_description(root.name),
                   agreement=AGREEMENT) as w:
        problems = Problems()
        samples = Samples(root, MediaStore(w, link=link_media), problems)
        if layout:
            rows, salt = tridf_trident.rows(layout, samples, report)
        else:
            rows, salt, names = _release_rows(root, files, kinds, samples, report, progress)
            w.meta["question_files"] = names  # aligns the authors' inference outputs
        problems.check("samples are not in TriDF's shape")
        absent = samples.finish(salt)
        problems.check("samples are not in TriDF's shape")
        rows = [(t, item if item is not None else oeq_item(t, s, label), label, s)
                for t, item, label, s in rows]
        _check_unique_ids(rows, problems)
        if absent:
            report.notes.append(f"{absent} of {len(samples.by_key)} samples have no media file "
                                "in the release: their items list no media, and the pack scores "
                                "uploaded predictions only")
        rows.sort(key=lambda r: stable_fraction("order", r[1]["id"], seed=seed))
        for task, item, label, s in rows:
            item = {**item, "task": task, "modality": item.get("modality") or s["modality"]}
            if s.get("media"):
                item["media"] = [s["media"]]
            if s.get("generator"):
                label["generator"] = s["generator"]
            if s.get("task") and "deepfake_task" not in label:
                label["deepfake_task"] = s["task"]
            split, part = splitter.assign(s["uid"])
            if part:
                label["part"] = part
            w.add(split, item, label)
            report.count(split, task, item["modality"])
        w.meta = report.fit_meta(w.meta)
    return report


def _check_unique_ids(rows: list, problems: Problems) -> None:
    first: dict[str, str] = {}
    for _, item, _, s in rows:
        if item["id"] in first and first[item["id"]] != s["key"]:
            problems.add(f"sample id {item['id'].split('/', 1)[-1]!r} also names "
                         f"{first[item['id']]!r}", file=s["where"], field="sample_id")
        first.setdefault(item["id"], s["key"])
    problems.check("samples are not in TriDF's shape")


def _release_rows(root, files, kinds, samples: Samples, report: BuildReport, progress):
    """Rows of the authors' GitHub/HuggingFace release layout, the id salt and the question
    files' names."""
    problems = samples.problems
    rel = {p: p.relative_to(root).as_posix() for p in files}
    gt_files = [(p, rel[p]) for p in files if kinds[p] == "gt"]
    truth = tridf_gt.read_ground_truth(gt_files, problems, report.notes)
    problems.check("ground-truth CSVs are not in TriDF's shape")
    listed = _read_lists([p for p in files if kinds[p] == "list"], rel, samples)
    problems.check("sample lists are not in TriDF's shape")
    question_files = _question_files([p for p in files if kinds[p] == "questions"], rel, report)
    rows, qids, tasks = [], {}, set()
    for k, p in enumerate(question_files):
        for qid, rec, where in _records(p, rel[p], problems, report):
            parsed = question_rows(rec, qid, rec.get("ground_truth"), where, problems)
            if parsed is None:
                continue
            if qid in qids:
                problems.add(f"duplicate question id {qid!r} (first: {qids[qid]})", file=where,
                             field="question_id")
                continue
            qids[qid] = where
            s = samples.get(rec.get("sample_path") or "", where)
            if not s["key"]:
                problems.add("sample_path is required", file=where, field="sample_path")
                continue
            samples.fact(s, "modality", parsed[1]["modality"], where)
            samples.fact(s, "task", parsed[2].get("deepfake_task"), where)
            tasks.add(parsed[2].get("deepfake_task"))
            rows.append((*parsed, s))
        if progress:
            progress(k + 1, len(question_files), rel[p])
    problems.check("question files are not in TriDF's shape")
    rows += _oeq_rows(truth, listed, samples, tasks - {None}, report)
    salt = hashlib.sha256(b"".join(p.read_bytes() for p, _ in gt_files)).hexdigest()
    return rows, salt, sorted({p.name for p in question_files})


def _question_files(paths: list[Path], rel: dict, report: BuildReport) -> list[Path]:
    """The question files, without a combined file that sits beside the per-task ones."""
    folders_with_tasks = {p.parent for p in paths if not p.stem.lower().startswith(COMBINED)}
    out = []
    for p in paths:
        if p.stem.lower().startswith(COMBINED) and p.parent in folders_with_tasks:
            report.notes.append(f"{rel[p]}: skipped, the per-task question files beside it hold "
                                "the same questions (the authors' inference skips it too)")
            continue
        out.append(p)
    return out


def _records(path: Path, name: str, problems: Problems, report: BuildReport):
    """(question id, record, where) of a question file; ids ``<stem>-<index>`` as the authors'."""
    if path.suffix == ".jsonl":
        numbered = ((f"{name} line {n}", rec) for n, rec in iter_jsonl(path, rel=name))
    else:
        data = load_json(path, rel=name)
        if not isinstance(data, list):  # dataset cards, configs: not question files
            report.notes.append(f"{name}: not a JSON array, skipped")
            return
        numbered = ((record(name, n), rec) for n, rec in enumerate(data))
    for index, (where, rec) in enumerate(numbered):
        if not isinstance(rec, dict):
            problems.add("each record must be a JSON object", file=where)
            continue
        yield str(rec.get("question_id") or f"{path.stem}-{index}"), rec, where


def _read_lists(paths: list[Path], rel: dict, samples: Samples) -> dict[str, str]:
    """Sample key -> class ("real"/"fake") from the sample lists."""
    out: dict[str, str] = {}
    for path in paths:
        cls, task = _list_class(path)
        name = rel[path]
        if path.suffix == ".txt":
            lines = path.read_text(encoding="utf-8-sig").splitlines()
            entries = [(f"{name} line {n}", {"sample_path": ln.strip()})
                       for n, ln in enumerate(lines, start=1) if ln.strip()]
        else:
            data = load_json(path, rel=name)
            entries = [(record(name, i), {"sample_path": e} if isinstance(e, str) else e)
                       for i, e in enumerate(data if isinstance(data, list) else [])]
        for where, entry in entries:
            key = entry.get("sample_path") if isinstance(entry, dict) else None
            if not isinstance(key, str) or not key.strip():
                samples.problems.add("a sample path is required", file=where,
                                     field="sample_path")
                continue
            s = samples.get(key, where)
            samples.fact(s, "cls", cls, where)
            samples.fact(s, "task", normalize_key(task), where)
            samples.fact(s, "sample_id", entry.get("sample_id"), where)
            out[s["key"]] = cls
    return out


def _oeq_rows(truth: dict, listed: dict[str, str], samples: Samples, tasks: set,
              report: BuildReport) -> list:
    """OEQ A/B rows of the annotated and listed samples; notes for what is skipped."""
    if not truth:
        report.notes.append("oeq_a, oeq_b: skipped, the release has no ground-truth artifact "
                            "CSVs (TriDF's gated 2_GT_Final/<task>.csv)")
        return []
    by_task = {normalize_key(t): tt for t, tt in truth.items()}
    missing = sorted(t for t in tasks if t not in by_task)
    if missing:
        report.notes.append(f"OEQ of deepfake tasks {missing} skipped: no <task>.csv for them")
    members: dict[str, tuple[dict, list, list]] = {}
    for task, tt in truth.items():
        for key, row in tt.rows.items():
            s = samples.get(key, row.where)
            samples.fact(s, "cls", "fake", row.where)
            samples.fact(s, "task", normalize_key(row.facts.get("task") or task), row.where)
            for fact in ("sample_id", "generator"):
                samples.fact(s, fact, row.facts.get(fact), row.where)
            samples.fact(s, "modality", modality_of(row.facts.get("modality")), row.where)
            members[key] = (s, tt.artifacts(row), tt.columns)
    unannotated = 0
    for key, cls in listed.items():
        if key not in members:
            s = samples.by_key[key]
            tt = by_task.get(s.get("task") or "")
            unannotated += cls == "fake"
            members[key] = (s, [], tt.columns if tt else [])
    if unannotated:
        report.notes.append(f"{unannotated} listed fakes have no ground-truth row: they count "
                            "for type B accuracy only (cal_score.py skips them too)")
    with_b = "real" in listed.values()
    if not with_b:
        report.notes.append("oeq_b: skipped, no real samples are listed (e.g. <task>_real.txt)")
    rows = []
    for s, arts, cols in members.values():
        fake = s.get("cls") == "fake"
        hidden = {"artifacts": arts if fake else [], "artifact_columns": cols,
                  "label": s.get("cls")}
        rows += _oeq_pair(s, hidden, with_a=fake, with_b=with_b)
    return rows


def _oeq_pair(s: dict, hidden: dict, *, with_a: bool, with_b: bool) -> list:
    """The sample's OEQ rows (type A only for fakes, TriDF 3.3); the item is made once the
    sample's id is known (`oeq_item`)."""
    return [(task, None, dict(hidden), s) for task, wanted in (("oeq_a", with_a),
                                                              ("oeq_b", with_b)) if wanted]


#: type A as TRIDENT asks it, of every sample (it must not say the sample is fake)
OEQ_A_ANY = ("List every artifact in this {m} that seems inauthentic, under clear headings, "
             "avoiding false positives.")


def oeq_item(task: str, s: dict, label: dict) -> dict:
    """The public item of a finished sample's OEQ row (and its id set on ``label``)."""
    m = s["modality"]
    rid = f"{task}/{s['uid']}"
    label["id"] = rid
    text = OEQ_B if task == "oeq_b" else OEQ_A_ANY if s.get("oeq") else OEQ_A
    return {"id": rid, "modality": m, "question": text.format(m=m)}


def _description(source_name: str) -> str:
    from leaderboard.core.benchmarks.tridf import TriDF
    from leaderboard.demo.tridf import fidelity_section

    metrics = "\n".join(f"- **{spec.title}** (`{name}`): {spec.description}"
                        for name, spec in TriDF.metrics.items())
    return f"""# TriDF

TriDF evaluates interpretable DeepFake detection by multimodal LLMs: Perception (true/false,
multiple-choice and open-ended type A questions), Detection (open-ended type B: authentic or
manipulated?) and Hallucination (CHAIR, Hal and F0.5 of the open answers), over image, video and
audio. This pack was built from the authors' release ({source_name}).

## Metrics
{metrics}

{fidelity_section()}

## Submissions
JSONL rows (`id` and `answer` or `response`); the authors' own inference outputs (the JSONL files
`run_perception_tf_ver2` / `run_perception_mc` write, matched by `question_file` and
`question_index` as `score_perception_original.py` matches them), as one JSONL file or a ZIP of
the output folder; or the TRIDENT challenge ZIP (four JSONL files). Open answers may give
`artifacts` (taxonomy keys) directly ("self-mapped"); otherwise a judge maps `response` onto the
item modality's artifacts. 95% bootstrap confidence intervals over items, fixed seed.
"""
