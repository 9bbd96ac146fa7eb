"""The mapping's versions as data: which behaviour each supported version of `rules` has.

One engine serves every supported version (`engine.engine_for`); nothing is kept as a copy of the
code. What differs between versions is written as data in two forms:

- **Feature switches** (`FEATURES`): a named behaviour and the first version that has it
  (`Version.has`). A new behaviour in version N is a new switch keyed by N.
- **Versioned pattern text** in the lexicon tables and the polarity patterns: a fragment of a
  regular expression written as ``since(N, r"...")`` is part of the pattern from version N on,
  ``until(N, r"...")`` only before version N; a whole rule can carry ``since=N``
  (`patterns.P` ...). The markers are regular-expression comments (``(?#since 3)...(?#end)``),
  so the tables read as the patterns they are; `resolve` cuts a pattern to one version before it
  is compiled.

Each supported version's output on the whole evaluation set is pinned
(`judge_eval/pinned_rules.jsonl`, `tests/judges/test_judges_pinned.py`): a change that moves an
old version's output fails there. A new version = a new number in `SUPPORTED`, its switches and
fragments, a column added to the pinned file (`python -m judge_eval.pinned --write`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SUPPORTED = ("2", "3")
CURRENT = "3"

#: behaviour -> the first version that has it
FEATURES: dict[str, int] = {
    # round 2's lexicon supplement (`lexicon_round2.EXTRA`) appended to each artifact's rules
    "round2_lexicon": 3,
    # an answer concluding "nothing suggests manipulation" (no fake verdict) keeps only benign
    # signal-level claims (`engine.BENIGN_KEYS`)
    "nothing_found": 3,
    # a list label that frames its own item as absent or fine ("Not present: clipping",
    # "Hiss (no issue)") denies it
    "deny_topic_labels": 3,
    # "..., but here ..." after a generic or hypothetical opening starts a claim again
    "generic_turn": 3,
    # more everyday misspellings corrected (`segment._TYPOS_ROUND2`)
    "round2_typos": 3,
}

_MARK = re.compile(r"\(\?#(since|until) (\d+)\)(.*?)\(\?#end\)", re.S)


def since(number: int, fragment: str) -> str:
    """`fragment`, part of the pattern from version `number` on."""
    return f"(?#since {number}){fragment}(?#end)"


def until(number: int, fragment: str) -> str:
    """`fragment`, part of the pattern before version `number` only."""
    return f"(?#until {number}){fragment}(?#end)"


@dataclass(frozen=True)
class Version:
    number: int

    def has(self, feature: str) -> bool:
        return self.number >= FEATURES[feature]

    def resolve(self, pattern: str) -> str:
        """`pattern` as this version reads it (its `since` / `until` fragments cut)."""
        def keep(m: re.Match) -> str:
            first = int(m[2])
            wanted = self.number >= first if m[1] == "since" else self.number < first
            return m[3] if wanted else ""
        return _MARK.sub(keep, pattern)


def version(identity: str | int) -> Version:
    """The `Version` for ``"2"``, ``"3"`` (or an int); ValueError names the supported ones."""
    if str(identity) not in SUPPORTED:
        raise ValueError(f"unsupported mapping version {identity!r}; supported: {SUPPORTED}")
    return Version(int(identity))
