"""Deterministic answer extraction from free-text responses, one rule per benchmark.

Each function returns the parsed answer or None when the text is unparsable; an unparsable answer
is counted and scored as the authors' code scores it on average: wrong, except in LOKI's multiple
choice, where the authors draw a letter at random and the scorer counts 1/#options. The rules follow
../shared/specs/benchmarks.md (LOKI C.2 and its authors' code); where the spec is silent the choice
is written in the docstring and pinned by tests/test_extract.py. TriDF's readers reproduce its
authors' code and live in `leaderboard.core.tridf_readers`.
"""
from __future__ import annotations

import re

_YES_NO = {"yes": "yes", "no": "no", "y": "yes", "n": "no"}

def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def loki_yes_no(text) -> str | None:
    """LOKI judgment: "yes" / "no" / None, the authors' ``Loki.parse_true_or_false`` (opendatalab/
    LOKI ``lm_evaluate/tasks/loki.py`` at 251b4f6) followed by their ``eval_open`` check.

    Lower-case, strip whitespace, drop every period; then "yes"/"no" exactly; else a single
    character "y"/"n" (any other single character: unparsable); else "yes" or "no" within the
    first 4 characters, "yes" checked first ("not sure" -> "no", "nyes" -> "yes"); else their
    "other", which ``eval_open`` never matches: None here, wrong and counted.

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


#: a parsed multiple-choice answer that is no option letter: wrong, but not unparsable
NOT_AN_OPTION = "#"
_EDGE_PUNCTUATION = (",", ".", "!", "?", ";", ":", "'")


def loki_choice(text, options: dict[str, str]) -> str | None:
    """LOKI multiple choice, the authors' ``Loki.parse_multi_choice_response`` (MMMU's parser as
    LOKI ships it, ``lm_evaluate/tasks/loki.py`` at 251b4f6), rule for rule.

    Returns an option letter; `NOT_AN_OPTION` when their parser returns an option's *text* (which
    never equals the gold letter, so the row is wrong); None where their parser falls back to
    ``random.choice`` over the letters (the scorer counts it as 1/#options, the expected value).

    The cascade, on the response with each of ``, . ! ? ; : '`` stripped from both ends in turn
    (whitespace is not stripped) and one space added on each side: every "(X)", then every "**X**",
    for the option letters X in order; if none, every letter followed by a space *anywhere*
    ("Answer: A", "DATA B" reads A and B); if none, every "X."; if none, every option text
    (case-sensitive, exact); if none and the padded response has more than 5 words, every option
    whose lower-cased text appears lower-cased (then a letter). Several candidates: the one whose
    marker occurs last (``rfind`` of "(X)", "**X**", " X " or the lower-cased text, by the first
    kind found), ties and all-missing to the first in letter order.

    >>> opts = {"A": "The first one.", "B": "The second one."}
    >>> [loki_choice(t, opts) for t in ["(A)", "Answer: B", "Both A and B", "B A", "USA.",
    ...                                 "The first one.", "It is the first one. Surely."]]
    ['A', 'B', 'B', 'A', 'A', None, 'A']
    """
    t = _text(text)
    if t is None:
        return None
    if not isinstance(options, dict) or not options:
        raise ValueError(f"options must be a non-empty dict of letter -> text, got {options!r:.80}")
    for ch in _EDGE_PUNCTUATION:
        t = t.strip(ch)
    t = f" {t} "
    letters = list(options)
    bracketed = [c for c in letters if f"({c})" in t]
    starred = [c for c in letters if f"**{c}**" in t]
    found = bracketed + starred
    by_text = False
    if not found:
        found = [c for c in letters if f"{c} " in t]
    if not found:
        found = [c for c in letters if f"{c}." in t]
    if not found:
        found = [v for v in options.values() if v in t]
    if not found and len(t.split()) > 5:
        low = t.lower()
        found = [c for c, v in options.items() if v.lower() in low]
        by_text = True
    if not found:
        return None
    if len(found) > 1:
        if by_text:
            low = t.lower()
            where = [low.rfind(options[c].lower()) for c in found]
        elif bracketed:
            where = [t.rfind(f"({c})") for c in found]
        elif starred:
            where = [t.rfind(f"**{c}**") for c in found]
        else:
            where = [t.rfind(f" {c} ") for c in found]
        found = [found[where.index(max(where))]]   # the first of equal positions, as argmax
    return found[0] if found[0] in options else NOT_AN_OPTION
