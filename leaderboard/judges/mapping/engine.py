"""The artifact mapping engine (`rules@2`, `rules@3`): a response's sentences, each rule's
mentions, their polarity, the claims.

`engine_for(version).map_response(text, keys)` returns the artifacts (among `keys`, the item's
modality) that the response claims are present; `analyze` also returns what it denies (for tests
and error analysis). The module-level `map_response`, `analyze`, `claim_clauses` and `LEXICON` are
the current version's. One engine serves every version: what differs is data
(`versions.py`: feature switches keyed by version, versioned fragments in the lexicon tables),
and each version's output on the evaluation set is pinned by a test. The pipeline:

1. `segment.split`: sentences with their list item's topic.
2. Per sentence: generic or unassessable spans are skipped (`scope.Polarity.generic_spans`); a
   mid-sentence self-correction drops what it retracts.
3. Per candidate artifact whose trigger occurs: each rule's mentions are claims or denials
   (`scope.Polarity.is_denied`, rule kinds in `patterns.py`).
4. Per item: a benign framing ("not an artifact") turns quality claims into denials.
5. Across sentences: a denial made at or after a self-correction ("Wait - let me correct: the
   shadow is consistent") retracts the earlier claims of that artifact.
6. Per response (switch ``nothing_found``, from v3): an answer concluding that nothing suggests
   manipulation, with no fake verdict, keeps only benign signal-level claims (`BENIGN_KEYS`).

The lexicon is `lexicon_signal`, `lexicon_scene` and `lexicon_human`, with round 2's rules
appended from v3 (`lexicon_round2.EXTRA`, switch ``round2_lexicon``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from leaderboard.core.taxonomy import ARTIFACT_KEYS, artifacts_for
from leaderboard.judges.mapping import scope, segment
from leaderboard.judges.mapping.lexicon_human import HUMAN
from leaderboard.judges.mapping.lexicon_round2 import EXTRA
from leaderboard.judges.mapping.lexicon_scene import SCENE
from leaderboard.judges.mapping.lexicon_signal import SIGNAL
from leaderboard.judges.mapping.patterns import Artifact, Rule
from leaderboard.judges.mapping.prefilter import Index, required_literals
from leaderboard.judges.mapping.versions import CURRENT, Version
from leaderboard.judges.mapping.versions import version as parse_version

_SPECS = {**SIGNAL, **SCENE, **HUMAN}
_VISUAL = frozenset(artifacts_for("image"))

CLAIM, DENY = "claim", "deny"
# An answer that concludes "nothing suggests manipulation" (and gives no fake verdict) claims no
# inconsistency: whatever it mentions is a checklist item found fine. It may still report a benign
# signal-level imperfection ("the only imperfection is the grain of a cheap camera").
_NOTHING_FOUND = re.compile(
    r"\b(?:nothing|no\s+(?:sign|evidence|indication|finding)s?)\b[^.!?\n]{0,40}?\b(?:suggests?|"
    r"points?\s+to|indicates?|of|that\s+(?:suggests|indicates|points\s+to))\b"
    r"[^.!?\n]{0,30}?\b(?:manipulat\w*|edit\w*|synthe\w*|generat\w*|deepfake|tamper\w*)|"
    r"\bno\s+findings?\s+to\s+report\b|\bi\s+(?:see|found|find)\s+nothing\b", re.I)
_FAKE_VERDICT = re.compile(r"\blikely\s+(?:manipulated|fake|generated|synthetic)\b|"
                           r"\b(?:is|looks|seems)\s+(?:a\s+)?(?:fake|deepfake|generated|"
                           r"manipulated|synthetic)\b", re.I)
BENIGN_KEYS = frozenset({"blurriness", "blockiness", "noise", "banding", "hiss", "buzz", "pops",
                         "clipping", "flicker"})
# A qualifier before its term across one of these describes the clause's subject, not the term.
_RELATION = re.compile(r"n't\b|\bnot\b|\bwith\b|\bbetween\b|\bto\b|\bthan\b|\bagainst\b", re.I)


@dataclass(frozen=True)
class Analysis:
    claimed: frozenset[str]
    denied: frozenset[str]


def _in_spans(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def _excluded(artifact: Artifact, text: str, start: int, end: int) -> bool:
    if artifact.exclude is None:
        return False
    lo = scope.scope_start(text, start)
    stop = scope.BOUNDARY.search(text, end)
    return artifact.exclude.search(text, lo, stop.start() if stop else len(text)) is not None


class _Ctx:
    """One sentence being read: its text, where its topic ends, its generic spans, and memos of
    the polarity checks (the same mention is asked about by several rules)."""

    __slots__ = ("text", "body", "spans", "want_denials", "polarity", "_denied")

    def __init__(self, text: str, body: int, spans, want_denials: bool,
                 polarity: scope.Polarity) -> None:
        self.text, self.body, self.spans, self.want_denials = text, body, spans, want_denials
        self.polarity = polarity
        self._denied: dict = {}

    def denied(self, start: int, end: int, flaw: frozenset[str]) -> bool:
        key = (start, end, flaw)
        hit = self._denied.get(key)
        if hit is None:
            hit = self._denied[key] = self.polarity.is_denied(self.text, start, end, flaw)
        return hit


def _rule_verdict(rule: Rule, artifact: Artifact, ctx: _Ctx) -> str | None:
    """CLAIM if some mention of ``rule`` in the sentence asserts the artifact, DENY if it is only
    mentioned to be denied, None if not mentioned. ``ctx.text[:ctx.body]`` is the item's topic."""
    text, body, spans, flaw = ctx.text, ctx.body, ctx.spans, artifact.flaw_words
    verdict = None
    if rule.kind in ("P", "A"):
        for m in rule.a.finditer(text):
            if _in_spans(m.start(), spans) or _excluded(artifact, text, m.start(), m.end()):
                continue
            if rule.kind == "A" or not ctx.denied(m.start(), m.end(), flaw):
                return CLAIM
            verdict = DENY
        return verdict
    if rule.kind == "C":
        terms = [t for t in rule.a.finditer(text) if not _in_spans(t.start(), spans)]
        if not terms:
            return None
        for q in rule.b.finditer(text):
            if _in_spans(q.start(), spans):
                continue
            for t in terms:
                if t.start() < q.end() and q.start() < t.end():
                    continue  # one word cannot be both the subject and its qualifier
                in_topic = t.end() <= body
                first, last = (t, q) if t.start() < q.start() else (q, t)
                if not in_topic and not scope.same_scope(text, first.end(), last.start()):
                    continue
                if first is q and _RELATION.search(text, q.start(), t.start()):
                    continue  # "the lighting doesn't match the background": the relation's object
                if _excluded(artifact, text, q.start(), q.end()) or \
                        _excluded(artifact, text, t.start(), t.end()):
                    continue
                if ctx.denied(q.start(), q.end(), flaw) or ctx.denied(t.start(), t.end(), flaw):
                    verdict = DENY
                    continue
                return CLAIM
        if verdict is None and ctx.want_denials and any(
                ctx.denied(t.start(), t.end(), flaw) and
                not _excluded(artifact, text, t.start(), t.end()) for t in terms):
            verdict = DENY  # the subject is mentioned only to be approved ("lighting is natural")
        return verdict
    # "S": both patterns in the sentence body, the first not denied.
    if rule.unless is not None and rule.unless.search(text, body):
        return None
    firsts = [m for m in rule.a.finditer(text, body) if not _in_spans(m.start(), spans)]
    if not firsts or not any(not _in_spans(m.start(), spans) for m in rule.b.finditer(text, body)):
        return None
    for m in firsts:
        if _excluded(artifact, text, m.start(), m.end()):
            continue
        if ctx.denied(m.start(), m.end(), flaw):
            verdict = DENY
            continue
        return CLAIM
    return verdict


