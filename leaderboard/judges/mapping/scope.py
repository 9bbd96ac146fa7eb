"""Polarity for artifact mapping: is a mention a claim, a denial, or neither?

A detector mentions an artifact in four ways, and only the first is a claim:

1. **Claim**: "the face is blurry"; also a flaw worded with a negation, "the man casts no shadow",
   "doesn't blink", "no variation in pitch" (the lexicon's `Absent` rules carry their own
   negation; a negation cue followed by a word of normal behaviour, "doesn't match",
   "not natural", "don't touch", asserts a flaw and denies nothing).
2. **Denial**: a cue before the term within its scope ("no visible blur", "free of blocking", "I
   hear no hiss, hum or clicks"), an approving word before it ("consistent lighting", "natural
   intonation"), an approving predicate after it ("the shadows look natural", "lip sync is
   tight", "Lighting: consistent") or a denial after it ("Noise: none", "flicker is absent").
   Approving words are per artifact: "smooth" approves motion but is the flaw of skin texture;
   "steady" approves exposure but is the flaw of a voice (`approval(flaw_words)`).
3. **Benign framing**: "normal sensor grain, not an artifact" (the whole list item).
4. **Generic or hypothetical**: "deepfakes often show blurry edges", "detecting deepfakes involves
   checking lip sync", "I cannot confirm any of these", "if there were banding ..." (the whole
   sentence; TriDF scores what the response says is present, section 3.4).

A *scope* runs from a boundary to the next: sentence punctuation, a semicolon or colon, a dash
between spaces, brackets, a contrastive word ("but", "while", "although", ...), or a comma or
"and" that starts a new clause ("..., and the voice is robotic"). A negation reaches at most
`SCOPE_TOKENS` words, so "no blur, noise or banding" denies all three. A self-correction ("wait
- let me correct: the shadow is consistent", "... - no wait, ...") retracts what it corrects
(`engine.map_response`).
"""
from __future__ import annotations

import bisect
import re
from functools import lru_cache

from leaderboard.judges.mapping.prefilter import Guarded
from leaderboard.judges.mapping.versions import Version, since, until

SCOPE_TOKENS = 9
#: Joins a list item's topic to each of its sentences ("Colour | too vivid"): a topic term pairs
#: with a qualifier in the body, and a bare approval in the body ("Lighting | consistent")
#: denies it. Not a scope boundary for pairs; cues in the topic do not reach the body.
TOPIC_SEP = " | "

_CONTRAST = r"but|however|although|though|while|whereas|yet|except|instead|unlike|otherwise"
_DET = (r"the|a|an|this|that|these|those|there|it|its|his|her|their|they|he|she|we|i|you|"
        r"some|one|another|overall|everything|nothing|no")
_CLAUSE_EDGES = (rf"\s-\s|,\s*(?:so|where|as\s+if|because)\b|\b(?:{_CONTRAST})\b|"
                 rf"(?:,|\band\b)(?=\s+(?:{_DET})\b)")
BOUNDARY = re.compile(rf"[.!?;:\n|]|{_CLAUSE_EDGES}", re.I)
#: Where an embedding judge cuts clauses: like `BOUNDARY`, but "Colour: too vivid" stays whole.
CLAUSE_BOUNDARY = re.compile(rf"[.!?;\n|]|{_CLAUSE_EDGES}", re.I)
# Where an approving predicate stops being about the term before it (brackets stay inside:
# "the reflections in the shop windows (consistent)").
_TAIL_STOP = re.compile(
    rf"[.!?;\n]|\s-\s|\b(?:{_CONTRAST})\b|,\s*(?:and\s+)?(?:{_DET})\b|\band\s+(?:{_DET})\b", re.I)

_CUE = re.compile(
    r"\b(?:no|not|none|never|neither|nor|without|nothing|zero|free\s+of|absence\s+of|"
    r"absent\s+of|devoid\s+of|lack\s+of\s+any|rather\s+than|instead\s+of|hardly\s+any|"
    r"barely\s+any|dont|doesnt|didnt|isnt|arent|cant|cannot|ruled\s+out|rule\s+out|"
    r"rules\s+out|(?<!no\s)doubt)\b|n't\b", re.I)
