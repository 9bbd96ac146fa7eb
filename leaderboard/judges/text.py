"""Deterministic text helpers shared by the offline judges: clauses, negation scope, tokens.

Negation matters for TriDF: a response that says "no visible blur" must not be mapped to blur,
or the hallucination metrics (CHAIR, Hal) would punish a careful model. The rules:

- A *cue* ("no", "not", "n't", "without", "free of", "absence of", "never", "neither/nor",
  "rather than", ...) negates what follows it within the same scope, up to `SCOPE_TOKENS` tokens.
- A scope ends at sentence punctuation, a contrastive word ("but", "however", "although",
  "while", "whereas", "yet", "except"), or at a comma / "and" that starts a new clause (followed
  by a determiner or pronoun such as "the", "there", "it"); "no blur, noise or banding" stays
  one negated list.
- A cue directly followed by a word of *approval* ("not natural", "doesn't match", "never
  blinks", "no contact") asserts a flaw rather than denying one, so it is not a negation.
- An approving predicate after the term ("the lighting looks natural", "shadows are
  consistent") also denies the flaw, and so does a denial after it ("Noise: none observed",
  "blur is not present").
"""
from __future__ import annotations

import re

SCOPE_TOKENS = 7

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")
_CONTRAST = r"but|however|although|though|while|whereas|yet|except|instead"
_DETERMINER = (r"the|a|an|this|that|these|those|there|it|its|his|her|their|they|he|she|we|i|"
               r"some|one|another|overall")
# Where a negation's scope stops (and where `clauses` splits).
_BOUNDARY = re.compile(
    rf"[.!?;:\n]|\s[-\u2013\u2014]\s|\b(?:{_CONTRAST})\b|(?:,|\band\b)(?=\s+(?:{_DETERMINER})\b)",
    re.I)
_CUE = re.compile(
    r"\b(?:no|not|none|never|neither|nor|without|cannot|free\s+of|absence\s+of|absent\s+of|"
    r"rather\s+than|lack\s+of\s+any|devoid\s+of)\b|n't\b|n\u2019t\b",
    re.I)
# Words that, right after a cue, turn the phrase into a flaw ("not natural", "doesn't match").
APPROVAL = (r"natural|naturally|consistent|consistently|realistic|realistically|real|match|matches|"
            r"matching|matched|align|aligned|aligns|sync|synced|synchroni[sz]ed|in\s+sync|coherent|"
            r"plausible|correct|correctly|accurate|accurately|blink|blinks|blinking|touch|touches|"
            r"touching|contact|connect|connected|make\s+sense|makes\s+sense|legible|readable|"
            r"correspond|corresponds|agree|agrees|fit|fits|smooth|smoothly|fluid|fluidly|"
            r"believable|cast|line\s+up|lines\s+up|physically|follow|follows|touched|good|"
            r"perfect|fine")
_APPROVAL_AFTER_CUE = re.compile(rf"^\W*(?:\w+\W+){{0,2}}?(?:{APPROVAL})\b", re.I)
_APPROVING_PREDICATE = re.compile(
    r"^[^.!?;]{0,40}?(?:\b(?:is|are|was|were|look|looks|looked|appear|appears|appeared|seem|seems|"
    r"seemed|remain|remains|has|have|had|shows?|showing)\s+(?:(?:\w+ly|quite|very|fairly|pretty|"
    r"entirely|fully)\s+)?(?:natural|consistent|realistic|correct|plausible|normal|fine|accurate|"
    r"coherent|believable|sharp|clean|clear|intact|well[- ]rendered|good|perfect|legible|smooth|"
    r"detailed|fluid|physically\s+plausible)\b|\b(?:blinks?|moves?|flows?|behaves?|looks?|"
    r"appears?|sounds?|reads?|speaks?)\s+(?:\w+\s+)?(?:naturally|normally|realistically|"
    r"correctly|smoothly|fluidly)\b|"
    r"(?<!not\s)(?<!n't\s)(?<!never\s)\b(?:match|matches|matched|align|aligns|agree|agrees|"
    r"correspond|corresponds|fit|fits)\b(?!\s+(?:poorly|badly))|(?<!not\s)(?<!n't\s)\bin\s+sync\b)",
    re.I)
