"""One TriDF true/false or multiple-choice question record as pack rows.

Records are those of the authors' question files (``3_Benchmark/benchmark_perception_tf/*.json``,
``benchmark_perception_mc/*.json``) and of the TRIDENT challenge's ``TFQ``/``MCQ`` files: a record
with ``options`` is an MCQ, any other a TFQ. The ground truth is read as the authors' scorer reads
it (``score_perception_original.py`` at j1anglin/TriDF f041a19): a TFQ's ``ground_truth`` is a
boolean or a text ``normalize_tf_answer`` reads ("yes"/"no" first); an MCQ's is a list of letters
or a text ``normalize_mc_answer`` reads. An MCQ's options are the letters its question text lists
("A. ...", as ``mc_option_letters`` finds them), else one per option plus the final
"None of the options are correct"; the texts come from ``options``.
"""
from __future__ import annotations

import re

from leaderboard.builders.common import Problems, normalize_key
from leaderboard.core import tridf_readers as rd
from leaderboard.core.taxonomy import ARTIFACT_TYPES, ARTIFACTS_BY_KEY, TRIDF_ARTIFACTS
from leaderboard.demo.tridf import NONE_OPTION

MODALITY = {"img": "image", "image": "image", "vid": "video", "video": "video", "aud": "audio",
            "audio": "audio"}
_QUESTION_LETTERS = re.compile(r"^\s*([A-Z])\.", re.MULTILINE)
_OPTION_PREFIX = re.compile(r"^\s*\(?([A-Z])\)?\s*[.:)]\s+")


def _aliases() -> dict[str, str]:
    out = {}
    for a in TRIDF_ARTIFACTS:
        for name in (a.key, a.name, a.name.split(" & ")[0], a.name.split(" or ")[0]):
            out.setdefault(normalize_key(name), a.key)
    return out


ALIASES = _aliases()


def artifact_key(name) -> str | None:
    """The taxonomy key a question's artifact name denotes (None if it names none)."""
    return ALIASES.get(normalize_key(name)) if isinstance(name, str) else None


def modality_of(value) -> str | None:
    return MODALITY.get(str(value or "").strip().lower())


def question_rows(rec: dict, qid: str, gt, where: str, problems: Problems
                  ) -> tuple[str, dict, dict] | None:
    """(task, public item, hidden label) of one record; None after a problem (recorded).

    ``gt`` is the record's ground truth (its own ``ground_truth`` or, in the TRIDENT layout, the
    answers file's). The item has no media yet; the caller adds them with the sample.
    """
    before = problems.total
    modality = modality_of(rec.get("modality"))
    if modality is None:
        problems.add(f"modality must be one of {sorted(MODALITY)}, got {rec.get('modality')!r}",
                     file=where, field="modality")
    question = rec.get("question")
    if not isinstance(question, str) or not question.strip():
        problems.add("question must be a non-empty string", file=where, field="question")
    if problems.total > before:
        return None
    item = {"id": qid, "modality": modality, "question": question}
    label = {"id": qid}
    task = normalize_key(rec.get("task") or "")
    if task:
        label["deepfake_task"] = task
    if "options" in rec:
        return _mcq(rec, item, label, gt, where, problems)
    return _tfq(rec, item, label, gt, where, problems)


def _tfq(rec, item, label, gt, where, problems):
    truth = gt if isinstance(gt, bool) else rd.tf_answer(gt) if isinstance(gt, str) else None
    if truth is None:
        problems.add(f"a TFQ's ground_truth must be true/false or a yes/no text the authors' "
                     f"normalize_tf_answer reads, got {gt!r}", file=where, field="ground_truth")
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
    label["answer"] = "yes" if truth else "no"
    return "tfq", item, label


def _options(rec, where, problems) -> dict[str, str] | None:
    opts = rec.get("options")
    if isinstance(opts, dict):
        opts = [opts[k] for k in sorted(opts)]
    if not isinstance(opts, list) or not opts or not all(isinstance(o, str) for o in opts):
        problems.add("options must be a non-empty list of option texts", file=where,
                     field="options")
        return None
    listed = sorted(set(_QUESTION_LETTERS.findall(rec["question"])))
    letters = listed or [chr(65 + j) for j in range(len(opts) + 1)]
    if letters != [chr(65 + j) for j in range(len(letters))] or \
            len(letters) not in (len(opts), len(opts) + 1):
        problems.add(f"the question lists options {letters} for {len(opts)} option texts",
                     file=where, field="options")
        return None
    options = {}
    for letter, text in zip(letters, opts):
        m = _OPTION_PREFIX.match(text)
        options[letter] = text[m.end():] if m and m.group(1) == letter else text
    if len(letters) == len(opts) + 1:
        options[letters[-1]] = NONE_OPTION
    return options


def _mcq(rec, item, label, gt, where, problems):
    options = _options(rec, where, problems)
    if options is None:
        return None
    letters = "".join(options)
    if isinstance(gt, list):
        got = {str(x).strip().upper() for x in gt}
        correct = [c for c in letters if c in got]
    else:
        correct = rd.mc_letters(gt, letters) if isinstance(gt, str) else None
    if not correct:
        problems.add(f"an MCQ's ground_truth must name at least one of its options {letters}, "
                     f"got {gt!r}", file=where, field="ground_truth")
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
        arts = sorted({k for k in (artifact_key(options[x]) for x in correct
                                   if options[x] != NONE_OPTION) if k})
    label.update(answer=correct, artifacts=arts)
    return "mcq", item, label
