"""Deterministic answer extraction from free-text responses, one rule per benchmark.

Each function returns the parsed answer or None when the text is unparsable; an unparsable
answer is scored as wrong (never replaced by a random guess) and counted. The rules follow
../shared/specs/benchmarks.md (LOKI C.2 and its authors' code); where the spec is silent the choice
is written in the docstring and pinned by tests/test_extract.py. TriDF's readers reproduce its
authors' code and live in `leaderboard.core.tridf_readers`.
"""
from __future__ import annotations

import re

_YES_NO = {"yes": "yes", "no": "no", "y": "yes", "n": "no"}

# LOKI option markers: "(A)", "**A**", "A." (the letter not inside a word) and a leading "A ".
_LOKI_MARKERS = (r"\(([A-Z])\)", r"\*\*([A-Z])\*\*", r"(?<![A-Za-z0-9])([A-Z])\.", r"^([A-Z]) ")


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
