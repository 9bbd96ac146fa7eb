"""Deterministic answer extraction from free-text responses, one rule per benchmark.

Each function returns the parsed answer or None when the text is unparsable; an unparsable
answer is scored as wrong (never replaced by a random guess) and counted. The rules follow
../shared/specs/benchmarks.md (LOKI C.2 and its authors' code; TriDF 3.4 and appendix I); where
the spec is silent the choice is written in the docstring and pinned by tests/test_extract.py.
"""
from __future__ import annotations

import re

_YES_NO = {"yes": "yes", "no": "no", "y": "yes", "n": "no"}

# LOKI option markers: "(A)", "**A**", "A." (the letter not inside a word) and a leading "A ".
_LOKI_MARKERS = (r"\(([A-Z])\)", r"\*\*([A-Z])\*\*", r"(?<![A-Za-z0-9])([A-Z])\.", r"^([A-Z]) ")

_TF_START = re.compile(r"^(yes|no|true|false)(?![a-z0-9])")
_TF_MAP = {"yes": "yes", "true": "yes", "no": "no", "false": "no"}
# Markdown and quoting characters a model often puts before its first word.
_LEADING_DECOR = " \t*_#>`\"'"

_LETTER_ALONE = re.compile(r"(?<![A-Za-z0-9])([A-E])(?![A-Za-z0-9])")
_NONE_WORD = re.compile(r"(?<![a-z])none(?![a-z])")

_AUTHENTICITY = re.compile(r"likely\s+(authentic|manipulated)")


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def loki_yes_no(text) -> str | None:
    """LOKI judgment: "yes" / "no" / None.

    Lower-case, strip, drop periods; then "yes"/"no" exactly; else a single "y"/"n"; else "yes" or
    "no" within the first 4 characters, "yes" checked first; else unparsable. As in the authors'
    rule, "no" inside the first 4 characters counts even inside a word ("not sure" -> "no").

    >>> [loki_yes_no(t) for t in ["Yes.", " N ", "Yes, it is.", "No, it's real", "Maybe"]]
    ['yes', 'no', 'yes', 'no', None]
    """
    t = _text(text)
    if t is None:
        return None
    t = t.lower().strip().replace(".", "")
    if t in _YES_NO:
        return _YES_NO[t]
    head = t[:4]
    if "yes" in head:
        return "yes"
    if "no" in head:
        return "no"
    return None


def loki_choice(text, options: dict[str, str]) -> str | None:
    """LOKI multiple choice: the chosen option letter, or None.

    The letter comes from "(A)", "**A**", "A." (the letter not inside a word) or a leading "A ",
    only for letters that are option keys; when several are found, the one mentioned last wins
    (by where the match starts). A response that is exactly one option letter is accepted too
    (an addition to the rule: a bare "A" is an unambiguous answer). With no letter, the option
    whose text appears in the response (case-insensitive) when exactly one does; else None.
    Letters are upper-case only: a lower-case "a" is far more often the English article.

    >>> opts = {"A": "the left image", "B": "the right image"}
    >>> [loki_choice(t, opts) for t in ["(A)", "I think **B** is fake", "A. The sky", "B",
    ...                                 "It is the right image.", "C."]]
    ['A', 'B', 'A', 'B', 'B', None]
    """
    t = _text(text)
    if t is None:
        return None
    if not isinstance(options, dict) or not options:
        raise ValueError(f"options must be a non-empty dict of letter -> text, got {options!r:.80}")
    stripped = t.strip()
    if stripped in options:
        return stripped
    best, best_pos = None, -1
    for pattern in _LOKI_MARKERS:
        for match in re.finditer(pattern, stripped):
            if match.group(1) in options and match.start() > best_pos:
                best, best_pos = match.group(1), match.start()
    if best is not None:
        return best
    lowered = stripped.lower()
    found = [key for key, value in options.items()
             if isinstance(value, str) and value.strip() and value.strip().lower() in lowered]
    return found[0] if len(found) == 1 else None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def tridf_true_false(text) -> str | None:
    """TriDF TFQ: "yes" / "no" / None from the first non-empty line.

    The line must start (after whitespace and markdown/quote characters such as ``**``) with
    "yes", "no", "true" or "false" as a whole word, case-insensitive; true means yes.

    >>> [tridf_true_false(t) for t in ["Yes, visible blur.", "**False**", "\\nno", "Not really", "yesterday"]]
    ['yes', 'no', 'no', None, None]
    """
    t = _text(text)
    if t is None:
        return None
    match = _TF_START.match(_first_line(t).lstrip(_LEADING_DECOR).lower())
    return _TF_MAP[match.group(1)] if match else None


def tridf_letters(text) -> list[str] | None:
    """TriDF MCQ: the sorted selected letters from the first non-empty line, or None.

    A letter counts when it is one of the upper-case A-E standing alone (not part of a word or
    number); the word "none" (any case) adds E ("None of the options are correct"). None when
    nothing is selected.

    >>> [tridf_letters(t) for t in ["A, C", "B and D\\nA is wrong", "None of them", "Answer: E", "maybe"]]
    [['A', 'C'], ['B', 'D'], ['E'], ['E'], None]
    """
    t = _text(text)
    if t is None:
        return None
    line = _first_line(t)
    letters = set(_LETTER_ALONE.findall(line))
    if _NONE_WORD.search(line.lower()):
        letters.add("E")
    return sorted(letters) or None


def tridf_authenticity(text) -> str | None:
    """TriDF OEQ type B decision: "real" / "fake" / None.

    Lines are scanned from the last one upward, as the authors' code does; the first line (from
    the bottom) that contains "Likely Authentic" or "Likely Manipulated" (any case, any spacing)
    decides. If that line holds both phrases, the one written last in it wins, consistent with
    reading from the end.

    >>> [tridf_authenticity(t) for t in ["Likely Manipulated\\n1. blur", "likely authentic",
    ...                                  "Likely Authentic\\nOn reflection: Likely Manipulated", "unsure"]]
    ['fake', 'real', 'fake', None]
    """
    t = _text(text)
    if t is None:
        return None
    for line in reversed(t.splitlines()):
        found = _AUTHENTICITY.findall(line.lower())
        if found:
            return "real" if found[-1] == "authentic" else "fake"
    return None
