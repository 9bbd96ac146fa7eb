"""SynCred-Bench false-negative causes: what a rationale cites as evidence of authenticity.

SynCred (seed 002, "false-negative attribution", figure 3 and the case figure) reads the rationales
of AI images judged real and finds they cite: a regular layout or template (66.1% of false
negatives), interface / screenshot conventions (61.1%), typography (46.9%), camera perspective and
lighting (46.0%), far more often than "no visible AI artifacts". A rationale may name several.

`attribute(rationale)` is the rule-based mapping (keywords in English and Chinese, with negation):

- the first four causes fire on a keyword that is not denied by a cue just before it in the same
  clause ("this is not a screenshot" names no interface); a denied *flaw* before the keyword still
  counts ("no inconsistencies in the layout" cites the layout);
- ``no_visible_artifacts`` fires on a flaw term that *is* denied ("no visible AI artifacts",
  "free of generation traces", "没有明显伪影").

The paper notes that self-reported rationales are not causal evidence of the decision; neither are
these shares.
"""
from __future__ import annotations

import re
from types import MappingProxyType

from leaderboard.core.causes import CAUSE_TITLES
from leaderboard.judges import text

_I = re.I

#: cause key -> (title, keyword pattern); keys and titles are the benchmark's (`leaderboard.core.causes`)
CAUSES = MappingProxyType({
    "layout_template": (CAUSE_TITLES["layout_template"], re.compile(
        r"\blayouts?\b|\btemplates?\b|\bletterhead|\bofficial (?:format|style|look|notice|"
        r"document)|\bformat(?:ted)? (?:is|looks|matches|of an?)\b|\bdocument structure|"
        r"\bstructured\b|\bseals?\b|\bstamps?\b|\blogos?\b|\bheaders?\b|\bwatermark|"
        r"版式|模板|布局|格式|公章|印章|抬头", _I)),
    "interface_conventions": (CAUSE_TITLES["interface_conventions"], re.compile(
        r"\binterfaces?\b|\bUI\b|\bscreen ?shots?\b|\bscreen (?:capture|grab)|\bstatus bar|"
        r"\bnavigation bar|\bmenu bar|\bbuttons?\b|\bweb ?(?:page|site)s?\b|\bapp(?:lication)?s?\b|"
        r"\bbrowser\b|\bmetadata\b|\btimestamps?\b|界面|截图|截屏|网页|状态栏|页面", _I)),
    "typography": (CAUSE_TITLES["typography"], re.compile(
        r"\bfonts?\b|\btypefaces?\b|\btypograph\w*|\btypeset\w*|\bkerning\b|\bglyphs?\b|"
        r"\b(?:text|characters|lettering|writing|print) (?:is |are |looks? |appears? )?"
        r"(?:clear|crisp|sharp|legible|readable|consistent|aligned|well)|"
        r"\b(?:legible|readable|crisp|clear|sharp) (?:text|characters|lettering)|"
        r"字体|排版|字迹|文字清晰|字号", _I)),
    "camera_lighting": (CAUSE_TITLES["camera_lighting"], re.compile(
        r"\bperspective\b|\blight(?:ing|s)?\b|\bshadows?\b|\bglare\b|\breflections?\b|"
        r"\bcamera\b|\bphotographed\b|\bangle\b|\bexposure\b|\bdepth of field\b|\bmoir[eé]\b|"
        r"\bphoto (?:of|taken)|透视|光照|光线|阴影|拍摄|翻拍|反光|角度", _I)),
    "no_visible_artifacts": (CAUSE_TITLES["no_visible_artifacts"], None),
})
CAUSE_KEYS = tuple(CAUSES)

# A flaw term; denied, it is the "no visible AI artifacts" cause.
_FLAW = re.compile(
    r"\bartifacts?\b|\bartefacts?\b|\bsigns? of (?:ai|generation|synthe\w+|manipulation|"
    r"editing|tampering)|\btraces? of\b|\bglitch\w*|\bdistortions?\b|\banomal\w+|"
    r"\binconsistenc\w+|\btell-?tale\b|\bmanipulation\b|\btampering\b", _I)
_ZH_NO_FLAW = re.compile(r"(?:没有|无|未见|未发现|不存在|看不出)[^。，,；;]{0,8}(?:伪影|痕迹|异常|篡改|瑕疵)")
# Cue just before a keyword (at most 3 words between) that denies it.
_CUE_BEFORE = re.compile(
    r"(?:\b(?:no|not|without|never|neither|nor|lacks?|lacking|absence of|free of)\b|n't)"
    r"(?:\W+\w+){0,3}\W*$", _I)
_ZH_CUE_BEFORE = re.compile(r"(?:不是|并非|没有|无|非)\s*$")


def _denied(clause: str, start: int) -> bool:
    before = clause[max(0, start - 60):start]
    m = _CUE_BEFORE.search(before) or _ZH_CUE_BEFORE.search(before)
    if m is None:
        return False
    # "no inconsistencies in the layout": the cue denies a flaw, and the keyword is cited.
    return _FLAW.search(before, m.start()) is None


def attribute(rationale: str) -> frozenset[str]:
    """Cause keys (`CAUSE_KEYS`) that `rationale` names; ValueError if it is not a string."""
    if not isinstance(rationale, str):
        raise ValueError(f"rationale must be a string, got {type(rationale).__name__}")
    found: set[str] = set()
    for clause in text.clauses(rationale) or [rationale]:
        for key, (_, pattern) in CAUSES.items():
            if pattern is None or key in found:
                continue
            if any(not _denied(clause, m.start()) for m in pattern.finditer(clause)):
                found.add(key)
    for sentence in text.sentences(rationale) or [rationale]:
        if any(text.is_negated(sentence, m.start(), m.end()) for m in _FLAW.finditer(sentence)):
            found.add("no_visible_artifacts")
    if _ZH_NO_FLAW.search(rationale):
        found.add("no_visible_artifacts")
    return frozenset(found)
