"""How the TriDF authors' code and the TRIDENT challenge kit read free-text answers.

Each function re-implements one of the authors' rules, rule for rule, so that a number computed
here is the number their code gives on the same text. The rules are the authors' (not ours) and
some are surprising; ``tests/conformance/test_tridf_readers.py`` and ``test_trident_readers.py``
pin each function against the authors' own output on 100+ tricky responses.

TriDF, j1anglin/TriDF at f041a19c4b292f83233a72b48e3241b4867c7ad7, ``3_Benchmark/inference/``:

* `tf_answer` = ``normalize_tf_answer`` (``score_perception_original.py``): the text is stripped
  and lower-cased; its first line, stripped, must start with "yes" or "no" as a whole word
  (``^(yes|no)\\b``). "True", "**Yes**", "> yes" are unparsable.
* `mc_letters` = ``normalize_mc_answer`` (same file): only the first line; the word "none" (any
  case) adds E; a leading "answer:", "final answer:" or "prediction:" is dropped; if a comma is
  left, each comma-separated token, upper-cased and stripped of ``.;:()[]{}``, counts when it is
  one allowed letter; otherwise every letter standing alone in the upper-cased line counts.
  The empty text is None (no answer); a text without letters is ``[]``.
* `detection` = ``get_prediction`` (``eval_accuracy.py``): non-empty lines from the last one
  upward; the first line holding "likely authentic" (case-insensitive, one space) decides
  "real", else one holding "likely manipulated" decides "fake"; on a line holding both,
  authentic wins.
* `truth_cell` = ``parse_bool_truth`` (``cal_score.py``): a ground-truth CSV cell is true unless
  empty, "false", "0", "none", "null" (any case) or exactly "[]" / "[ ]" after stripping.

TRIDENT kit, j1anglin/TRIDENT_MM26MGC at 985d8fbc4065f22b4de5c1c0900b891ee55da818,
``evaluate_predictions.py``:

* `kit_tf_answer` = ``_normalize_tf_answer``: "true" or "false" as a whole word anywhere in the
  first two lines (case-insensitive, first match wins). "yes" and "no" are unparsable, which is
  why a perfect yes/no submission scores TFQ accuracy 0 (and TCS 85, not 100) in the kit.
* `kit_mc_letters` = ``_normalize_mc_answer``: the first three lines joined and upper-cased; every
  A-E standing alone as a word (``\\b[A-E]\\b``). No "none" rule and no comma rule.
* `kit_detection` = ``_parse_typeb_label``: only the first non-empty line; "likely authentic"
  there decides "real", else "likely manipulated" decides "fake", else None.
* `truth_cell` is also the kit's ``_parse_bool_truth`` (the same rule).
"""
from __future__ import annotations

import re

LETTERS = "ABCDE"

_TF = re.compile(r"(yes|no)\b")
_MC_PREFIX = re.compile(r"^(?:answer|final answer|prediction)\s*[:：]\s*", re.IGNORECASE)
_MC_NONE = re.compile(r"\bnone\b", re.IGNORECASE)
_MC_LONE = re.compile(r"(?<![A-Za-z])[A-Z](?![A-Za-z])")
_MC_TOKEN_EDGES = ".;:()[]{}"
_FALSE_CELLS = ("false", "0", "none", "null")
_KIT_TF = re.compile(r"\b(true|false)\b", re.IGNORECASE)
_KIT_MC = re.compile(r"\b([A-E])\b", re.IGNORECASE)


def tf_answer(text: str) -> bool | None:
    """TriDF TFQ: True for yes, False for no, None when unparsable.

    >>> [tf_answer(t) for t in ["Yes, blur.", "no", "True", "**Yes**", "yesterday", "\\nno"]]
    [True, False, None, None, None, False]
    """
    t = text.strip().lower()
    if not t:
        return None
    m = _TF.match(t.splitlines()[0].strip())
    return None if m is None else m.group(1) == "yes"


def mc_letters(text: str, letters: str = LETTERS) -> list[str] | None:
    """TriDF MCQ: the selected letters among ``letters`` in alphabetical order; None if empty.

    >>> [mc_letters(t) for t in ["A, C", "a and c", "None of them", "A (blur), C (noise)", ""]]
    [['A', 'C'], ['A', 'C'], ['E'], [], None]
    """
    t = text.strip()
    if not t:
        return None
    head = t.splitlines()[0].strip()
    body = _MC_PREFIX.sub("", head)
    if "," in body:
        found = {tok.strip().upper().strip(_MC_TOKEN_EDGES) for tok in body.split(",")}
    else:
        found = set(_MC_LONE.findall(body.upper()))
    if _MC_NONE.search(head):
        found.add("E")
    return [c for c in letters if c in found]


def detection(text: str) -> str | None:
    """TriDF OEQ type B decision: "real", "fake" or None.

    >>> [detection(t) for t in ["Likely Manipulated\\nOverall: Likely Authentic",
    ...                         "Likely Manipulated or Likely Authentic", "Likely  Authentic"]]
    ['real', 'real', None]
    """
    for line in reversed(text.strip().splitlines()):
        low = line.strip().lower().lstrip("#").strip()
        if "likely authentic" in low:
            return "real"
        if "likely manipulated" in low:
            return "fake"
    return None


def truth_cell(cell: str | None) -> bool:
    """Ground-truth CSV cell (TriDF ``2_GT_Final``, TRIDENT ``answers_<modality>.csv``).

    >>> [truth_cell(c) for c in ["True", "x", "", "None", "[ ]", "[  ]", "no"]]
    [True, True, False, False, False, True, True]
    """
    if cell is None:
        return False
    t = str(cell).strip()
    return bool(t) and t.lower() not in _FALSE_CELLS and t not in ("[]", "[ ]")


def kit_tf_answer(text: str) -> bool | None:
    """TRIDENT TFQ: True/False from "true"/"false" in the first two lines; None otherwise.

    >>> [kit_tf_answer(t) for t in ["True", "yes", "It is not true", "a\\nb\\nFalse"]]
    [True, None, True, None]
    """
    m = _KIT_TF.search(" ".join(text.strip().splitlines()[:2]))
    return None if m is None else m.group(1).lower() == "true"


def kit_mc_letters(text: str) -> list[str]:
    """TRIDENT MCQ: the letters A-E standing alone in the first three lines, sorted.

    >>> [kit_mc_letters(t) for t in ["A, C", "None of the options are correct", "A1", "a\\nb"]]
    [['A', 'C'], [], [], ['A', 'B']]
    """
    return sorted(set(_KIT_MC.findall(" ".join(text.strip().splitlines()[:3]).upper())))


def kit_detection(text: str) -> str | None:
    """TRIDENT type B decision from the first non-empty line: "real", "fake" or None.

    >>> [kit_detection(t) for t in ["Likely Manipulated\\nLikely Authentic", "Analysis\\nLikely Authentic"]]
    ['fake', None]
    """
    for line in text.splitlines():
        low = line.strip().lower()
        if not low:
            continue
        if "likely authentic" in low:
            return "real"
        if "likely manipulated" in low:
            return "fake"
        return None
    return None