# Words after a cue that make it a hedge or an emphasis, not a negation.
_NOT_A_CUE = re.compile(
    r"^\W*(?:only|just|sure|certain|100|entirely\s+sure|quite\s+sure|necessarily|doubt|wonder|"
    r"a\s+doubt|question|"
    r"longer|more\s+than|less\s+than|matter|exactly\s+sure|convinced)\b", re.I)
# Words of normal behaviour: a cue before one of them asserts a flaw ("doesn't match", "not
# natural", "never blinks", "don't touch the floor", "nothing can be read").
NORMAL = (
    r"natural\w*|consistent\w*|realistic\w*|real|human\w*|genuine\w*|normal\w*|correct\w*|right|"
    r"proper\w*|accurate\w*|plausibl\w*|believabl\w*|coherent\w*|match\w*|align\w*|sync\w*|"
    r"synchroni[sz]\w*|in\s+sync|agree\w*|correspond\w*|fit|fits|fitting|line\s+up|lines\s+up|"
    r"follow\w*|blink\w*|touch\w*|contact|connect\w*|rest|rests|resting|sit|sits|sitting|land|"
    r"lands|landing|reach\w*|press\w*|hold|holds|holding|grip\w*|close|closes|closing|wrap\w*|"
    r"swing\w*|move|moves|moving|rotat\w*|react\w*|participat\w*|vary|varies|varying|rise|"
    r"rises|pause\w*|breath\w*|reflect\w*|cast|casts|show|shows|spell\w*|make\s+sense|"
    r"makes\s+sense|legibl\w*|readabl\w*|recogni[sz]abl\w*|intact|complete|round|symmetric\w*|"
    r"straight|smooth\w*|fluid\w*|continuous\w*|stable|steady|sharp\w*|crisp\w*|focused|"
    r"in\s+focus|clear|good|perfect|fine|well|physical\w*|lengthened|accompanied|engage\w*|"
    r"cross|crosses|buckl\w*|meet|meets|exist\w*|belong\w*|the\s+same|be\s+read|read|"
    r"quite\s+right|look\s+right|sound\s+right|work|works|add\s+up|adds\s+up|respond\w*|"
    r"change\s+with|obey\w*|deform\w*\s+(?:as|under|when)|sink\s+into|settle\w*")
_LIST_INTRO = re.compile(r"\b(?:such\s+as|like|including|e\.?g\.?|for\s+example)\b", re.I)
_FLAW_AFTER_CUE = re.compile(rf"^\W*(?:\w+\W+){{0,2}}?(?:{NORMAL})\b", re.I)

# Approval words. Per artifact, words that are its flaw are taken out (`approval`).
APPROVE_ADJ = (
    "natural", "naturally", "consistent", "consistently", "realistic", "realistically", "real",
    "correct", "correctly", "plausible", "normal", "normally", "fine", "ok", "okay", "accurate",
    "accurately", "coherent", "believable", "sharp", "crisp", "clean", "clear", "intact",
    "good", "perfect", "legible", "readable", "smooth", "smoothly", "detailed", "fluid",
    "fluidly", "continuous", "stable", "steady", "appropriate", "expected", "genuine", "human",
    "human-like", "lively", "expressive", "varied", "tight", "symmetric", "symmetrical",
    "right", "proper", "properly", "spontaneous", "well", "convincing", "authentic",
    "physically plausible", "physically coherent", "physically consistent", "as expected",
    "in focus", "in sync", "synchronized", "synchronised", "unremarkable", "conservative",
    "fitting", "in line", "reasonable", "acceptable", "unaltered", "untouched", "undistorted",
    "unmodified", "spot on", "on point", "in order", "as it should be", "within normal range",
    "within the normal range", "within normal limits")
# The safer subset that approves a term it precedes ("consistent lighting", "natural blinks"):
# "clear banding", "fine grain", "real problem" are claims.
APPROVE_BEFORE = (
    "natural", "consistent", "correct", "realistic", "normal", "plausible", "accurate",
    "coherent", "proper", "genuine", "tight", "matching", "intact",
    "legible", "crisp", "sharp", "smooth", "good", "clean", "believable", "seamless",
    "convincing", "expressive", "lively", "varied", "correctly", "naturally")
APPROVE_ADVERB = ("naturally", "normally", "correctly", "smoothly", "seamlessly", "fluidly",
                  "properly", "realistically", "consistently", "accurately", "well", "fine")
