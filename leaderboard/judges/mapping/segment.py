"""Segmentation for artifact mapping: from a detector's free text to sentences with topics.

Detectors answer in prose, lists, "Title/Reason" blocks, markdown headings, tables and JSON. The
mapper reads one `Sentence` at a time; a sentence keeps

- `topic`: the label of its list item or heading line when the item reads ``Topic: body`` or
  ``Topic - body`` (at most `TOPIC_WORDS` words: "Colour: too vivid", "Lighting - the face is lit
  from below"). A term in the topic pairs with a qualifier in the body ("Colour" + "too vivid");
- `text`: the sentence itself, markdown stripped, quotes and dashes normalised;
- `item`: the index of the list item / paragraph it belongs to (a benign framing such as "not an
  artifact" applies to its item);
- `frame`: "deny" under a section heading that frames its items as absent or fine ("Elements
  that appear consistent:", "Not observed:"), "generic" under one that frames them as things to
  check ("Typical indicators:"), else "". A section ends at a blank line, another heading or
  prose.

Sentences split at ``.!?`` followed by a space and at line breaks; semicolons and dashes stay
inside a sentence and only bound negation scopes (`scope.py`), because detectors often put a
finding and its context on both sides of a semicolon.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from leaderboard.judges.mapping.prefilter import trie_regex
from leaderboard.judges.mapping.versions import Version

TOPIC_WORDS = 5

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"',
                         "\u2013": " - ", "\u2014": " - ", "\u2212": "-", "\u00a0": " ",
                         "\u2022": "-", "\u00b7": "-", "\u2192": " - "})
_BULLET = re.compile(r"^\s*(?:[-*+>#]+\s*|\(?\d{1,2}[.)]\s+|\(?[a-hA-H][.)]\s+|\(\w\)\s*)+")
_MARKUP = re.compile(r"\*\*|__|`|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")
# Abbreviations whose dot does not end a sentence.
_ABBREV = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|cf|fig|no)\.(?=\s)", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=\S)")
_ELLIPSIS = re.compile(r"\.{2,}|\u2026")
_TOPIC = re.compile(r"^(?P<topic>[A-Za-z][\w/&'() -]*?)\s*(?::(?!\d)|\s-\s)\s*(?P<body>.*)$")
# Field labels that frame a finding without naming it.
_JUNK_TOPIC = re.compile(
    r"^(?:title|reason|reasoning|note|notes|summary|conclusion|evidence|finding|findings|"
    r"confidence|analysis|answer|verdict|result|description|details?|explanation|observation|"
    r"observations|issue|issues|problem|problems|artifact|artifacts|artifact findings|type|"
    r"category|location|region|where|what|why|severity|timestamp|time|frames?|overall|"
    r"assessment|final answer|decision|label|prediction|key evidence|main evidence|"
    r"likely manipulated|likely authentic|manipulated|authentic|fake|real)$", re.I)

# Misspellings detectors (and people) make of the words the lexicon looks for.
_TYPOS = {
    "noize": "noise", "noisey": "noisy", "nois": "noise", "bluriness": "blurriness",
    "blurryness": "blurriness", "blury": "blurry", "bluring": "blurring", "blured": "blurred",
    "blurr": "blur", "backround": "background", "backgound": "background",
    "backgroud": "background", "bakground": "background", "lightning": "lighting",
    "ligthing": "lighting", "lighing": "lighting", "shaddow": "shadow", "shaddows": "shadows",
    "shadown": "shadow", "reflexion": "reflection", "reflexions": "reflections",
    "refection": "reflection", "relfection": "reflection", "reflction": "reflection",
    "collor": "color", "colur": "colour", "saturaton": "saturation", "texure": "texture",
    "textre": "texture", "anatomicaly": "anatomically", "anatomic": "anatomical",
    "expresion": "expression", "expresions": "expressions", "flikering": "flickering",
    "flickring": "flickering", "flicering": "flickering", "flikers": "flickers",
    "flicekr": "flicker", "pixelized": "pixelated", "pixellated": "pixelated",
    "blokiness": "blockiness", "blockyness": "blockiness", "blocky-ness": "blockiness",
    "grainny": "grainy", "blendng": "blending", "bleding": "blending", "fingures": "fingers",
    "fingres": "fingers", "distorsion": "distortion", "distroted": "distorted",
    "distoreted": "distorted", "cliping": "clipping", "clippng": "clipping",
    "poping": "popping", "prosidy": "prosody", "prosady": "prosody", "intonnation": "intonation",
    "intonaton": "intonation", "monotonus": "monotonous", "monotoneous": "monotonous",
    "robotik": "robotic", "robotical": "robotic", "emotinal": "emotional",
    "contradicion": "contradiction", "unnatual": "unnatural", "unatural": "unnatural",
    "unnatrual": "unnatural", "unnaturel": "unnatural", "unnaturaly": "unnaturally",
    "inconsistant": "inconsistent", "inconsistancy": "inconsistency",
    "inconsitent": "inconsistent", "inconsisent": "inconsistent", "unreadible": "unreadable",
    "unredable": "unreadable", "ilegible": "illegible", "illegable": "illegible",
    "jibberish": "gibberish", "temporial": "temporal", "artifcat": "artifact",
    "artifcats": "artifacts", "anomoly": "anomaly", "mouvement": "movement",
    "movment": "movement", "movments": "movements", "blinkng": "blinking", "wobly": "wobbly",
    "moprhing": "morphing", "seperate": "separate", "synchronisation": "synchronization",
    "desyncronized": "desynchronized", "unsyncronized": "unsynchronized", "lipsinc": "lipsync",
    "saturized": "saturated", "oversaturized": "oversaturated", "exagerated": "exaggerated",
    "expresionless": "expressionless", "disapears": "disappears", "dissapears": "disappears",
    "apears": "appears", "wierd": "weird", "strage": "strange", "teh": "the",
}
# rules@3 (switch "round2_typos"): more everyday misspellings of the words the lexicon reads
_TYPOS_ROUND2 = {
    "distorded": "distorted", "distored": "distorted", "distortd": "distorted",
    "dosnt": "doesnt", "dosent": "doesnt", "compresion": "compression",
    "pixilated": "pixelated", "pixalated": "pixelated", "flikker": "flicker",
    "flickr": "flicker", "clik": "click", "cliks": "clicks", "clics": "clicks",
    "cracle": "crackle", "crackel": "crackle", "teath": "teeth", "refelction": "reflection",
    "reflecion": "reflection", "reflaction": "reflection", "shadw": "shadow",
    "shadws": "shadows", "gradiant": "gradient", "metalic": "metallic",
    "oversaturared": "oversaturated", "saturatd": "saturated", "lipsynch": "lipsync",
    "backgrond": "background", "expresison": "expression",
    "blinkin": "blinking", "anatomicly": "anatomically", "unrealstic": "unrealistic",
}
_ABSENT_FIELD = re.compile(r"^(?:present|detected|found|exists?|observed|visible|is_present)$",
                           re.I)
_VERBISH = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|looks?|seems?|appears?|do|does|did|can|could|"
    r"will|would|there|it's|i|we|you|he|she|they|this|that)\b|n't\b", re.I)
_AFFIRM = re.compile(r"^(?:yes|true|present|detected|observed|visible|found|confirmed|x|\u2713|"
                     r"\u2714)\W*$", re.I)


@dataclass(frozen=True)
class Sentence:
    topic: str
    text: str
    item: int
    frame: str = ""  # "deny" / "generic" under a heading that frames its items so


def _is_topic(topic: str, separator: str) -> bool:
    """A label, not a clause: short, and without a verb ("The pupils are different shapes - ..."
    is a sentence with a dash, "Lighting - ..." is a labelled item)."""
    words = topic.split()
    limit = TOPIC_WORDS if ":" in separator else 3
    return len(words) <= limit and not _VERBISH.search(topic)


@lru_cache(maxsize=None)
def _typos(version: Version) -> tuple[re.Pattern, dict[str, str]]:
    typos = {**_TYPOS, **_TYPOS_ROUND2} if version.has("round2_typos") else _TYPOS
    return re.compile(r"\b" + trie_regex(typos) + r"\b", re.I), typos


def normalize(text: str, version: Version) -> str:
    """Unicode quotes/dashes to ASCII, common misspellings of artifact words corrected, JSON
    answers flattened to ``key: value`` lines."""
    pattern, typos = _typos(version)
    text = pattern.sub(lambda m: typos[m.group(0).lower()], text.translate(_QUOTES))
    flat = _flatten_json(text)
    return flat if flat is not None else text


def _flatten_json(text: str) -> str | None:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").removeprefix("json").strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    lines: list[str] = []

    def walk(value, key: str = "") -> None:
        if isinstance(value, dict):
            if any(_ABSENT_FIELD.match(str(k)) and v in (False, "false", "no", 0)
                   for k, v in value.items()):
                lines.append(f"{key}: no" if key else "no")  # {"present": false, "location": ..}
                return
            for k, v in value.items():
                label = str(k).replace("_", " ")
                # {"blurriness": {"present": true}} -> "blurriness present: yes"
                walk(v, f"{key} {label}" if key and not _JUNK_TOPIC.match(key) else label)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        else:
            if isinstance(value, bool):
                value = "yes" if value else "no"
            value = str(value).replace("_", " ") if value is not None else "none"
            lines.append(f"{key}: {value}" if key else value)

    walk(data)
    return "\n".join(lines)


def _table_row(line: str) -> str:
    """A markdown table row as "first cell: other cells" (the first cell labels the row)."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    cells = [c for c in cells if c]
    if len(cells) >= 2:
        return f"{cells[0]}: {'; '.join(cells[1:])}"
    return "; ".join(cells)


