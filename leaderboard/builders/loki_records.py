"""One LOKI question record (the authors' ``data_json`` arrays) -> the pack's item and label rows.

Fields read: ``question``, ``answer``, ``metric`` (``open-ended`` -> ``judgment``, or
``point_cloud_judgment`` for a ``point-text`` record; ``multi-choice`` -> ``multiple_choice`` when
``question_type`` is ``<mod>_mc_{real_from_fake|fake_from_real}_<subcat>``, else
``abnormal_selection``; ``model-as-judge`` -> ``explanation``), ``modality``, ``question_type``,
``choices``, the media keys, ``problems`` (explanations).

The modality is where the authors put the file (``data_json/3D/`` is 3D even where a record says
``image-text``: LOKI's 3D renders do); a file outside a modality folder takes it from the
``question_type`` prefix (``3D_...``), then from the record's ``modality``.

``question_type`` of a judgment is ``<mod>_tf_<mod>_{real|fake}_ask_{real|fake}[_<subcat>]``: the
first real/fake is the truth, the second the phrasing; LOKI's 3D reals have no subcategory
(``3D_tf_3D_real_ask_real``, ``3D_tf_point_real_ask_fake``) or the word ``real`` in its place,
and get none. The answer must agree with them (a disagreement stops the build: the file would be
misread).

Kept exactly as the authors' scorer sees them (opendatalab/LOKI ``lm_evaluate/tasks/loki.py`` at
251b4f6), so that the scores reproduce theirs: option texts verbatim (their parser matches them
character for character), a judgment answer that is "yes"/"no" once stripped and lower-cased
(their ``eval_open``), a choice answer that is exactly an option letter (their
``eval_multi_choice`` compares strings), and ``authors_type``, the key their
``aggregate_results`` groups a row by: the ``question_type``'s last ``_`` word (the second to
last for a fake ``text-only`` judgment), used only where their class rule (``fake_ask`` /
``real_ask``, ``fake_from`` / ``real_from`` substrings) agrees with the truth and phrasing.
"""
from __future__ import annotations

import re

from leaderboard.builders.common import Problems

MODALITY = {"image-text": "image", "video-text": "video", "point-text": "3d", "text-only": "text",
            "audio-text": "audio"}
FOLDER_MODALITY = {"image": "image", "video": "video", "3d": "3d", "text": "text",
                   "audio": "audio"}
METRICS = ("open-ended", "multi-choice", "model-as-judge")
MEDIA_KEYS = ("image_path", "video_path", "point_path", "audio_path")
NOUN = {"image": "image", "video": "video", "3d": "3D object", "text": "text", "audio": "audio"}
_TF = re.compile(r"^[^_]+_tf_[^_]+_(real|fake)_ask_(real|fake)(?:_(.+))?$", re.IGNORECASE)
_MC = re.compile(r"^[^_]+_mc_(real_from_fake|fake_from_real)_(.+)$", re.IGNORECASE)
_NO_SUBCATEGORY = ("real", "fake")


def modality_of(rec: dict, folder: str | None) -> str | None:
    """The folder's modality; else the ``question_type`` prefix; else the record's field."""
    if folder in FOLDER_MODALITY:
        return FOLDER_MODALITY[folder]
    prefix = str(rec.get("question_type") or "").split("_", 1)[0].lower()
    if prefix in FOLDER_MODALITY:
        return FOLDER_MODALITY[prefix]
    return MODALITY.get(str(rec.get("modality") or "").strip().lower())


def _options(rec: dict, media: list[str], modality: str, where: str, problems: Problems
             ) -> dict[str, str] | None:
    choices = rec.get("choices")
    if isinstance(choices, list) and choices:
        if not all(isinstance(c, str) for c in choices):
            problems.add("choices must be strings (the authors' parser compares their text)",
                         file=where, field="choices")
            return None
        return {chr(ord("A") + j): text for j, text in enumerate(choices)}
    if isinstance(choices, dict) and choices:
        return {str(k).strip().upper().strip("()."): str(v) for k, v in choices.items()}
    if len(media) >= 2:  # image/video pairs are often shipped without option texts
        ordinals = ("first", "second", "third", "fourth")
        return {chr(ord("A") + j): f"the {ordinals[j]} {NOUN[modality]}"
                for j in range(min(len(media), 4))}
    problems.add("a multiple-choice record needs 'choices' (or two media files)", file=where,
                 field="choices")
    return None