APPROVE_VERB = (r"checks?\s+out|match|matches|matched|agree|agrees|align|aligns|aligned|"
                r"correspond|"
                r"corresponds|fit|fits|lines?\s+up|holds?\s+up|makes?\s+sense|explains?|"
                r"sync|syncs|synced|coincide|coincides|tracks?|follows?\s+(?:the|that|this|"
                r"his|her|their)")
_VERB_BEFORE_ADJ = (r"is|are|was|were|look|looks|looked|appear|appears|appeared|seem|seems|"
                    r"seemed|remain|remains|stay|stays|stayed|sound|sounds|sounded|feel|feels|"
                    r"move|moves|moved|blink|blinks|behave|behaves|flow|flows|read|reads|"
                    r"speak|speaks|render|rendered|lit|formed|blended|matched|placed|aligned|"
                    r"synchroni[sz]ed|integrated|exposed|focused|has|have|had|shows?|"
                    r"showing|hold|holds|holding|grip|grips|gripping|varies|vary|moving|"
                    r"behaving|flowing|directed|attached|sits|sit|rests|rest|falls?|cast|casts|"
                    r"found|judged|deemed|stays?|remained|behaved")
_ADVERB = (r"(?:\w+ly|quite|very|fairly|pretty|entirely|fully|all|both|also|actually|still|"
           r"otherwise|indeed|perfectly|completely|totally|mostly|largely|generally|broadly|"
           r"reasonably|acceptably)")


def _alt(words) -> str:
    return "|".join(w.replace(" ", r"\s+").replace("-", r"[- ]?") for w in
                    sorted(words, key=len, reverse=True))


@lru_cache(maxsize=64)
def approval(flaw_words: frozenset[str] = frozenset()) -> tuple[re.Pattern, re.Pattern]:
    """(before, after): approval of a term just before it ("consistent lighting") and after it
    ("the lighting looks consistent", "Lighting | natural", "lip movements line up")."""
    adj = _alt(w for w in APPROVE_ADJ if w not in flaw_words)
    pre = _alt(w for w in APPROVE_BEFORE if w not in flaw_words)
    adv = _alt(w for w in APPROVE_ADVERB if w not in flaw_words)
    verbs = APPROVE_VERB
    before = re.compile(rf"\b(?:well[- ]\w+|{pre})\W+(?:\w+\W+){{0,1}}$", re.I)
    after = re.compile(
        rf"^(?:\W*\|\s*(?:{_ADVERB}\s+)?(?:{adj})\b"
        rf"|\s+(?:{adv})\b|\s+(?:{_ADVERB}\s+)?(?:{adj})\b(?!\s+(?:and\s+)?(?:but|yet))"
        rf"|[^.!?;|]{{0,60}}?\b(?:{_VERB_BEFORE_ADJ})\s+(?:{_ADVERB}\s+){{0,2}}"
        rf"(?:{adj}|well[- ]\w+)\b"
        rf"|[^.!?;|]{{0,30}}?\((?:{_ADVERB}\s+)?(?:{adj})\)"
        rf"|[^.!?;|]{{0,40}}?(?<!not\s)(?<!n't\s)(?<!never\s)(?<!of\s)\b(?:{verbs})\b"
        rf"(?!\s+(?:poorly|badly|only\s+\w+ly))"
        rf"|[^.!?;|]{{0,40}}?,\s*(?:{_ADVERB}\s+)?(?:{adj})\b(?!\s+(?:\w+\s+)?(?:but|yet))"
        rf"|\s*(?:\w+\s+)?(?:{adj})\s*(?:[.,;]|$))",
        re.I)
    return before, after


_CONCESSIVE = re.compile(
    r"^[^.!?;]{0,40}?\b(?:but|yet|though)\s+(?:\w+ly\s+)?(?:natural|normal|plausible|realistic|"
    r"consistent|expected|fine|correct|acceptable|benign|harmless|genuine|ordinary)\b", re.I)
