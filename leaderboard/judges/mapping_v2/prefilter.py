"""Literal prefilters for the lexicon's regular expressions (the idea of RE2's FilteredRE2).

`required_literals(pattern)` returns a set of lower-case strings such that every match of the
pattern contains at least one of them, or None when no such set is found. A sentence that
contains none of an artifact's literals cannot match any of its rules, so the mapper skips the
artifact without running its regular expressions: the lexicon grows without slowing the judge.

It walks the pattern's parse tree (`re._parser`, the standard library's own parser):
concatenations give literal strings (small alternations and optional parts are expanded, at most
`MAX_EXACT` strings), alternations union their branches' sets, repeats with a minimum of one keep
their body's set, zero-width assertions (``\\b``, lookarounds) are skipped. Patterns are compiled
case-insensitively, so literals are lower-cased and the text is lower-cased before the test.
"""
from __future__ import annotations

import re
import re._parser as _parser  # noqa: PLC2701 (the stdlib's regex parser; no public equivalent)

MAX_EXACT = 64
_C = _parser  # the opcode names live on the parser module's namespace
_ZERO_WIDTH = {_C.AT, _C.ASSERT, _C.ASSERT_NOT}


def _exact(items) -> set[str] | None:
    """The finite set of strings a parsed sequence matches, if small; None otherwise."""
    out = {""}
    for op, av in items:
        part = _exact_item(op, av)
        if part is None:
            return None
        out = {a + b for a in out for b in part}
        if len(out) > MAX_EXACT:
            return None
    return out


def _exact_item(op, av) -> set[str] | None:
    if op is _C.LITERAL:
        return {chr(av).lower()}
    if op in _ZERO_WIDTH:
        return {""}
    if op is _C.IN:
        chars = set()
        for iop, iav in av:
            if iop is _C.LITERAL:
                chars.add(chr(iav).lower())
            elif iop is _C.RANGE and iav[1] - iav[0] < 12:
                chars.update(chr(c).lower() for c in range(iav[0], iav[1] + 1))
            else:
                return None
        return chars
    if op is _C.SUBPATTERN:
        return _exact(av[-1])
    if op is _C.BRANCH:
        out: set[str] = set()
        for alt in av[1]:
            part = _exact(alt)
            if part is None:
                return None
            out |= part
        return out if len(out) <= MAX_EXACT else None
    if op in (_C.MAX_REPEAT, _C.MIN_REPEAT) and av[1] <= 2:
        body = _exact(av[2])
        if body is None:
            return None
        out, level = ({""} if av[0] == 0 else set()), {""}
        for n in range(1, av[1] + 1):
            level = {a + b for a in level for b in body}
            if n >= av[0]:
                out |= level
        return out if len(out) <= MAX_EXACT else None
    return None


def _score(literals: set[str]) -> tuple[int, int]:
    return (min(map(len, literals)), -len(literals))


def _required(items) -> set[str] | None:
    """A set of strings one of which every match of the sequence contains, or None."""
    candidates: list[set[str]] = []
    run: set[str] = {""}
    for op, av in items:
        part = _exact_item(op, av)
        if part is not None and len(run) * len(part) <= MAX_EXACT:
            run = {a + b for a in run for b in part}
            continue
        if min(map(len, run)) > 0:
            candidates.append(run)
        run = {""}
        sub = None
        if op is _C.SUBPATTERN:
            sub = _required(av[-1])
        elif op is _C.BRANCH:
            alts = [_required(alt) for alt in av[1]]
            sub = set().union(*alts) if all(a is not None for a in alts) else None
        elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.POSSESSIVE_REPEAT) and av[0] >= 1:
            body = _exact(av[2])
            if body is not None and av[0] <= 8 and all(body):
                sub = {b * av[0] for b in body}  # "s{3,}" needs "sss"
            else:
                sub = _required(av[2])
        elif part is not None:  # an exact part too large to join the run on its own
            sub = part if min(map(len, part)) > 0 else None
        if sub:
            candidates.append(sub)
    if min(map(len, run)) > 0:
        candidates.append(run)
    return max(candidates, key=_score) if candidates else None


def required_literals(pattern: re.Pattern) -> frozenset[str] | None:
    found = _required(list(_parser.parse(pattern.pattern, pattern.flags)))
    return frozenset(found) if found else None


def trie_regex(words) -> str:
    """One regular expression matching any of ``words``, shaped as a trie (shared prefixes
    written once), so matching costs about one pass over the text however many words."""
    trie: dict = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        ends = "" in node
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return emit(trie)


class Index:
    """Which rules can fire on a text: one scan for the literals of every rule of every artifact.

    ``owners[i]`` is any hashable rule id; a rule whose literals are unknown (None) is always
    live. `live(lowered)` returns the ids whose literals occur in ``lowered``.
    """

    def __init__(self, owners: dict, literals: dict) -> None:
        self.always = {o for o in owners if literals[o] is None}
        by_literal: dict[str, set] = {}
        for owner in owners:
            for lit in literals[owner] or ():
                by_literal.setdefault(lit, set()).add(owner)
        # A scan reports the longest literal starting at each position; the shorter literals
        # starting there are its prefixes, so each literal stands for all its literal prefixes.
        self.owners_of = {lit: set().union(*(by_literal[p] for p in by_literal
                                             if lit.startswith(p)))
                          for lit in by_literal}
        self._scan = re.compile(f"(?=({trie_regex(by_literal)}))")

    def live(self, lowered: str) -> set:
        found = set(self.always)
        for lit in {m.group(1) for m in self._scan.finditer(lowered)}:
            found |= self.owners_of[lit]
        return found


class Guarded:
    """A pattern behind its literal prefilter: `search` runs the expression only when one of its
    required literals occurs in the text (the answer is the same, faster on most texts)."""

    def __init__(self, pattern: re.Pattern) -> None:
        self.pattern = pattern
        literals = required_literals(pattern)
        self._guard = None if literals is None else re.compile(trie_regex(literals))

    def _may(self, text: str) -> bool:
        return self._guard is None or self._guard.search(text.lower()) is not None

    def search(self, text: str, *args):
        return self.pattern.search(text, *args) if self._may(text) else None

    def finditer(self, text: str, *args):
        return self.pattern.finditer(text, *args) if self._may(text) else iter(())