def _authors_type(rec: dict, qtype: str, fake: bool, where: str, problems: Problems) -> str | None:
    """The key of the authors' ``aggregate_results`` (see the module docstring)."""
    words = qtype.split("_")
    if "_tf_" in qtype:
        says_fake = "fake_ask" in qtype
        says_real = not says_fake and "real_ask" in qtype
        text_fake = says_fake and rec.get("modality") == "text-only"
        key = words[-2] if text_fake and len(words) > 1 else words[-1]
    else:
        says_fake, says_real = "fake_from" in qtype, "real_from" in qtype
        key = words[-1]
    if (says_fake, says_real) != (fake, not fake):
        problems.add(f"question_type {qtype!r} reads as "
                     f"{'fake' if says_fake else 'real' if says_real else 'neither class'} in the "
                     "authors' aggregate but is the other class here", file=where,
                     field="question_type")
        return None
    return key


def parse_record(rec, where: str, folder: str | None, problems: Problems):
    """(task, item fields, label fields, media values) of one record; None after a problem."""
    if not isinstance(rec, dict):
        problems.add("each record must be a JSON object", file=where)
        return None
    before = problems.total
    metric = rec.get("metric")
    if metric not in METRICS:
        problems.add(f"unknown metric {metric!r}; allowed: {list(METRICS)}", file=where,
                     field="metric")
    modality = modality_of(rec, folder)
    if modality is None:
        problems.add(f"unknown modality {rec.get('modality')!r}; allowed: {list(MODALITY)}",
                     file=where, field="modality")
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
        parsed = _judgment(rec, qtype, where, problems)
        if parsed is None:
            return None
        task = "point_cloud_judgment" if rec.get("modality") == "point-text" else "judgment"
        item["phrasing"], label = parsed
    elif metric == "multi-choice":
        m = _MC.match(qtype)
        task = "multiple_choice" if m else "abnormal_selection"
        options = _options(rec, media, modality, where, problems)
        if options is None:
            return None
        answer = rec.get("answer")
        if not isinstance(answer, str) or answer not in options:
            problems.add(f"answer must be one of the option letters {list(options)} exactly "
                         f"(the authors compare strings), got {answer!r}", file=where,
                         field="answer")
            return None
        item["options"] = options
        label["answer"] = answer
        if m:
            fake = m.group(1).lower() == "fake_from_real"
            item["phrasing"] = "ask_fake" if fake else "ask_real"
            label["subcategory"] = m.group(2)
            key = _authors_type(rec, qtype, fake, where, problems)
            if key is None:
                return None
            label["authors_type"] = key
    else:
        task = "explanation"
        ref = rec.get("problems")
        if not isinstance(ref, dict) or not ref:
            problems.add('an explanation needs "problems": {"global": [...], "regional": [...]}',
                         file=where, field="problems")
            return None
        label["reference"] = ref
    return task, item, label, media


def _judgment(rec: dict, qtype: str, where: str, problems: Problems):
    """(phrasing, label fields) of a yes/no record; None after a problem."""
    m = _TF.match(qtype)
    if not m:
        problems.add("a judgment needs question_type <mod>_tf_<mod>_{real|fake}_ask_"
                     f"{{real|fake}}[_<subcat>], got {qtype!r}", file=where,
                     field="question_type")
        return None
    truth, ask, sub = m.group(1).lower(), m.group(2).lower(), m.group(3)
    raw = rec.get("answer")
    answer = raw.strip().lower() if isinstance(raw, str) else None
    if answer not in ("yes", "no"):
        problems.add(f'answer must be "Yes" or "No" (the authors\' eval_open compares it '
                     f"stripped and lower-cased), got {raw!r}", file=where, field="answer")
        return None
    if (answer == "yes") != (truth == ask):
        problems.add(f"answer {raw!r} contradicts question_type {qtype!r}", file=where,
                     field="answer")
        return None
    key = _authors_type(rec, qtype, truth == "fake", where, problems)
    if key is None:
        return None
    label = {"answer": answer, "truth": truth, "authors_type": key}
    if sub and sub.lower() not in _NO_SUBCATEGORY:
        label["subcategory"] = sub
    return f"ask_{ask}", label