def split(text: str, version: Version) -> list[Sentence]:
    """The response's sentences, each with its item's topic and its section's frame (module
    docstring), as `version` reads them."""
    deny_topics = version.has("deny_topic_labels")
    out: list[Sentence] = []
    item = -1
    frame = ""
    for raw in normalize(text, version).splitlines():
        if not raw.strip():
            frame = ""  # a blank line ends a framed section
            continue
        if _TABLE_RULE.match(raw):
            continue
        bulleted = bool(_BULLET.match(raw)) or raw.lstrip().startswith("|")
        line = _table_row(raw) if raw.lstrip().startswith("|") else raw
        line = _MARKUP.sub("", _BULLET.sub("", line)).strip()
        if not line:
            continue
        heading = _heading(raw, line)
        if heading is not None:
            frame = _frame_of(heading)
            if frame:
                continue  # "Elements that appear consistent:" claims nothing itself
        elif frame and not bulleted and len(line.split()) > 12:
            frame = ""  # back to prose
        item += 1
        topic = ""
        m = _TOPIC.match(line)
        if m and _is_topic(m["topic"], m.group(0)[m.end("topic"):m.start("body")]):
            topic = m["topic"].strip(" ()")
            if _JUNK_TOPIC.match(topic):
                topic = ""
            line = m["body"].strip()
            if not topic and not line:
                continue
            if deny_topics and _DENY_TOPIC.search(topic):
                # "Not present: clipping, clicks", "Hiss (no issue): none audible": the label
                # frames its own item as absent or fine
                out.extend(Sentence("", s.strip(), item, "deny")
                           for s in _SENTENCE.split(line) if s.strip())
                continue
            if not line or _AFFIRM.match(line):
                # a heading on its own line ("Noise", "Skin Tone Mismatch") or a field that only
                # affirms its label ("lighting inconsistency: yes")
                line, topic = topic, ""
        line = _ELLIPSIS.sub(" ", _ABBREV.sub(r"\1", line))
        if deny_topics and not topic and len(line.split()) <= 6 and \
                _DENY_TOPIC.search(line.rstrip(".:")):
            out.append(Sentence("", line, item, "deny"))  # a label: "Hiss (no issue)"
            continue
        for sent in _SENTENCE.split(line):
            sent = sent.strip()
            if sent:
                out.append(Sentence(topic, sent, item, frame))
    return out