# A denial after the term: "Noise: none observed", "blur is not present", "hiss: absent".
_DENIED_AFTER = (
    r"^[^.!?;\n]{0,60}?(?:[|:]\s*(?:none|no\b|nothing|absent|false|n/?a|not\s+(?:\w+\s+)?"
    r"(?:present|observed|detected|visible|found|noticeable|apparent|evident|seen|heard|"
    r"applicable|an\s+issue|a\s+problem))|\b(?:is|are|was|were)\s*(?:not|n't)\s+(?:\w+\s+)?"
    r"(?:present|observed|detected|visible|found|noticeable|apparent|evident|seen|heard|"
    r"an\s+issue|a\s+problem)\b|\b(?:is|are|was|were)\s+(?:absent|not\s+there)\b|^-free\b|"
    r"^\s*(?:is|are)\s+(?:none|nil)\b|^\s*\(\s*(?:none|no|absent|not\s+(?:present|observed|"
    r"detected|seen|found))\s*\)|\b(?:is|are)\s+nowhere\b|"
    + since(3, r"\b(?:is|are|was|were)\s+(?:negligible|inaudible|imperceptible)\b|") +
    r"\b(?:raises?|shows?|presents?|gives?|"
    r"poses?)\s+no\s+(?:concerns?|red\s+flags?|issues?|problems?|cause\s+for\s+concern)\b)")
_ELSEWHERE = re.compile(r"^\s*(?:elsewhere|anywhere\s+else|in\s+(?:the\s+)?(?:rest|other|"
                        r"background|surrounding)|on\s+the\s+(?:rest|background|neck|hands)|"
                        r"outside|around\s+it|there)\b", re.I)

# "not an artifact", "a normal photographic characteristic": the item's quality mentions deny.
_BENIGN = (
    r"\bnot\s+(?:an?\s+)?" + since(3, r"(?:\w+\s+)?") + r"(?:artifact|artefact|defect|flaw|"
    r"anomaly|sign\s+of\s+(?:editing|"
    r"manipulation|tampering))\b|\bnormal\s+(?:photographic|camera|sensor|recording|"
    r"lens|optical|compression)\s+(?:characteristic|behaviou?r|property|effect|artifact)|"
    r"\bcommon\s+camera\s+behaviou?r\b|\brecording\s+conditions\b|\bexpected\s+(?:for|in|from)\s+"
    r"(?:a|an|this)\s+(?:real|genuine|phone|camera|low-light)")

# Generic or hypothetical: the whole sentence claims nothing about this sample.
_PLURAL_SUBJECT = (
    r"(?<!the\s)(?<!this\s)\b(?:deep\s*fakes|deepfake\s+(?:images|videos|clips|media|audio|"
    r"voices|faces)|fakes|forgeries|manipulated\s+(?:images|videos|media|clips|audio|faces)|"
    r"(?:ai[- ])?generated\s+(?:images|videos|faces|audio|speech|content|media|voices|clips)|"
    r"synthetic\s+(?:media|images|videos|speech|audio|voices|faces)|face[- ]swaps|"
    r"tts\s+(?:systems|voices|engines)|voice\s+clones|cloned\s+voices|generators|"
    r"diffusion\s+models|such\s+(?:images|videos|clips|recordings)|(?:ai|synthetic|fake|"
    r"generated|cloned|deepfake)\s+(?:voices|speech|audio|faces|videos|images|clips|media)|"
    r"(?:voice\s+)?(?:cloning|synthesis|conversion|text-to-speech|tts|face-swap\w*|lip-sync)\s+"
    r"(?:systems|models|tools|engines|methods|pipelines|algorithms)|(?:gans|models|algorithms|"
    r"generative\s+models))\b")
