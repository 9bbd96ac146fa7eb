"""v2 lexicon, semantic artifacts of the scene (TriDF appendix C, table 6: physics and
environment, objects and language): reflections, shadows, contact, background, object integrity,
text.

They are mostly described, not named: "the string doesn't reach her hand" (spatial), "the chain
is only half there" (object integrity), "the mountains repeat in a pattern" (background). The
rules pair a subject (a shadow, an object, the background) with what is wrong with it. Rule
kinds: `patterns.py`.
"""
from __future__ import annotations

from leaderboard.judges.mapping.patterns import BAD, NEG, OBJECT, A, C, P, S, art
from leaderboard.judges.mapping.versions import since

REFLECTION_INCONSISTENCY = art(
    "reflection_inconsistency",
    C(r"\breflect\w*|\bmirror(?:s|ed)?\b(?!\s+cop)|\bcatch\s?lights?\b|\bspecular\s+\w+",
      BAD + since(3, r"|\bnowhere\b|\bstays?\s+still\b|\bnever\s+changes?\b|"
      r"\b(?:moves?|lags?)\s+(?:a\s+\w+(?:-\w+)?\s+)?behind\b|\bno\s+\w+\s+anywhere\b|"
      r"\bdoesn't\s+exist\b|\bexists?\s+nowhere\b|\bisn't\s+there\b|\bdon't\s+agree\b") +
      r"|\bdiffer\w*|\basymmetr\w*|\bshows?\s+(?:a|an|the|two)\s+(?:different|original|"
      r"other|another|person|bright|blue|road|shelf|scene)|\bother\s+way\b|\blags?\b|"
      r"\bshifted\b|\binstead\s+of\b|\brather\s+than\b|\bwhile\b|\bwhereas\b|"
      r"\bnot\s+in\s+the\s+room\b|\bisn't\s+(?:in|there|present)\b|\bmissing\b|\bnothing\s+in\s+the\s+other\b|\bdaytime\b|"
      r"\bblue\s+screen\b|" + NEG + r"(?:show|reflect|match|follow|move|include|contain)\w*"),
    A(since(3, r"\breflections?\s+(?:\w+\s+){0,3}(?:vanishes|disappears|is\s+gone)\b|") +
      r"\b(?:no|missing|without|lacks?\s+(?:a|any))\s+(?:\w+\s+)?reflections?\b(?!\s+(?:issues?|"
      r"problems?|inconsisten\w*|errors?|anomal\w*))|\breflections?\s+(?:\w+\s+){0,3}(?:is|are)\s+"
      r"(?:missing|absent|gone)\b|" + NEG + r"reflect\b"),
    exclude=r"\breflects?\s+(?:on|upon)\b|\breflective\s+(?:moments?|tone)\b|"
            r"\breflected\s+in\s+(?:the\s+)?(?:voice|tone)\b")