def _heading(raw: str, line: str) -> str | None:
    """The text of a section heading ("### Consistent elements", "**Not observed:**",
    "Checked and fine:"), or None for an ordinary line."""
    stripped = raw.strip()
    if stripped.startswith("#"):
        return line.rstrip(":")
    if line.endswith(":") and len(line.split()) <= 8:
        return line.rstrip(":")
    if stripped.startswith("**") and stripped.rstrip(":").endswith("**") and \
            len(line.split()) <= 8:
        return line.rstrip(":")
    return None


def _frame_of(heading: str) -> str:
    """"deny" for a heading that frames its items as absent or fine, "generic" for one that
    frames them as things to check; "" otherwise (findings, a topic)."""
    if _MIXED.search(heading):
        return ""
    if _GENERIC_HEADING.search(heading):
        return "generic"
    if _DENY_HEADING.search(heading):
        return "deny"
    return ""


_MIXED = re.compile(r"\b(?:but|and\s+what|versus|vs\.?|doesn't|don't|not\s+all|issues?\s+found|"
                    r"problems?\s+found|suspicious|anomal\w*\s+(?:found|detected))\b", re.I)
_DENY_HEADING = re.compile(
    r"\b(?:not\s+(?:present|observed|found|detected|seen|an\s+issue)|absent|no\s+(?:issues?|"
    r"problems?|anomal\w*|artifacts?|artefacts?|signs?|concerns?)|none\s+(?:found|detected|"
    r"observed)|consistent|natural|authentic|genuine|realistic|plausible|correct|normal|clean|"
    r"fine|okay|ok|passed|checked\s+and\s+(?:fine|ok|clean)|looks?\s+(?:real|fine|right|good)|"
    r"(?:did\s+not|didn't)\s+(?:find|see|notice|detect|observe)|supporting\s+authenticity|"
    r"signs\s+of\s+authenticity|against\s+manipulation|strengths|reassuring)\b", re.I)
_DENY_TOPIC = re.compile(
    r"^(?:not\s+(?:present|observed|found|detected|seen|heard)|absent|none(?:\s+found)?|"
    r"what'?s\s+fine|checked\s+and\s+fine|no\s+issues?(?:\s+found)?)$|"
    r"\((?:no\s+issues?|fine|ok|okay|none|not\s+(?:an?\s+)?issue|not\s+present|absent)\)?$",
    re.I)
_GENERIC_HEADING = re.compile(
    r"\b(?:typical|common|usual|general|possible|potential|what\s+to\s+look\s+for|things\s+to\s+"
    r"check|checklist|to\s+check|would\s+look\s+for|cannot\s+(?:assess|evaluate|check|judge)|"
    r"could\s+not\s+(?:assess|check|evaluate)|limitations?|not\s+assessable|unable\s+to|"
    r"out\s+of\s+scope|methodology|how\s+i\s+checked)\b", re.I)