# A denial after the term: "Noise: none observed", "blur is not present", "flicker: absent".
_DENIED_AFTER = re.compile(
    r"^[^.!?;:\n]{0,30}?(?::\s*(?:none|no\b|absent|not\s+(?:\w+\s+)?(?:present|observed|detected|"
    r"visible|found|noticeable|apparent|evident|seen|applicable)|n/a)|\b(?:is|are|was|were)\s*"
    r"(?:not|n't|n\u2019t)\s+(?:\w+\s+)?(?:present|observed|detected|visible|found|noticeable|"
    r"apparent|evident|seen)\b|\b(?:is|are|was|were)\s+absent\b)",
    re.I)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP = frozenset("""
a an the and or of in on at to for from by with as is are was were be been being this that these
those it its it's there their they them he she his her we our you your i me my which who whom
what when where why how than then so such very also just only both each other some any all more
most much many few can could may might must should would will shall do does did has have had
image video picture photo model appears appear seems seem looks look like likely due because
while into onto over under about around between through across within upon s t not no
ai generated generation synthetic fake real authentic manipulated artifact artifacts suggest
suggests indicate indicates indicating sign signs evidence clear clearly visible noticeable
""".split())


def sentences(text: str) -> list[str]:
    """Split text into sentences and non-empty lines (bullets stripped)."""
    parts = (p.strip(" \t-*\u2022#>") for p in _SENTENCE_SPLIT.split(text))
    return [p for p in (q.strip() for q in parts) if p]


def clauses(text: str) -> list[str]:
    """Split text into clauses at the scope boundaries above (the unit an embedding judge rates)."""
    out: list[str] = []
    for sent in sentences(text):
        start = 0
        for m in _BOUNDARY.finditer(sent):
            piece = sent[start:m.start()].strip(" ,")
            if piece:
                out.append(piece)
            start = m.end()
        piece = sent[start:].strip(" ,.")
        if piece:
            out.append(piece)
    return out


def same_scope(text: str, start: int, end: int) -> bool:
    """True if no scope boundary lies within text[start:end] (both spans in one clause)."""
    return _BOUNDARY.search(text, start, end) is None


def _scope_start(text: str, pos: int) -> int:
    """Start of the negation scope containing `pos`: just after the last boundary before it."""
    start = 0
    for m in _BOUNDARY.finditer(text, 0, pos):
        start = m.end()
    return start


def is_negated(text: str, start: int, end: int | None = None) -> bool:
    """True if the span text[start:end] is denied: a cue precedes it in scope, or an approving
    predicate follows it ("shadows look natural")."""
    end = start if end is None else end
    scope = _scope_start(text, start)
    window = text[scope:start]
    for cue in _CUE.finditer(window):
        after = window[cue.end():]
        if len(_WORD.findall(after.lower())) > SCOPE_TOKENS:
            continue
        if _APPROVAL_AFTER_CUE.match(after):
            continue
        return True
    tail = text[end:]
    if _DENIED_AFTER.match(tail):
        return True
    stop = _BOUNDARY.search(tail)
    tail = tail[:stop.start()] if stop else tail
    return bool(_APPROVING_PREDICATE.match(tail)) and not _CUE.search(tail[:40])


def clause_is_negated(clause: str) -> bool:
    """True if the clause as a whole denies what it mentions ("no visible blur", "the lighting
    looks natural"); clauses that assert a flaw through a cue ("the eyes never blink") are not."""
    words = _WORD.findall(clause.lower())
    if not words:
        return False
    for cue in _CUE.finditer(clause):
        if not _APPROVAL_AFTER_CUE.match(clause[cue.end():]):
            return True
    return bool(_APPROVING_PREDICATE.match(clause) or _DENIED_AFTER.search(clause))


def content_tokens(text: str) -> list[str]:
    """Lower-cased word tokens without stop words, crudely stemmed (plural/-ing/-ed/-ly)."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1]


def _stem(word: str) -> str:
    for suffix in ("ness", "ing", "ed", "ly", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