SHADOW_INCONSISTENCY = art(
    "shadow_inconsistency",
    C(r"\bshadows?\b|\bshading\s+of\s+the\s+body\b",
      BAD + r"|\bmissing\b|\b(?:different|wrong|opposite|conflicting)\s+directions?\b|"
      r"\bdirection\s+(?:is\s+)?(?:wrong|off|inconsistent)|\bdiffer\w*|\bopposite\b|\btoward\s+the\s+sun\b|\bbackwards?\b|"
      r"\blarger\b|\bsmaller\b|\btoo\s+(?:sharp|soft|dark|light|long|short)\b|\bdifferent\s+"
      r"pose\b|\bstays?\s+put\b|\bout\s+of\s+sync\b|\balways\s+points?\b|\bpoints?\s+(?:the\s+)?"
      r"(?:wrong|other|opposite)|\bfalls?\s+(?:the\s+)?(?:wrong|other|opposite)\b|"
      r"\bin\s+some\s+frames\s+and\s+away\b|" + NEG + r"(?:rotate|move|follow|match|fall)\w*"),
    A(r"\b(?:no|missing|without|lacks?|lacking)\s+(?:a\s+|any\s+)?(?:\w+\s+)?shadows?\b"
      r"(?!\s+(?:issues?|problems?|inconsisten\w*|errors?|anomal\w*|mismatch))|"
      r"\bcasts?\s+no\s+(?:\w+\s+)?shadows?\b|\bshadows?\s+(?:\w+\s+){0,3}(?:is|are)\s+"
      r"(?:missing|absent|gone)\b|\bshadowless\b|\b(?:gets?|has|with)\s+no\s+shade\b|"
      r"\bno\s+shadow\s+(?:under|beneath|below|on)\b|" + NEG + r"cast\s+(?:a\s+|any\s+)?shadow"),
    S(r"\bshadows?\b", r"\bshadows?\b[^.!?]*(?:\bwhile\b|\bwhereas\b|\bbut\b|\byet\b)[^.!?]*"
      r"\bshadows?\b"),
    exclude=r"\bcontact\s+shadow\b|\bshadows?\s+of\s+(?:the\s+)?(?:canopy|doubt)\b|"
            r"\bin\s+(?:the\s+)?shadows\b(?!\s+(?:point|fall|go))|\bheavier\s+in\s+the\s+shadows")

SPATIAL_INCOHERENCE = art(
    "spatial_incoherence",
    P(r"\bfloat(?:s|ing|ed)?\b|\bhover\w*|\bin\s+mid-?air\b|\bintersect\w*|\bpenetrat\w*|"
      r"\b(?:clip\w*|pass(?:es|ing|ed)?|go(?:es|ing)?|sink\w*|cuts?|comes?\s+out)\s+(?:right\s+|"
      r"straight\s+|partly\s+)?through\b|\bthrough\s+(?:the|her|his|their)\s+(?:back|body|wall|"
      r"table|floor|chair|arm|hand|handle|keys|leg)\b|\bspatial\w*\s+(?:incoheren|inconsisten|"
      r"error|relationship|layout|contact)\w*|\bcontact\s+(?:incoheren\w*|errors?|issues?)\b|"
      r"\bimpossible\s+(?:position\w*|placement|overlap\w*)|\bout\s+of\s+scale\b|"
      r"\bscale\s+(?:is\s+)?(?:off|inconsistent|wrong)|\bwithout\s+(?:falling|touching|"
      r"contact|holding|support)\b|\b(?:visible\s+)?gap\s+of\s+(?:a\s+few|several|\d)|"
      r"\bgap\s+between\s+(?:the|his|her|their)\s+(?:\w+\s+){0,2}(?:and|from)\b|\b(?:a\s+few|several)\s+"
      r"(?:millimet\w+|centimet\w+|inches|cm|mm)\s+(?:above|from|in\s+front|before)\b|"
      r"\b(?:slightly|just)\s+above\s+(?:the|its|her|his)\b|\bstops?\s+just\s+above\b|"
      r"\babove\s+the\s+(?:surface|mat|cushion|seat|floor|ground|table)\b|"
      r"\bleans?\s+(?:at|on)\b[^.]*\bwithout\b"),
    A(NEG + r"(?:touch\w*|contact|rest\w*\s+on|sit\w*\s+on|land\w*\s+on|reach\w*|press\w*\s+into|"
      r"close\w*\s+around|wrap\w*\s+around|connect\w*\s+to\s+the\s+(?:ground|floor)|make\s+contact|"
      r"sink\w*\s+into|hold\w*|grip\w*|grasp\w*|support\w*|lean\w*\s+on|stand\w*\s+on)\b|"
      r"\bno\s+(?:physical\s+)?contact\b|\black\s+of\s+contact\b|\b(?:aren't|isn't|not|never)\s+"
      r"(?:actually\s+)?on\s+(?:the|its|their|his|her)\b|\bfeet\s+(?:never|don't|do\s+not)\b|"
      r"\bwithout\s+(?:any\s+)?contact\b"),
    flaw="",
    exclude=r"\bfloaty\b|\bfloating\s+(?:feeling|camera)\b|\bend(?:s|ing)?\s+in\s+mid-?air\b|"
            r"\bcontact\s+points?\s+visible\b|\bhovers?\s+over\s+(?:the\s+)?(?:button|icon)|"
            r"\bthrough\s+the\s+(?:window|glass)\s+(?:is|shows)|\bpasses?\s+in\s+front\b|"
            r"\b(?:drawn|is)\s+on\s+top\b|\bstrands\s+dissolve\b|"
            r"\b(?:looking|look|looks|gaze|stare|eyes?)\s+(?:\w+\s+)?(?:through|past)\b|"
            r"\b(?:touch|reach)\w*\s+the\s+eyes\b")