def _verdict(artifact: Artifact, rules: list[Rule], ctx: _Ctx, audio_only: bool) -> str | None:
    if artifact.context is not None and not audio_only and not artifact.context.search(ctx.text):
        return None
    verdict = None
    for rule in rules:
        v = _rule_verdict(rule, artifact, ctx)
        if v == CLAIM:
            return CLAIM
        verdict = verdict or v
    return verdict


class Engine:
    """The mapping as one version reads it: that version's lexicon compiled, its literal index,
    its polarity patterns and switches (`versions.py`). Build it with `engine_for`."""

    def __init__(self, version: Version) -> None:
        self.version = version
        self.polarity = scope.Polarity(version)
        self.nothing_found = version.has("nothing_found")
        extra = EXTRA if version.has("round2_lexicon") else {}
        self.lexicon: dict[str, Artifact] = {
            k: _SPECS[k].build(version, extra.get(k, ())) for k in ARTIFACT_KEYS}
        # Every rule needs its first pattern (a pair's term) to occur; one scan of a sentence for
        # all those patterns' literals tells which rules can fire (`prefilter.Index`).
        # A pair or co-occurrence rule needs its second pattern too.
        parts = {(key, i, part): (rule.a if part == "a" else rule.b)
                 for key, art in self.lexicon.items() for i, rule in enumerate(art.rules)
                 for part in ("a", "b") if part == "a" or rule.b is not None}
        self.index = Index(list(parts), {o: required_literals(p) for o, p in parts.items()})
        self.needs_b = {(k, i) for k, i, part in parts if part == "b"}

    def analyze(self, response: str, keys=ARTIFACT_KEYS, *, denials: bool = True) -> Analysis:
        """What ``response`` claims and denies among ``keys`` (module docstring). With
        ``denials=False`` the denied set may be incomplete (faster; the claims are the same)."""
        keys = list(keys)
        wanted = frozenset(keys)
        audio_only = not _VISUAL.intersection(keys)
        sentences = segment.split(response, self.version)
        benign = {s.item for s in sentences if self.polarity.benign.search(s.text)}
        claimed_at: dict[str, list[int]] = {}
        denied_at: dict[str, list[int]] = {}
        correction_at: int | None = None
        for idx, sent in enumerate(sentences):
            text = scope.strip_retraction(sent.text)
            if correction_at is None and scope.CORRECTION.search(f"{sent.topic} {text}"):
                correction_at = idx
            if sent.frame == "generic":
                continue
            body = len(sent.topic) + len(scope.TOPIC_SEP) if sent.topic else 0
            full = f"{sent.topic}{scope.TOPIC_SEP}{text}" if sent.topic else text
            live: dict[str, list[int]] = {}
            found = self.index.live(full.lower())
            for key, i, part in found:
                # a pair's term alone can only be denied ("the lighting looks natural")
                if part != "a" or key not in wanted:
                    continue
                if (key, i) not in self.needs_b or (key, i, "b") in found or \
                        denials and self.lexicon[key].rules[i].kind == "C":
                    live.setdefault(key, []).append(i)
            if not live:
                continue
            spans = [(a + body, b + body) for a, b in self.polarity.generic_spans(text)]
            if spans and spans[0] == (body, len(full)):
                continue
            ctx = _Ctx(full, body, spans, denials, self.polarity)
            for key in keys:
                if key not in live:
                    continue
                artifact = self.lexicon[key]
                rules = [artifact.rules[i] for i in sorted(live[key])]
                v = _verdict(artifact, rules, ctx, audio_only)
                if v == CLAIM and (sent.frame == "deny" or
                                   artifact.quality and sent.item in benign):
                    v = DENY
                if v is not None:
                    (claimed_at if v == CLAIM else denied_at).setdefault(key, []).append(idx)
        if correction_at is not None:
            for key, where in denied_at.items():
                last_denial = max(where)
                if last_denial >= correction_at and key in claimed_at:
                    kept = [i for i in claimed_at[key] if i > last_denial]
                    if kept:
                        claimed_at[key] = kept
                    else:
                        del claimed_at[key]
        claimed = frozenset(claimed_at)
        if self.nothing_found and claimed - BENIGN_KEYS and _nothing_found(response):
            claimed &= BENIGN_KEYS
        return Analysis(claimed, frozenset(denied_at) - claimed)

    def map_response(self, response: str, keys=ARTIFACT_KEYS) -> frozenset[str]:
        """Artifacts among ``keys`` that ``response`` claims are present."""
        # denials only matter to the claims when a self-correction can retract one
        correction = bool(scope.CORRECTION.search(response))
        return self.analyze(response, keys, denials=correction).claimed

    def claim_clauses(self, response: str, keys=ARTIFACT_KEYS) -> list[str]:
        """The response's clauses that may claim something, for an embedding judge (the shipped
        MiniLM judges use version 2's).

        Clauses are cut at scope boundaries (`scope.BOUNDARY`), prefixed with their item's topic
        ("Colour: too vivid"). Dropped: generic and unassessable spans, retracted text, and clauses
        the rules read as denials only ("no visible blur", "the lighting looks natural").
        """
        keys = list(keys)
        out: list[str] = []
        for sent in segment.split(response, self.version):
            text = scope.strip_retraction(sent.text)
            spans = self.polarity.generic_spans(text)
            start = 0
            pieces = []
            for m in scope.CLAUSE_BOUNDARY.finditer(text + "."):
                pieces.append((start, m.start()))
                start = m.end()
            for a, b in pieces:
                clause = text[a:b].strip(" ,-")
                if len(clause) < 3 or any(lo <= a < hi for lo, hi in spans):
                    continue
                clause = f"{sent.topic}: {clause}" if sent.topic else clause
                result = self.analyze(clause, keys)
                if result.denied and not result.claimed:
                    continue
                out.append(clause)
        return out


def _nothing_found(response: str) -> bool:
    """The answer concludes that nothing suggests manipulation, without a fake verdict and
    without a "but" in that conclusion."""
    m = _NOTHING_FOUND.search(response)
    if m is None:
        return False
    stop = re.search(r"[.!?\n]", response[m.end():])
    start = max(response.rfind(c, 0, m.start()) for c in ".!?\n") + 1
    sentence = response[start:m.end() + (stop.start() if stop else len(response))]
    return not _FAKE_VERDICT.search(response) and not re.search(
        r"\b(?:but|except|apart\s+from|other\s+than|besides)\b", sentence, re.I)


def engine_for(version: str | int = CURRENT) -> Engine:
    """The engine of mapping version ``"2"`` or ``"3"`` (built once, then shared); ValueError
    names the supported versions."""
    return _engine(parse_version(version))


@lru_cache(maxsize=None)
def _engine(version: Version) -> Engine:
    return Engine(version)


_CURRENT = engine_for(CURRENT)
LEXICON = _CURRENT.lexicon
analyze = _CURRENT.analyze
map_response = _CURRENT.map_response
claim_clauses = _CURRENT.claim_clauses
