"""The TRIDENT challenge's data root as a TriDF pack (j1anglin/TRIDENT_MM26MGC at 985d8fb).

The starter kit (``starter_kit/blind_data.py``, ``evaluate_predictions.py``) reads, per split
(``train``, ``public_val``, ``private_test``):

* ``OEQ/<split>/manifest_<modality>.csv`` (``sample_id``, ``media_path`` under ``OEQ/<split>/``)
  and ``answers_<modality>.csv`` (``sample_id``, ``media_path``, ``modality``, ``track_id``,
  ``label``, then one column per artifact): both open-ended tasks ask about every sample, real
  or fake, so each answered sample gets an ``oeq_a`` and an ``oeq_b`` item (ids
  ``oeq_a/<sample_id>``, as the challenge ZIP names them); the scores count the samples with an
  annotated artifact. Every column but those five is an artifact the kit counts in |Y|, so each
  must be spelled as the kit's artifact list (the taxonomy's names); cells by ``_parse_bool_truth``.
* ``TFQ/<split>/*.json`` and ``MCQ/<split>/*.json`` question rows (``question_id``, ``sample_id``,
  ``media_path`` under the root, ``modality``, ``question``, ``options``, ...) and
  ``answers.jsonl`` (``question_id``, ``ground_truth``), the truth read as the kit reads it
  (``_normalize_tf_answer``, ``_normalize_mc_answer``: booleans and letter lists as given).

A split without answers (the organizers keep ``private_test``'s) is skipped with a note, as are
questions without an answer; the answered splits are pooled and split again by sample
(`leaderboard.builders.common.Splitter`).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from leaderboard.builders.common import (
    BuildReport,
    iter_csv,
    iter_jsonl,
    load_json,
    record,
)
from leaderboard.builders.tridf_gt import KEY_BY_NAME
from leaderboard.builders.tridf_questions import question_rows
from leaderboard.core import tridf_readers as rd

PACKAGES = ("OEQ", "MCQ", "TFQ")
OEQ_BASE_COLUMNS = ("sample_id", "media_path", "modality", "track_id", "label")
_OEQ_FILE = re.compile(r"^(answers|manifest)_(image|video|audio)\.csv$")


def find(root: Path, files: list[Path]) -> dict | None:
    """``{package: {split: [files]}}`` of a TRIDENT data root, or None if ``root`` is not one."""
    out: dict[str, dict[str, list[Path]]] = {}
    for p in files:
        parts = p.relative_to(root).parts
        if len(parts) < 3 or parts[-3] not in PACKAGES:
            continue
        package, split, name = parts[-3], parts[-2], parts[-1]
        if (package == "OEQ" and _OEQ_FILE.match(name)) or \
                (package != "OEQ" and (name == "answers.jsonl" or name.endswith(".json"))):
            out.setdefault(package, {}).setdefault(split, []).append(p)
    has_answers = any(p.name.startswith("answers") for splits in out.values()
                      for paths in splits.values() for p in paths)
    return {"root": root, **out} if has_answers else None


def rows(layout: dict, samples, report: BuildReport) -> tuple[list, str]:
    """Rows of every answered split, and the id salt (a digest of the answer files)."""
    root: Path = layout["root"]
    digest = hashlib.sha256()
    out: list = []
    for package in PACKAGES:
        for split, paths in sorted(layout.get(package, {}).items()):
            answers = [p for p in paths if p.name.startswith("answers")]
            if not answers:
                report.notes.append(f"{package}/{split}: no answers (the organizers keep them), "
                                    "skipped")
                continue
            for p in answers:
                digest.update(p.read_bytes())
            if package == "OEQ":
                out += _oeq(root, split, answers, samples)
            else:
                out += _questions(root, package, split, paths, samples, report)
    samples.problems.check("the TRIDENT data are not in the starter kit's shape")
    return out, digest.hexdigest()


def _rel(root: Path, p: Path) -> str:
    return p.relative_to(root).as_posix()


def _oeq(root: Path, split: str, answers: list[Path], samples) -> list:
    problems, out = samples.problems, []
    for path in answers:
        modality = _OEQ_FILE.match(path.name).group(2)
        name = _rel(root, path)
        columns = None
        for n, row in iter_csv(path, rel=name):
            if columns is None:
                columns = [c for c in row if c not in OEQ_BASE_COLUMNS]
                bad = [c for c in columns if c not in KEY_BY_NAME]
                if bad or "sample_id" not in row:
                    problems.add(f"every column but {list(OEQ_BASE_COLUMNS)} must be an artifact "
                                 f"spelled as the kit's list (e.g. 'Blurriness'); got {bad}"
                                 if bad else "a sample_id column is required", file=name, line=1)
                    return out
            where = f"{name} line {n}"
            sid = str(row.get("sample_id") or "").strip()
            label = str(row.get("label") or "").strip().lower()
            if not sid or label not in ("real", "fake"):
                problems.add(f"needs a sample_id and a label real/fake, got {sid!r}, {label!r}",
                             file=where, field="label")
                continue
            media = str(row.get("media_path") or "").strip()
            s = samples.get(sid, where, media=media, bases=(f"OEQ/{split}", ""))
            if "oeq" in s:
                problems.add(f"sample {sid!r} has a second answers row (first: {s['where']})",
                             file=where, field="sample_id")
                continue
            s["oeq"] = True
            for fact, value in (("sample_id", sid), ("cls", label), ("modality", modality)):
                samples.fact(s, fact, value, where)
            hidden = {"label": label, "artifact_columns": [KEY_BY_NAME[c] for c in columns],
                      "artifacts": sorted(KEY_BY_NAME[c] for c in columns
                                          if rd.truth_cell(row.get(c)))}
            out += [("oeq_a", None, dict(hidden), s), ("oeq_b", None, dict(hidden), s)]
    return out


def _truth(package: str, gt):
    """The answers file's ground truth as the kit reads it (None: the kit cannot read it)."""
    if package == "TFQ":
        return gt if isinstance(gt, bool) else rd.kit_tf_answer(gt) if isinstance(gt, str) \
            else None
    if isinstance(gt, list):
        return [str(x).strip().upper() for x in gt]
    return rd.kit_mc_letters(gt) if isinstance(gt, str) else None