_BG = (r"\bbackgrounds?\b|\bbackdrops?\b|\bsurroundings\b|\bscenery\b|\benvironment\b|"
       r"\bstreets?\b|\broads?\b|\bbuildings\b|\bskyline\b|\bcityscape\b|\blandscape\b|"
       r"\bhorizon\b|\bcrowd\b|\bstands\b|\btrees\b|\bmountains?\b|\bvillage\b|\blibrary\b|"
       r"\bshelves\b|\bstadium\b|\bpark\b|\bforest\b|\bscene\s+behind\b|\bwalls?\s+behind\b|"
       r"\bsky\b|\blake\b|\bstaircase\b|\bsteps\b|\broom\s+behind\b|\bperspective\b|"
       r"\bvanishing\s+points?\b")
UNREALISTIC_BACKGROUND = art(
    "unrealistic_background",
    C(_BG, BAD + r"|\bflat\b|\bwarp\w*|\bmelt\w*|\bnonsensical\b|\bgarbled\b|\bsmeared\s+shapes\b|"
      r"\blacks?\s+(?:\w+\s+)?(?:detail|depth|structure|perspective)|\black\s+detail\b|"
      r"\bgeneric\b|\bpainted\b|\bpainterly\b|\brepetitive\b|\brepeat\w*|\bchaotic\b|"
      r"\bincoherent\b|\bjumbled\b|\bincomplete\b|\billogical\b|\bcollaps\w*|\bfake\b|"
      r"\bmorph\w*|\bshift\s+shape\b|\bvague\s+shapes\b|\bno\s+detail\b|\bblurred\s+stripes\b|"
      r"\bfades?\b|\btwists?\b|\bbends?\b|\bnowhere\b|\bmerge\s+into\b|\bcopies\b|\bcopied\b|"
      r"\bsame\s+(?:house|tree|face|building|peak|person)\b|\bdistorted\b|\bunrealistic\w*|"
      r"\bimpossib\w*|\bnot\s+a\s+real\b|\bno\s+identifiable\b"),
    A(r"\b(?:no|without|lacks?|lacking|lack\s+of|missing)\s+(?:any\s+|a\s+|consistent\s+|"
      r"proper\s+|real\s+|visible\s+)?(?:sense\s+of\s+)?(?:depth|perspective|parallax|"
      r"depth\s+cues|vanishing\s+point|far\s+shore)\b"),
    P(r"\brepeat(?:s|ing|ed)?\s+(?:in\s+a\s+)?pattern\b|\brepeating\s+pattern\b|\bcopied\s+"
      r"(?:\w+\s+)?times\b|\bmirrored\s+copies\b|\btwo\s+vanishing\s+points\b|\bleads\s+nowhere\b|"
      r"\bpainted\s+backdrop\b|\bgreen[- ]?screen\b|\b(?:twists|bends|curves|warps)\s+"
      r"(?:impossibly|unrealistically|unnaturally)\b|\bsmeared\s+shapes\b|\bvague\s+shapes\b|"
      r"\bstill\s+image\s+pasted\b|\bdoesn't\s+move\s+when\s+the\s+camera\s+moves\b|"
      r"\bhorizon\s+(?:just\s+)?fades\b|\blike\s+a\s+(?:smeared\s+)?painting\b|"
      r"\bstage\s+set\b|\bnonsensical\s+(?:architecture|buildings|scenery)\b"),
    quality=False,
    exclude=r"\bbackground\s+(?:noise|hiss|hum|music|sound|audio|track)\b|\bstreet\s+signs?\b|"
            r"\bcolou?r\w*|\bsaturat\w*|\bhue\b|\btint\b|\bband\w*|\bgradient\b|\bnoise\b|"
            r"\bgrain\w*|\bblock\w*|\bpixel\w*|\bcompression\b|"
            r"\breflect\w*|\bmirror\w*|\bshadow\w*|"
            r"\bbackground\s+(?:is|stays)\s+(?:sharp|clean|stable)\b|\bshadows?\s+of\s+trees\b|"
            r"\bout-of-focus\s+background\b|\bbackground\s+luminance\b|\bin\s+the\s+background\b"
            r"(?=[^.]*\b(?:unreadable|illegible|garbled|text|signs?)\b)(?![^.]*\b(?:twist|bend))")