_GENERIC = (
    _PLURAL_SUBJECT + r"[^.!?]{0,80}?\b(?:often|typically|usually|commonly|frequently|generally|"
    r"tend\s+to|may|might|can|could|sometimes)\b"
    r"|\b(?:signs?|cues?|artifacts?|artefacts?|indicators?|clues?|tells?|hallmarks?|things|"
    r"anomalies)\s+(?:such\s+as|like|include|including)\b[^.!?]*\b(?:often|typically|usually|"
    r"commonly|frequently|look\s+for|check|would|should|could|might|can)\b"
    r"|\b(?:often|typically|usually|commonly|tend\s+to)\s+(?:show|contain|exhibit|display|have|"
    r"include|produce|introduce|leave|suffer)\b[^.!?]*\b(?:such\s+as|like|including)\b"
    r"|\b(?:involves?|involving|requires?)\s+(?:checking|looking|examining|analy[sz]ing|"
    r"inspecting)\b"
    r"|\b(?:i\s+would|" + since(3, r"i'd|") + r"one\s+would|you\s+would|we\s+would|should|"
    r"would\s+need\s+to)\s+" + since(3, r"(?:normally\s+|usually\s+|typically\s+)?") +
    r"(?:look|check|consider|examine|inspect|analy[sz]e" + since(3, r"|listen") +
    r")\s+(?:for|whether|if|at|each)\b"
    + since(3, r"|\b(?:i\s+would|i'd|one\s+would|you\s+would)\s+(?:normally\s+|usually\s+|"
            r"typically\s+)?(?:go\s+through\b|(?:check|look\s+at|listen\s+for|examine)\s*:)") +
    r"|^if\b[^.!?]*\b(?:were|would)\b"
    + since(3, r"|\ban?\s+(?:deepfake|fake|forgery|generated\s+(?:image|video|clip|voice|face)|"
            r"synthetic\s+(?:image|video|voice|face)|manipulated\s+(?:image|video|clip|recording)|"
            r"face[- ]swap|voice\s+clone|cloned\s+voice)\s+(?:of\s+this\s+kind\s+|like\s+this\s+)?"
            r"(?:would|might|could|usually|typically|often|tends?\s+to)\b") +
    r"|^(?:usually|typically|generally|often|commonly|normally|in\s+general),"
    r"|\b(?:common|typical|usual|classic|known|frequent|telltale|tell-tale)\s+(?:\w+\s+){0,3}"
    r"(?:signs?|artifacts?|artefacts?|cues?|tells?|indicators?|giveaways?|flaws)\s+(?:"
    + until(3, r"of\s+(?:\w+\s+){1,3}") + since(3, r"(?:of|in|for)\s+(?:\w+\s+){1,4}") +
    r")?(?:include|are|such\s+as|like)\b"
    r"|\?\s*$")
# Unassessable: "I can't assess lip sync", "flicker can't be judged from a single frame"; only
# its own clause (up to a contrast) claims nothing: "hard to judge, but the hum starts abruptly".
_UNASSESSABLE = re.compile(
    r"\b(?:looked|looking|checked|checking|searched|searching|scanned|scanning|examined|"
    r"inspected|tested|listened|listening)\s+(?:carefully\s+|specifically\s+)?(?:for|whether|if)\b|"
    r"\b(?:i'?d|i\s+would|one\s+would|you'?d|you\s+would|we'?d|we\s+would)\s+(?:normally\s+|"
    r"usually\s+|typically\s+)?(?:expect|look\s+for|anticipate)\b|"
    r"\b(?:can(?:no|')?t|cannot|could\s*n[o']?t|unable\s+to|not\s+able\s+to|impossible\s+to|"
    r"hard\s+to|difficult\s+to|no\s+way\s+to)\s+(?:\w+\s+){0,3}?(?:confirm|verify|assess|"
    r"evaluate|judge|determine|tell|analy[sz]e|hear|play|process|check|rule\s+out|be\s+judged|"
    r"be\s+assessed|be\s+checked|identify|detect|say|zoom)\b"
    r"|\bno\s+(?:audio\s+track|audio|sound)\s+(?:track\s+)?to\s+(?:analy[sz]e|assess|check)\b",
    re.I)
_UNASSESSABLE = Guarded(_UNASSESSABLE)
_TURN = re.compile(r",?\s+but\s+(?:here|in\s+this|this|as\s+a|as\s+it|the|his|her|its|their)\b|"
                   r"\bhowever,?\s+(?:here|in\s+this|this)\b", re.I)
_CLAUSE_EDGE = re.compile(r"[;.!?]|\s-\s|\b(?:but|however|although|though|yet|whereas)\b", re.I)


class Polarity:
    """The version-dependent part of reading polarity: the patterns for denials after a term,
    benign framings and generic statements as `version` writes them, and its switches."""

    def __init__(self, version: Version) -> None:
        self.version = version
        self.benign = Guarded(re.compile(version.resolve(_BENIGN), re.I))
        self._denied_after = re.compile(version.resolve(_DENIED_AFTER), re.I)
        self._generic = Guarded(re.compile(version.resolve(_GENERIC), re.I))
        self._turn = version.has("generic_turn")

    def denied_after(self, text: str, end: int) -> bool:
        tail = text[end:]
        m = self._denied_after.match(tail)
        return bool(m) and not _ELSEWHERE.match(tail[m.end():])

    def is_denied(self, text: str, start: int, end: int, flaw_words: frozenset[str]) -> bool:
        """True if the mention ``text[start:end]`` is denied (module docstring, case 2)."""
        return (cue_before(text, start) or self.denied_after(text, end)
                or approved(text, start, end, flaw_words))

    def generic_spans(self, sentence: str) -> list[tuple[int, int]]:
        """Spans of ``sentence`` that claim nothing (generic lists, hypotheticals, "I can't
        tell")."""
        m = self._generic.search(sentence)
        if m:
            # a contrast after a hypothetical or generic opening starts what is said of this
            # sample ("if this were a video I'd check for flicker, but as a still the colours
            # are off")
            turn = _TURN.search(sentence, m.end()) if self._turn else None
            return [(0, turn.start() if turn else len(sentence))]
        return unassessable_spans(sentence)


