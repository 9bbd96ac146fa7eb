"""`rules@3` additions to the v2 lexicon (issue 18, round 2): more of the indirect ways detectors
describe an artifact, written from TriDF appendix C's definitions and generalised from the error
analysis of the evaluation set's ``dev`` part only (never its ``heldout`` part).

Each entry adds rules to an artifact of `lexicon_signal`, `lexicon_scene` or `lexicon_human`
(`engine.LEXICON` appends them, so an artifact's exclusions and context still apply). Rule kinds:
`patterns.py`.
"""
from __future__ import annotations

from leaderboard.judges.mapping.patterns import A, C, P, Rule, S

_NOT = r"(?:don't|do\s+not|doesn't|does\s+not|didn't|did\s+not|never)"

EXTRA: dict[str, tuple[Rule, ...]] = {
    # something present at one time and different or gone at another
    "temporal_artifacts": (
        P(r"\bone\s+moment\b[^.!?;]*\bthe\s+next\b|"
          r"\bat\s+the\s+start\b[^.!?;]*\b(?:at|by)\s+(?:the\s+end|\d{1,2}:\d\d)\b|"
          r"\b(?:there|visible|present)\s+at\s+\d{1,2}:\d\d,?\s+(?:gone|missing|absent)\b|"
          r"\bchanges?\s+(?:its\s+)?(?:size|shape|length|colou?r)\s+(?:as|while|when|during)\b|"
          r"\bnever\s+(?:comes?|reappears?)\s+(?:out\s+)?(?:on\s+)?the\s+other\s+side\b|"
          r"\b(?:is|becomes|turns)\s+whole\s+again\b"),
    ),
    "unnatural_movement": (
        A(r"\bwithout\s+(?:any\s+)?(?:arm\s+swing|bending\s+(?:his|her|their|the|its)\s+"
          r"(?:knees?|legs?|elbows?|arms?))\b|\bglid(?:es|ing)\s+as\s+if\b|\bas\s+if\s+on\s+a\s+"
          r"(?:conveyor|rail|track|dolly|trolley)\b|\bswings?\s+like\s+(?:a\s+)?pendulums?\b|"
          r"\bwheels?\s+" + _NOT + r"\s+(?:\w+\s+)?(?:turn|spin|rotate)\b|"
          r"\bno\s+connection\s+to\s+(?:his|her|their|the)\s+(?:steps|stride|walk\w*)\b|"
          r"\b(?:lowers|rises|floats)\s+into\s+the\s+(?:chair|seat|sofa|couch)\b"),
    ),
    "audio_visual_desync": (
        P(r"\blip[- ]?sync\w*\s+(?:is\s+)?(?:of|off)\s+by\b|"
          r"\b(?:lips|mouth)\s+" + _NOT + r"\s+move\s+(?:at\s+all\s+)?(?:during|for|while|on)\s+"
          r"(?:\w+\s+){0,3}?(?:words?|syllables?|sentences?|phrases?)\b|"
          r"\b(?:closes|shuts)\s+(?:firmly\s+)?on\s+(?:the\s+)?vowels\b|"
          r"\b(?:mouth|lips)\s+that\s+moves?\b[^.!?]*\b(?:while|but)\b[^.!?]*\b(?:mouth|lips)\s+"
          r"closed\b"),
    ),
    "reflection_inconsistency": (
        A(r"\b(?:mirror(?:s|ed)?|reflect(?:s|ed)?)\s+(?:\w+\s+){1,6}?but\s+not\s+(?:her|him|"
          r"them|it|the\s+\w+)\b|\breflections?\s+(?:\w+\s+){0,3}(?:walking|moving|a\s+step)\s+"
          r"ahead\s+of\b|\b(?:mirror(?:s|ed)?|reflect(?:s|ed)?)\s+(?:\w+\s+){1,8}?(?:but|yet)\s+"
          r"(?:there's\s+no|there\s+is\s+no)\b|"
          r"\b(?:shows?|reflects?)\s+(?:a\s+)?(?:\w+\s+)?(?:person|figure|model|man|"
          r"woman)\s+who\s+(?:is\s+not|isn't)\s+(?:in|there)\b"),
    ),
    "object_integrity_flaws": (
        A(r"\b(?:has|have|with)\s+no\s+(?:cutting\s+)?(?:tip|bottom|base|chain|edge|spout|sole|"
          r"nib|tines|bristles|pegs?)\b|\bends\s+in\s+(?:a\s+)?(?:flat\s+)?stump\b|"
          r"\b(?:loses|lost)\s+(?:its|his|her|their)\s+(?:handle|lid|strap|wheel|leg|tip|cap|"
          r"spout|arm|lens)\b|\bfades?\s+out\s+before\b|\bbecomes?\s+one\s+piece\s+with\b|"
          r"\b(?:two|three)\s+spouts\b|\bbut\s+(?:only\s+)?(?:one|two|three|four|five)\s+"
          r"(?:tuning\s+)?(?:pegs|legs|wheels|handles|strings|keys)\b|\bstops?\s+halfway\b"),
    ),
    "anatomical_inconsistency": (
        P(r"\b(?:double|second|extra)\s+row\s+(?:of\s+teeth|on\s+top|on\s+the\s+bottom)\b|"
          r"\btwo\s+sets\s+of\s+(?:\w+\s+)?(?:teeth|incisors)\b|\bteeth\s+(?:\w+\s+){0,3}"
          r"(?:single|one|continuous)\s+(?:\w+\s+)?(?:band|strip|block)\b|\bno\s+gaps\s+between\s+"
          r"(?:the\s+)?(?:individual\s+)?teeth\b|\b(?:knee|elbow|wrist)\s+bends?\s+(?:\w+\s+)?"
          r"backwards?\b|\bextra\s+joint\b|\bbends\s+in\s+two\s+places\b"),
    ),
    "unrealistic_background": (
        P(r"\b(?:same|identical)\s+(?:\w+\s+){0,3}(?:people|persons?|faces|cars?|bus|trees?|"
          r"buildings?|windows?)\s+(?:\w+\s+){0,3}(?:repeated|again)\b|\b(?:city|street|crowd|"
          r"background|scene)\s+(?:\w+\s+){0,3}loops\b|\bhave\s+no\s+faces\b|\b(?:spectators|"
          r"audience|crowd|people)\s+(?:\w+\s+){0,6}(?:blobs|ovals|smudges)\b"),
    ),
    "spatial_incoherence": (
        P(r"\bcontinues?\s+(?:straight\s+)?into\s+(?:his|her|their|the)\s+(?:\w+\s+)?(?:arm|"
          r"forearm|hand|leg|body|chest|head|wall|table|floor)\b|\bwithout\s+being\s+(?:attached|"
          r"connected|fixed)\b|\bsinks?\s+into\s+the\s+(?:asphalt|floor|ground|road|table|sand|"
          r"pavement|wall|sofa|couch|water)\b|\bnever\s+(?:quite\s+)?meets?\s+the\s+(?:floor|"
          r"ground|runway|table|road|surface|board|step|stage)\b"),
    ),
    "blending_artifacts": (
        P(r"\b(?:thin|faint|visible|sharp|hard)\s+(?:line|edge|seam|boundary)\s+where\s+the\s+"
          r"(?:face|mask|skin|neck|forehead|chin)\b|\bfaint\s+(?:\w+\s+)?(?:boundary|halo)\b|"
          r"\bwhere\s+the\s+(?:edited|pasted|swapped|inserted|generated|replaced)\s+(?:region|"
          r"area|face|patch|part)\s+(?:ends|stops|begins|starts|meets)\b"),
    ),
    "unnatural_expressions": (
        P(r"\b(?:wears?|wearing|has|have|with)\s+the\s+(?:exact\s+)?same\s+(?:\w+\s+)?(?:smile|"
          r"expression|grin)\b|\b(?:smile|grin|expression)\s+(?:looks|is|seems)\s+(?:\w+\s+)?"
          r"(?:stuck|glued)\s+on\b"),
        C(r"\bfaces?\b|\bexpressions?\b|\bbrows?\b|\beyebrows\b",
          r"\bstays?\s+(?:perfectly\s+|completely\s+|totally\s+)?calm\b|\bas\s+if\s+nothing\s+"
          r"(?:had\s+)?happened\b|\bdoesn't\s+(?:flinch|react)\b|\bnever\s+(?:flinches|reacts)\b"),
    ),
    "lighting_inconsistency": (
        C(r"\blight\w*\b|\blit\b",
          r"\b" + _NOT + r"\s+change\s+when\b|\bstays?\s+the\s+same\s+when\b"),
        # light from one side on the subject, its visible source on the other
        S(r"\b(?:light|lit)\w*\b[^.!?;]{0,40}\bfrom\s+(?:the\s+|her\s+|his\s+)?(?:left|right)\b",
          r"\b(?:while|whereas|but|yet)\b[^.!?;]*\b(?:lamp|window|sun|fire|bonfire|candle|"
          r"spotlight|source|screen)\w*\b[^.!?;]*\b(?:on|to|at)\s+(?:the\s+|her\s+|his\s+|"
          r"their\s+)?(?:left|right)\b",
          unless=r"\bconsistent\w*|\bmatch\w*|\bagree\w*|\bcorrect\w*|\bas\s+expected\b"),
    ),
    "unnatural_gaze": (
        A(r"\bnever\s+(?:once\s+)?looks?\s+(?:at|toward|towards)\s+(?:his|her|their|the)\s+"
          r"(?:co-?hosts?|interviewer|partner|interlocutor|guest|host)\b|\beyes\s+follow\s+you\b"),
    ),
    "unrecognizable_text": (
        P(r"\b(?:in|with)\s+an?\s+(?:unknown|non-?existent|made-?up|invented)\s+(?:script|"
          r"alphabet|language|writing\s+system)\b"),
    ),
    "banding": (
        P(r"\bcontour-?like\s+(?:steps|bands|lines|rings)\b"),
    ),
    "shadow_inconsistency": (
        A(r"\bcasts?\s+none\b|\bshadows?\s+(?:\w+\s+)?(?:point|fall|go)\s+in\s+two\s+"
          r"(?:different\s+)?directions\b"),
    ),
    "unnatural_prosody": (
        P(r"\b(?:sounds?|sounding)\s+like\s+(?:siri|alexa|a\s+gps|a\s+sat-?nav|an?\s+automated\s+"
          r"(?:announcement|phone\s+system|voice)|an\s+answering\s+machine)\b"),
    ),
    "blurriness": (
        P(r"\b(?:goes|turns|becomes|go|turn|become)\s+soft\b|\bsoft\s+(?:footage|image|picture|"
          r"video|frame)\b|\bloses?\s+(?:fine\s+)?detail\b"),
    ),
}