_OBJ_QUAL = (
    r"\bincomplete\b|\bbroken\b|\bbreaks?\s+off\b|\bdeform\w*|\bdistort\w*|\bmelt\w*|\bmerg\w*|"
    r"\bfused\b|\bmalform\w*|\bmisshap\w*|\bwarp\w*|\bmissing\b|\bhalf[- ](?:formed|missing|"
    r"there)\b|\bonly\s+half\b|\bnonsensical\b|\basymmetr\w*|\bmismatch\w*|\bdo(?:es)?\s*(?:not|"
    r"n't)\s+match\b|\binternally\s+inconsistent\b|\bimpossible\b|\billogical\b|\btwisted\b|"
    r"\btruncated\b|\bdisconnected\b|\bnot\s+connected\b|\baren't\s+connected\b|\bblob\w*|"
    r"\bmangled\b|\bunnatural\s+(?:shape|structure|geometry)\b|\bdissolv\w*|"
    r"\b(?:blends?|fades?|bleeds?|sinks?)\s+into\s+(?:the|her|his|its)\b|" + NEG +
    r"(?:connect|attach|cross|close|meet|line\s+up|buckle|exist|continue)\w*|"
    r"\bend(?:s|ing)?\s+(?:abruptly|in\s+mid-?air|before|short|in\s+the\s+middle)\b|"
    r"\bcut\s+off\b|\bstops?\s+(?:short|abruptly|under|before|mid)\b|\bchanges?\s+(?:its\s+)?"
    r"(?:shape|from)\b|\bdifferent\s+(?:lens\s+)?shapes?\b|\btwo\s+different\b|\bonly\s+one\b|"
    r"\bwrong\s+(?:side|number|place)\b|\bleads\s+nowhere\b|\bgap\s+in\s+it\b|\bhas\s+a\s+gap\b|"
    r"\bdifferent\s+(?:\w+\s+)?(?:design|style|model|type|shape|size|colou?r)s?\s+(?:from|than)\b|"
    r"\bonly\s+(?:one|two|three|half)\s+(?:\w+\s+)?(?:wheels?|legs?|arms?|doors?|lens(?:es)?|"
    r"handles?|straps?|blades?|pedals?|strings?|buttons?|sleeves?|earrings?|shoes?)\b|"
    r"\b(?:disappears?|reappears?|vanish\w*)\b|\bextra\b|\btoo\s+many\b|\binstead\s+of\s+\d+\b|"
    r"\bnever\s+reappears\b|\bwithout\s+connecting\b|\bwith\s+\w+\s+panels\b|"
    r"\bwithout\s+hands\b|\bno\s+hands\b")