def _questions(root: Path, package: str, split: str, paths: list[Path], samples,
               report: BuildReport) -> list:
    problems, out = samples.problems, []
    truth: dict[str, object] = {}
    for p in paths:
        if p.name == "answers.jsonl":
            for n, row in iter_jsonl(p, rel=_rel(root, p)):
                qid = str(row.get("question_id") or "").strip()
                if qid:
                    truth[qid] = _truth(package, row.get("ground_truth"))
    unanswered, used = 0, set()
    for p in sorted(x for x in paths if x.suffix == ".json"):
        name = _rel(root, p)
        data = load_json(p, rel=name)
        for i, rec in enumerate(data if isinstance(data, list) else []):
            where = record(name, i)
            qid = str(rec.get("question_id") or "").strip() if isinstance(rec, dict) else ""
            if not qid:
                problems.add("each question needs a question_id", file=where,
                             field="question_id")
                continue
            if qid not in truth:
                unanswered += 1
                continue
            if qid in used:
                problems.add(f"duplicate question id {qid!r}", file=where, field="question_id")
                continue
            used.add(qid)
            parsed = question_rows(rec, qid, truth[qid], where, problems)
            if parsed is None:
                continue
            key = str(rec.get("sample_id") or rec.get("media_path") or "").strip()
            s = samples.get(key, where, media=str(rec.get("media_path") or key))
            samples.fact(s, "modality", parsed[1]["modality"], where)
            if rec.get("sample_id"):
                samples.fact(s, "sample_id", str(rec["sample_id"]).strip(), where)
            out.append((*parsed, s))
    if unanswered:
        report.notes.append(f"{package}/{split}: {unanswered} questions without an answer in "
                            "answers.jsonl, skipped")
    orphans = sorted(set(truth) - used)
    if orphans:
        report.notes.append(f"{package}/{split}: {len(orphans)} answers name no question, e.g. "
                            f"{orphans[:3]}")
    return out