def unassessable_spans(sentence: str) -> list[tuple[int, int]]:
    """The clauses of ``sentence`` that say a thing cannot be assessed."""
    spans = []
    for m in _UNASSESSABLE.finditer(sentence):
        start = 0
        for b in _CLAUSE_EDGE.finditer(sentence, 0, m.start()):
            start = b.end()
        stop = _CLAUSE_EDGE.search(sentence, m.end())
        spans.append((start, stop.start() if stop else len(sentence)))
    return spans


# Self-corrections: "Wait - ... Let me correct: ...", "... - no wait, ...".
CORRECTION = re.compile(
    r"\b(?:no,?\s+wait|wait(?=\s*[-,.:!])|let\s+me\s+correct|correction\s*:|scratch\s+that|"
    r"on\s+second\s+thought|i\s+take\s+(?:that|it)\s+back|actually,?\s+no|i\s+was\s+wrong)\b",
    re.I)
CORRECTION = Guarded(CORRECTION)
_MID_RETRACTION = re.compile(r"\bno,?\s+wait\b|\bscratch\s+that\b|\bactually,?\s+no\b", re.I)
_MID_RETRACTION = Guarded(_MID_RETRACTION)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?", re.I)


def scope_start(text: str, pos: int) -> int:
    """Start of the scope containing ``pos``: just after the last boundary before it."""
    ends = _boundary_ends(text)
    return ends[bisect.bisect_right(ends, pos) - 1]


@lru_cache(maxsize=256)
def _boundary_ends(text: str) -> list[int]:
    # a boundary counts for ``pos`` when it ends at or before it (as finditer(text, 0, pos) does)
    return [0] + [m.end() for m in BOUNDARY.finditer(text)]


def same_scope(text: str, start: int, end: int) -> bool:
    return BOUNDARY.search(text, start, end) is None


def cue_before(text: str, start: int) -> bool:
    """A negation cue before ``text[start:]`` in its scope that denies (not "doesn't match").
    A list introduced by "such as" / "like" inherits the cue to its end ("no signs such as
    extra fingers, garbled text or warped backgrounds")."""
    window = text[scope_start(text, start):start]
    for cue in _CUE.finditer(window):
        after = window[cue.end():]
        if len(_WORD.findall(after)) > SCOPE_TOKENS and not _LIST_INTRO.search(after):
            continue
        if _NOT_A_CUE.match(after) or _FLAW_AFTER_CUE.match(after):
            continue
        return True
    return False


def approved(text: str, start: int, end: int, flaw_words: frozenset[str]) -> bool:
    """An approving word before or an approving predicate after ``text[start:end]``."""
    before, after = approval(flaw_words)
    head = text[scope_start(text, start):start]
    if before.search(head) and not _CUE.search(head):
        return True
    tail = text[end:]
    if _CONCESSIVE.match(tail):
        return True  # "soft but natural", "visible, yet normal for a phone camera"
    stop = _TAIL_STOP.search(tail, 1)
    tail = tail[:stop.start()] if stop else tail
    m = after.match(tail)
    if not m:
        return False
    # "is not natural", "doesn't look consistent": the predicate itself is negated.
    return not _CUE.search(tail[:m.end()])


def strip_retraction(sentence: str) -> str:
    """Drop the clause a mid-sentence self-correction retracts ("X - no wait, Y" -> "Y")."""
    m = _MID_RETRACTION.search(sentence)
    if not m:
        return sentence
    start = 0
    for b in re.finditer(r";|\s-\s|,", sentence[:m.start()].rstrip(" -,")):
        start = b.end()
    return sentence[:start] + " " + sentence[m.end():]