OBJECT_INTEGRITY_FLAWS = art(
    "object_integrity_flaws",
    C(rf"\b(?:{OBJECT})\b", _OBJ_QUAL),
    P(r"\bobject\s+integrity\b|\bobject\s+flaws?\b|\bmelt(?:ed|ing)\s+(?:objects?|shapes?|"
      r"structures?)\b|\bmismatched\s+(?:earrings?|eyeglasses|glasses|shoes|socks)\b|"
      r"\bimpossible\s+(?:geometry|structures?|objects?)\b|\bnonsensical\s+(?:objects?|shapes?|"
      r"structures?)\b|\b(?:objects?|items?)\s+(?:are\s+)?(?:broken|incomplete|deformed|"
      r"malformed|melted|fused)\b"),
    A(r"\bmissing\s+(?:its|his|her|the|a|one|half\s+(?:its|the))\s+(?:\w+\s+)?(?:knot|handle|"
      r"hinge|lens|arm|leg|wheel|spokes|buttons?|rim|strap|lid|pedals?|trackpad|keys|screen|"
      r"chain|blade|hands|numbers|temple|backrest|armrest|part|piece)s?\b|"
      r"\b(?:has|have|with)\s+no\s+(?:\w+\s+)?(?:hands|spokes|knots?|handles?|hinges?|buttons|"
      r"lens(?:es)?|straps?|lids?|pedals|wheels|legs|numbers|numerals|laces|strings)\b|\b(?:knot|handle|hinge|lens|"
      r"trackpad|buckle|strap|lid|rim|spokes|wheel|pedals?)\s+(?:\w+\s+)?(?:is|are)\s+"
      r"(?:missing|absent|gone)\b|\b(?:handle|lens|strap|lid|buckle)\s+(?:briefly\s+)?"
      r"disappears\b"),
    exclude=r"\breflect\w*|\bmirror\w*|\bshadow\w*|\b(?:text|letters?|lettering|logo|numbers|"
            r"characters|writing|title|words|numerals|digits|font|brand\s+name|caption|glyphs?)\b|"
            r"\bfingers\s+(?:are\s+|look\s+)?fused\b|\barm\s+merges\b|"
            r"\b(?:hand|hands)\s+(?:goes|passes|pass)\s+through\b|\bmerge\s+into\s+the\s+wall\b|"
            r"\bpages?\s+(?:\d|of)\b|\bfrom\s+one\s+frame\b(?![^.]*(?:shape|missing|broken))")

_TEXT = (r"\btexts?\b|\btextual\b|\bletter(?:s|ing)\b|\bwriting\b|\bwritten\b|\bcharacters\b|"
         r"\bwords\s+(?:on|printed|written|in\s+the\s+(?:sign|poster|image|picture))\b|\bsignage\b|\b(?:street|road|shop|store)\s+signs?\b|\bsignboards?\b|"
         r"\bsigns\b|\blabels?\b|\blogos?\b|\btypography\b|\bfonts?\b|\bcaptions?\b|"
         r"\bsubtitles?\b|\bdigits\b|\bnumbers\b|\bnumerals\b|\bheadlines?\b|\btitle\b|"
         r"\bname\s+tag\b|\bprice\s+tags\b|\bticker\b|\blicen[cs]e\s+plate\b|\bjersey\s+number\b|"
         r"\bbrand\s+name\b|\bingredient\s+list\b|\bglyph\w*|\bprint(?:ed)?\b|\bspelling\b|"
         r"\bbillboard\s+text\b|\btimetable\b|\bnewspaper\b|\bmenu\b|\bscript\b|\bplate\b")
UNRECOGNIZABLE_TEXT = art(
    "unrecognizable_text",
    C(_TEXT,
      r"\bgarbl\w*|\bgibberish\b|\billegib\w*|\bunread\w*|\bnonsens\w*|\bmeaningless\b|"
      r"\bdistort\w*|\bbroken\b|\bmalform\w*|\bjumbl\w*|\bincomplete\b|\bscrambl\w*|"
      r"\bmisspell\w*|\bwarp\w*|\bmelt\w*|\bsmear\w*|\bunrecogni[sz]\w*|\bnot\s+(?:\w+\s+)?"
      r"(?:legible|readable|real|recogni[sz]able)\b|\bmade[- ]up\b|\binvented\b|\bsquiggl\w*|"
      r"\bscribbl\w*|\bdeform\w*|\bblobs?\b|\bpseudo-?\w+|\brun\s+together\b|\bpartially\s+"
      r"missing\b|\bdoesn't\s+spell\b|\bdon't\s+spell\b|\bnot\s+real\s+words\b|\bresemble\b|"
      r"\bshapes\s+that\s+look\s+like\b|\brandom\s+glyphs\b|\bglyph-like\b|\bfrom\s+(?:three|"
      r"two|different)\s+alphabets\b|\bbeyond\s+reading\b|\bnothing\s+can\s+(?:actually\s+)?be\s+"
      r"read\b|\bcan't\s+be\s+read\b|\bcannot\s+be\s+read\b|\bswirl\b|\bnonsense\b|"
      r"\bwrong\s+letters\b|\bmirrored\b|\bchanges?\s+(?:its\s+)?(?:logo\s+)?(?:text|letters|"
      r"lettering)\b|\bflickers?\s+between\b|\brearrange\b|\bletters\s+(?:are\s+)?(?:broken|"
      r"warped|blobs|missing)"),
    P(r"\bgibberish\b|\billegible\b|\bunreadable\b|\bpseudo-?(?:text|letters|script|words|"
      r"characters)\b|\bnonsense\s+(?:text|letters|words|characters)\b|\bgarbled\s+(?:text|"
      r"letters|characters|writing|words|lettering)\b|\bsquiggles\b|\bnot\s+real\s+words\b|"
      r"\b(?:text|letters|lettering|logo|writing|words|title|caption|label)\s+(?:\w+\s+)?"
      r"(?:changes?|rearranges?|morphs?|shifts?)\s+(?:between|from|across|over|as)\b|"
      r"\bchanges?\s+(?:its\s+)?(?:\w+\s+)?(?:text|letters|lettering|wording)\s+(?:between|"
      r"from|across)\b"),
    A(since(3, r"\b(?:no|not|never|without)\s+(?:\w+\s+){0,3}?(?:actual|real|readable|"
      r"legible|recogni[sz]able)\s+(?:words?|letters?|digits?|characters?|text|writing)\b|"
      r"\b(?:resolves?|resolving|turns?|turning)\s+into\s+(?:actual\s+|real\s+)?(?:words|letters|"
      r"text|digits)\b|\b(?:shapes|forms|symbols|marks|squiggles|strokes|glyphs|numbers|"
      r"letters)\W?\s+(?:that\s+|which\s+)?"
      r"(?:aren't|are\s+not|were\s+not|weren't)\s+(?:real\s+|actual\s+)?(?:letters|digits|"
      r"numbers|characters|words)\b|\b(?:letter|word|character|text)-?like\s+(?:forms|shapes|"
      r"marks|symbols|squiggles|strokes)\b|\bfake\s+(?:text|letters|writing|lettering|script)\b|"
      r"\bnone\s+of\s+(?:it|the\s+\w+)\s+(?:can\s+be|is|are)\s+(?:read|readable|legible)\b|") +
      r"\bno\s+(?:legible|readable|recogni[sz]able|real)\s+(?:\w+\s+)?(?:text|letters|words|"
      r"numerals|numbers|digits|characters|writing)\b|\bnot\s+(?:one|a\s+single)\s+(?:word|"
      r"letter|character)\s+(?:is\s+|can\s+be\s+)?(?:legible|readable|read)\b|"
      r"\bdoesn't\s+spell\s+anything\b"),
    exclude=r"\btext-to-speech\b|\b(?:spoken|pronounc\w*)\b",
    context=None)

SCENE = {a.key: a for a in (
    REFLECTION_INCONSISTENCY, SHADOW_INCONSISTENCY, SPATIAL_INCOHERENCE,
    UNREALISTIC_BACKGROUND, OBJECT_INTEGRITY_FLAWS, UNRECOGNIZABLE_TEXT)}
