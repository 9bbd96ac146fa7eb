"""Keywords and synonyms per TriDF artifact, for the rule-based mapper (`rules@1`).

Each artifact has rules of two kinds:

- a *phrase*: one regular expression that on its own names the artifact ("blurry", "gibberish");
- a *pair*: a subject term and a qualifier that must both occur in the same negation scope
  (`text.is_negated`), in either order ("the shadows ... point the wrong way").

Phrases that carry their own negation ("the subject never blinks", "no contact with the ground")
are written so the match starts at the cue, which therefore does not deny the match. The lists
were written from the paper's definitions (TriDF, appendix C, tables 5 and 6) and the wording MLLMs
use in explanations; changing them changes what the judge maps, so bump `rules.VERSION`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_F = re.I


@dataclass(frozen=True)
class Rule:
    phrase: re.Pattern | None = None
    term: re.Pattern | None = None
    qualifier: re.Pattern | None = None


def P(pattern: str) -> Rule:
    return Rule(phrase=re.compile(pattern, _F))


def C(term: str, qualifier: str) -> Rule:
    return Rule(term=re.compile(term, _F), qualifier=re.compile(qualifier, _F))


_NOT = r"(?:do|does|did|is|are|was|were)\s*(?:not|n't|n\u2019t)\s+(?:\w+\s+)?"
_BAD = (r"\binconsisten\w*|\bmismatch\w*|" + _NOT + r"(?:match|align|agree|correspond|consistent|"
        r"natural|realistic|coherent|plausible)\w*|\bunnatural\w*|\bwrong\w*|\bincorrect\w*|"
        r"\bodd\w*|\bstrange\w*|\bweird\w*|\bmissing\b|\babsent\b|\black\w*|\bconflict\w*|"
        r"\bcontradict\w*|\bimplausib\w*|\bimpossib\w*|\bunrealistic\w*|\babnormal\w*|"
        r"\bartificial\w*|\boff\b|\bfake\b|\bsynthetic\b|\birregular\w*|\banomal\w*|"
        r"\bunexpected\b|\buneven\w*|\bflaw\w*|\berrors?\b|\bissues?\b|\bproblem\w*|"
        r"\bdiscrepan\w*|\bdistort\w*|\bsuspicious\w*")
_EXEMPT = r"(?!\s+(?:inconsisten|issues?|problems?|artifacts?|anomal|errors?|mismatch))"

LEXICON: dict[str, tuple[Rule, ...]] = {
    "blurriness": (
        P(r"\bblur\w*|\bout[- ]of[- ]focus\b|\bdefocus\w*|\bunsharp\b|\bsmudg\w*|\bsmear\w*|"
          r"\b(?:loss|lack|lacks|lacking|absence)\s+of\s+(?:sharpness|fine\s+details?)\b|"
          r"\bsoft(?:ened)?\s+(?:focus|edges|details?)\b|\bhazy\b|\bnot\s+sharp\b|"
          r"\bfuzzy\s+(?:edges?|details?|outlines?|image|face|features|hair)\b"),
    ),
    "blockiness": (
        P(r"\bblock(?:y|iness)\b|\bmacro-?blocks?\b|\bblock\s+artifacts?\b|\bpixelat\w*|"
          r"\bcompression\s+(?:artifacts?|blocks?)\b|\bjpe?g\s+artifacts?\b|\bsquare\s+patterns?\b|"
          r"\bcheckerboard\w*|\bgrid(?:-like)?\s+patterns?\b|\brectangular\s+patterns?\b"),
    ),
    "noise": (
        P(r"\bnois(?:e|y)\b|\bgrain\w*|\bspeckl\w*|\bsandy\b|\bsalt[- ]and[- ]pepper\b"),
    ),
    "banding": (
        P(r"\bband(?:ing|s|ed)\b|\bposteri[sz]\w*|\bcontour(?:ing|s)?\s+(?:lines|artifacts?|bands)|"
          r"\b(?:stepped|step-like|abrupt)\s+(?:gradients?|steps|transitions?)|"
          r"\bcolou?r\s+steps?\b|"
          r"\bgradients?\s+(?:steps|stepping|breaks)"),
    ),
    "color_inconsistency": (
        P(r"\b(?:over|hyper)-?saturat\w*|\bexcessive(?:ly)?\s+(?:saturat|vibran|vivid)\w*|"
          r"\bunnatural(?:ly)?\s+(?:saturat|vibran|vivid|colou?r|hue|skin\s+tone)\w*|\bcolou?r\s+"
          r"(?:cast|shift|bleed|mismatch|inconsisten|imbalance)\w*|\bgarish\b|\bwashed[- ]out\b"),
        C(r"\bcolou?r\w*|\bhues?\b|\bskin\s+tones?\b|\btint\w*|\bsaturation\b|\bvibranc\w*|"
          r"\bcomplexion\b", _BAD + r"|\boverly\b|\btoo\s+(?:vivid|bright|saturated|vibrant|warm|"
          r"cool)|\bvivid\b|\bcast\b|\bshift\w*|\bdiffer\w*|\bsaturated\b|\bintense\b"),
    ),
    "blending_artifacts": (
        P(r"(?<!seamlessly\s)(?<!smoothly\s)(?<!naturally\s)\bblend\w*"
          r"(?!\s+(?:seamlessly|smoothly|naturally|well|in\b))|\bseams?\b|\bseamlines?\b|"
          r"\bsplic\w*|\bpasted\b|\bcut[- ]and[- ]paste\w*|\bhalos?\b|\bstitch\w*|"
          r"\bcomposit(?:ed|ing)\b"),
        C(r"\b(?:boundar\w*|edges?|borders?|outlines?|transitions?|jawline|hairline|mask)\b",
          r"\bvisible\b|\bsharp\b|\bharsh\b|\babrupt\w*|\bjagged\b|\bhard\b|\bnoticeable\b|"
          r"\bmismatch\w*|\binconsisten\w*|\bunnatural\w*|\bartificial\w*|\birregular\w*|"
          r"\bobvious\w*|\bdistinct\b"),
    ),
    "lighting_inconsistency": (
        C(r"\blight(?:ing)?\b|\blit\b|\billuminat\w*|\blight\s+sources?\b|\bhighlights?\b|"
          r"\bexposure\b",
          _BAD + r"|\bharsh\b|\bflat\b|\bdifferent\s+directions?\b|\bdirection\w*|\bmultiple\b|"
          r"\btoo\s+(?:bright|dark)\b"),
    ),
    "unnatural_texture": (
        P(r"\b(?:overly|too|unnaturally|excessively|extremely|suspiciously)\s+smooth\w*|"
          r"\bplastic(?:ky|-like|\s+look\w*)?\b|\bwax(?:y|like|-like)\b|\bairbrush\w*|"
          r"\bporcelain\b|\bdoll-?like\b|\bmannequin\w*|\bcgi-?like\b|\bflawless\s+skin\b|"
          r"\bskin\s+(?:is\s+|looks\s+)?(?:too\s+)?(?:smooth|flawless|poreless)\b|"
          r"\b(?:lacks?|lacking|missing|absence\s+of|no)\s+(?:visible\s+)?(?:pores|skin\s+texture|"
          r"texture\s+details?|natural\s+(?:irregularities|texture))"),
        C(r"\btextur\w*", _BAD + r"|\bsmooth\w*|\brepetitive\b|\brepeated\b|\buniform\b|\bflat\b|"
          r"\bglossy\b|\bpainted\b|\bpainterly\b|\bcartoon\w*"),
    ),
    "temporal_artifacts": (
        P(r"\btemporal(?:ly)?\s+(?:inconsisten|artifact|artefact|instabilit|jitter|discontinu|"
          r"incoheren|glitch|error|flicker)\w*|\bframe[- ]to[- ]frame\b|\b(?:between|across)\s+"
          r"(?:consecutive\s+|successive\s+|adjacent\s+|different\s+)?frames\b|\bjitter\w*|"
          r"\bmorph\w*|\bidentity\s+(?:drift|shift|change)\w*|\bwobbl\w*|\bshimmer\w*|"
          r"\bsudden(?:ly)?\s+(?:appear|disappear|vanish|change)\w*|\b(?:appear|disappear|vanish)"
          r"\w*\s+(?:suddenly|abruptly)\b|"
          r"\b(?:breaks?|broken|lack\s+of|poor|loss\s+of|disrupted)\s+"
          r"(?:motion\s+|temporal\s+)?continuity|\bcontinuity\s+(?:errors?|breaks?|issues?)"),
    ),
    "flicker": (
        P(r"\bflicker\w*|\bstrob\w*|\bbrightness\s+(?:fluctuat|vari|change|shift|jump|puls)\w*|"
          r"\b(?:fluctuat\w*|pulsing|pulsating|unstable)\s+(?:brightness|exposure|lighting|"
          r"illumination)|\blighting\s+(?:fluctuat\w*|puls\w*|flash\w*|changes\s+rapidly)"),
    ),
    "clipping": (
        P(r"\bclipp(?:ing|ed)\b(?!\s+(?:through|into|in\b))|\bcrackl\w*|\boverdriv\w*|"
          r"\bdistorted\s+(?:audio|sound|voice|speech)|\b(?:audio|sound|voice|speech)\s+(?:is\s+|"
          r"sounds\s+)?(?:distorted|harsh|crackly|fuzzy|overdriven)|\bharsh\s+(?:sound|audio|"
          r"distortion|peaks)|\bfuzzy\s+(?:sound|audio|voice)|\bpeaks?\s+(?:are\s+)?(?:clipped|"
          r"cut\s+off)"),
    ),
    "hiss": (
        P(r"\bhiss\w*|\bstatic\b(?!\s+(?:image|camera|shot|background|pose|frame|expression))|"
          r"\bsh{3,}\b|\bhigh[- ]frequency\s+(?:noise|static|hiss)|\bwhite\s+noise|\btape\s+noise"),
    ),
    "buzz": (
        P(r"\bbuzz\w*|\bhum(?:s|ming)?\b|\bdron(?:e|ing)\b|"
          r"\belectrical\s+(?:interference|noise|hum)"
          r"|\blow[- ]frequency\s+(?:tone|noise|hum|rumble)|\bmains\s+hum|\b(?:50|60)\s*hz\b|"
          r"\brumbl\w*"),
    ),
    "pops": (
        P(r"\bpops?\b(?!\s+(?:out|up|music|song))|\bpopping\b(?!\s+in)|\bclick(?:s|ing)?\b|"
          r"\b(?:audio|sound)\s+glitch\w*|\babrupt\s+(?:sounds?|noises?|transients?|bursts?)|"
          r"\bsharp\s+(?:transients?|spikes?|clicks?)|\bsudden\s+(?:spikes?|bursts?|noises?)|"
          r"\bdropouts?\b"),
    ),
    "reflection_inconsistency": (
        C(r"\breflect\w*|\bmirror\w*|\bcatch\s?lights?\b|\bspecular\w*",
          _BAD + r"|\bdiffer\w*|\basymmetr\w*"),
        P(r"\b(?:missing|no)\s+reflections?\b" + _EXEMPT),
    ),
    "shadow_inconsistency": (
        C(r"\bshadow\w*", _BAD + r"|\bdirection\w*|\bdiffer\w*"),
        P(r"\b(?:missing|no|lacks?|lacking)\s+(?:\w+\s+)?shadows?\b" + _EXEMPT
          + r"|\bshadowless\b"),
    ),
    "spatial_incoherence": (
        P(r"\bfloat\w*|\bhover\w*|(?:\bnot|n't|n\u2019t|\bnever)\s+(?:\w+\s+)?(?:touch\w*|contact|"
          r"rest\w*\s+on|connect\w*)|\b(?:do|does|did)\s+not\s+(?:\w+\s+)?(?:touch\w*|contact|"
          r"rest\w*\s+on|connect\w*)|\bno\s+(?:physical\s+)?contact\b|\black\s+of\s+contact\b|"
          r"\b(?:clip\w*|pass\w*|go\w*|sink\w*)\s+(?:right\s+)?(?:through|into)\s+(?:the\s+)?"
          r"(?:wall|floor|ground|table|chair|surface|body|arm|hand|object)|\bintersect\w*|"
          r"\bpenetrat\w*|\bspatial\w*\s+(?:incoheren|inconsisten|error|relationship|layout)\w*|"
          r"\bcontact\s+(?:incoheren\w*|errors?|issues?|points?)|\bimpossible\s+(?:position\w*|"
          r"placement|overlap\w*)|\bout\s+of\s+scale\b|\bscale\s+(?:is\s+)?(?:off|inconsistent|"
          r"wrong)"),
    ),
    "unrealistic_background": (
        C(r"\bbackground\w*|\bbackdrop\w*|\bsurroundings\b|\bscenery\b|\benvironment\b|"
          r"\bperspective\b|\bvanishing\s+points?\b",
          _BAD + r"|\bflat\b|\bwarp\w*|\bmelt\w*|\bnonsensical\b|\bgarbled\b|\bsmear\w*|\bsmudg\w*|"
          r"\blacks?\s+(?:\w+\s+)?(?:detail|depth|structure)|\blacking\b|\bgeneric\b|\bpainted\b|"
          r"\bpainterly\b|\brepetitive\b|\bchaotic\b|\bincoherent\b|\bjumbled\b|\bincomplete\b|"
          r"\billogical\b|\bcollaps\w*"),
    ),
    "anatomical_inconsistency": (
        C(r"\b(?:hands?|fingers?|thumbs?|limbs?|arms?|legs?|feet|foot|toes?|teeth|tooth|ears?|"
          r"necks?|torso|shoulders?|elbows?|knees?|wrists?|jaw\w*|chin|skull|body|bodies|"
          r"proportions?|joints?|nails?|knuckles?|nose|nostrils?|lips?|mouth|irises|pupils?)\b|"
          r"\bface\s+shape\b|\bfacial\s+(?:structure|proportions?|features?)\b",
          r"\bdistort\w*|\bdeform\w*|\bmalform\w*|\bmisshap\w*|\bextra\b|\badditional\b|"
          r"\bmissing\b|\bfused\b|\bmerg\w*|\btwist\w*|\belongat\w*|\bstretch\w*|\basymmetr\w*|"
          r"\bdisproportion\w*|\btoo\s+(?:many|few|long|short|large|small|big)\b|\bbent\b|"
          r"\bcontort\w*|\bmangled\b|\bwarp\w*|\bwrong\s+number\b|\bsix\b|\bimplausib\w*|"
          r"\bimpossib\w*|\babnormal\w*|\bduplicat\w*|\bmelt\w*|\bunnatural\s+(?:shape|"
          r"proportion|angle|length|size|number)\w*"),
        P(r"\banatom\w*\s+(?:inconsisten|error|flaw|issue|problem|anomal|implausib|incorrect|"
          r"abnormal|distort)\w*|\b(?:extra|missing|fused|sixth|additional)\s+(?:finger|limb|arm|"
          r"leg|toe|hand|tooth|teeth|ear)\w*|\bsix\s+fingers\b|\b(?:implausible|impossible|"
          r"distorted|incorrect)\s+anatomy\b"),
    ),
    "unnatural_expressions": (
        C(r"\bexpressions?\b|\bsmil\w*|\bfrown\w*|\bgrin\w*|\bfacial\s+(?:movements?|muscles?|"
          r"animation|emotions?)",
          _BAD + r"|\bstiff\w*|\bfrozen\b|\bblank\b|\bforced\b|\bexaggerat\w*|\bemotionless\b|"
          r"\blifeless\b|\brigid\b|\bmask-like\b|\brobotic\b|\bstatic\b|\binappropriate\b|"
          r"\beerie\b|\bcreepy\b|\buncanny\b"),
        P(r"\bexpressionless\b|\bemotionless\s+face\b|\bpoker[- ]faced?\b|\bmask-like\s+face\b|"
          r"\bfrozen\s+(?:smile|face|expression)\b|\buncanny\s+(?:smile|expression|face)\b"),
    ),
    "unnatural_gaze": (
        C(r"\bgaze\w*|\beye\s+(?:contact|direction|movements?|line|focus)\b|\beyes\b|\bpupils?\b|"
          r"\birises\b|\bblink\w*|\bstar(?:e|es|ing)\b",
          r"\bunnatural\w*|\brobotic\w*|\bfixed\b|\bvacant\b|\blifeless\b|\bdead\b|\bglassy\b|"
          r"\bnever\b|\brarely\b|\binfrequent\w*|\bstiff\w*|\bfrozen\b|\bdifferent\s+directions\b|"
          r"\bmisalign\w*|\bcross-?eyed\b|\bwander\w*|\bunfocused\b|\bempty\b|\bstaring\b|"
          r"\bwall-?eyed\b|" + _NOT + r"(?:move|blink|focus|track|follow|point|look)\w*|"
          r"\bnot\s+(?:\w+\s+)?(?:looking|focused|aligned)\b|\btoo\s+(?:often|frequent\w*|rare\w*|"
          r"much|little)\b|\bexcessive\w*|\babnormal\w*|\bodd\w*|\bstrange\w*|\bweird\w*|"
          r"\binconsisten\w*|\bmismatch\w*|\bwrong\w*|\buncanny\b|\boff\b"),
        P(r"\b(?:no|never|rarely|infrequent|lack\s+of|absence\s+of|without)\s+(?:\w+\s+)?blink\w*|"
          r"\b(?:do|does|did)\s*(?:not|n't|n\u2019t)\s+blink\w*|\bcross-?eyed\b|\blazy\s+eye\b|"
          r"\bdead\s+eyes\b|\bglassy\s+eyes\b|\bvacant\s+(?:stare|eyes|gaze)\b|\bblank\s+stare\b"),
    ),
    "unnatural_movement": (
        C(r"\bmov(?:e|es|ing|ement|ements)\b|\bmotions?\b|\bgestur\w*|\bgait\b|\bwalk\w*|"
          r"\bhead\s+(?:turns?|tilts?|nods?|pose)\b|\bposture\b|\bbody\s+language\b|\brunning\b|"
          r"\bdancing\b",
          r"\bunnatural\w*|\bjerk\w*|\brobotic\w*|\bstiff\w*|\brigid\w*|\bmechanical\w*|\bfloaty\b|"
          r"\bglid\w*|\bslid\w*|\bteleport\w*|\bimplausib\w*|\bimpossib\w*|\babrupt\w*|\bsudden\w*|"
          r"\bstutter\w*|\berratic\w*|\bchoppy\b|\bwooden\b|\bpuppet-?like\b|\bawkward\w*|"
          r"\bweird\w*|\bstrange\w*|\bodd\w*|\bunrealistic\w*|\bdef(?:y|ies)\s+physics\b|"
          r"\bphysically\s+(?:impossible|implausible)\b|\bnot\s+(?:\w+\s+)?(?:smooth|fluid|natural|"
          r"physical\w*|realistic)\b|\black\w*\s+(?:\w+\s+)?(?:inertia|weight|momentum)\b|"
          r"\brepetitive\b|\bloop\w*|\binconsisten\w*"),
        P(r"\bjerky\b|\brobotic\s+(?:movements?|motions?)\b|\bpuppet-?like\b|\bmoonwalk\w*|"
          r"\bfeet\s+slid\w*|\bdef(?:y|ies)\s+(?:gravity|physics)\b"),
    ),
    "object_integrity_flaws": (
        C(r"\bobjects?\b|\bitems?\b|\b(?:eye)?glasses\b|\bspectacles\b|\bearrings?\b|\bjewel\w*|"
          r"\bnecklaces?\b|\bhats?\b|\bcloth(?:ing|es)\b|\bshirts?\b|\bcollars?\b|\bbuttons?\b|"
          r"\bzippers?\b|\bmicrophones?\b|\bheadphones?\b|\bchairs?\b|\btables?\b|\bcups?\b|"
          r"\bbottles?\b|\bcars?\b|\bvehicles?\b|\bfurniture\b|\bbuildings?\b|\baccessor\w*|"
          r"\bstraps?\b|\bracket\w*|\bbicycles?\b|\bwheels?\b|\bfences?\b|\bpoles?\b",
          r"\bincomplete\b|\bbroken\b|\bdeform\w*|\bdistort\w*|\bmelt\w*|\bmerg\w*|\bfused\b|"
          r"\bmalform\w*|\bmisshap\w*|\bwarp\w*|\bmissing\s+(?:parts?|pieces?|legs?|wheels?|"
          r"handles?|arms?)\b|\bhalf-?formed\b|\bnonsensical\b|\basymmetr\w*|\bmismatch\w*|"
          r"\binternally\s+inconsistent\b|\bimpossible\b|\billogical\b|\btwisted\b|\btruncated\b|"
          r"\bdisconnected\b|\bblob\w*|\bmangled\b|\bunnatural\s+(?:shape|structure|geometry)\b"),
        P(r"\bobject\s+integrity\b|\bmelt(?:ed|ing)\s+(?:objects?|shapes?|structures?)\b|"
          r"\bmismatched\s+(?:earrings?|eyeglasses|glasses)\b|\bimpossible\s+(?:geometry|"
          r"structures?|objects?)\b|\bnonsensical\s+(?:objects?|shapes?|structures?)\b"),
    ),
    "unrecognizable_text": (
        C(r"\btexts?\b|\btextual\b|\bletter(?:s|ing)\b|\bwriting\b|\bwritten\b|\bcharacters\b|"
          r"\bwords?\b|\bsignage\b|\b(?:street|road|shop|store)\s+signs?\b|\bsignboards?\b|"
          r"\blabels?\b|\blogos?\b|\btypography\b|\bfonts?\b|\bcaptions?\b|\bsubtitles?\b|"
          r"\bdigits\b|\bnumbers\b",
          r"\bgarbl\w*|\bgibberish\b|\billegib\w*|\bunread\w*|\bnonsens\w*|\bmeaningless\b|"
          r"\bdistort\w*|\bbroken\b|\bmalform\w*|\bjumbl\w*|\bincomplete\b|\bscrambl\w*|"
          r"\bmisspell\w*|\bwarp\w*|\bmelt\w*|\bsmear\w*|\bunrecogni[sz]\w*|\bnot\s+(?:\w+\s+)?"
          r"(?:legible|readable|real|recogni[sz]able)\b|\bmade[- ]up\b|\binvented\b|\bsquiggl\w*|"
          r"\bdeform\w*"),
        P(r"\bgibberish\b|\billegible\b|\bunreadable\b|\bpseudo-?(?:text|letters|script)\b|"
          r"\bnonsense\s+(?:text|letters|words|characters)\b"),
    ),
    "unnatural_prosody": (
        C(r"\bprosod\w*|\bintonation\w*|\bcadence\b|\brhythm\w*|\bpitch\w*|\bpacing\b|\bspeech\b|"
          r"\bvoices?\b|\bdelivery\b|\bstress\s+patterns?\b|\bemphasis\b|\bpauses?\b|"
          r"\bspeaking\s+(?:style|rate)\b",
          r"\bmonoton\w*|\bflat\w*|\brobotic\w*|\bmechanical\w*|\bunnatural\w*|\bsynthetic\w*|"
          r"\bartificial\w*|\blifeless\b|\bstilted\b|\bchoppy\b|\bodd\w*|\bstrange\w*|\buneven\w*|"
          r"\birregular\w*|\bawkward\w*|\black\w*\s+(?:\w+\s+)?(?:variation|emotion|inflection|"
          r"expressiveness|intonation)\b|\bcomputer-?generated\b|\bmachine-?like\b|\bmisplaced\b|"
          r"\bsing-?song\b|\bstaccato\b|\buniform\b|\bconstant\b"),
        P(r"\bmonoton\w*|\brobotic\s+(?:voice|speech|delivery|tone|sound\w*)\b|"
          r"\bflat\s+(?:intonation|"
          r"delivery|voice|affect)\b|\bsounds?\s+(?:robotic|mechanical|synthetic|like\s+(?:a\s+)?"
          r"(?:robot|machine|text-to-speech|tts))\b|\bunnatural\s+(?:prosody|intonation|pauses?|"
          r"rhythm|cadence|stress|pitch)\b"),
    ),
    "audio_visual_desync": (
        P(r"\blip[- ]?sync\w*|\bout\s+of\s+sync\b|\bdesync\w*|\bunsynchroni[sz]\w*|\basynchron\w*|"
          r"\b(?:audio|sound|speech|voice)\s+(?:lags?|leads?|delay\w*|offset)\b|\b(?:lag|delay|"
          r"offset)\w*\s+between\s+(?:the\s+)?(?:audio|sound|speech|lips?|mouth|video)\b|"
          r"\bmismatch\w*\s+between\s+(?:the\s+)?(?:audio|sound|speech|voice|lips?|mouth)\b"),
        C(r"\blips?\b|\bmouth\w*|\bvisemes?\b",
          r"(?:do|does|did|is|are)\s*(?:not|n't|n\u2019t)\s+(?:\w+\s+)?(?:match|sync|synchroni[sz]"
          r"|align|correspond|line\s+up)\w*|\bmismatch\w*|\bmisalign\w*|\blag\w*|\bdelay\w*|"
          r"\bahead\s+of\b|\bbehind\b"),
    ),
    "emotional_contradiction": (
        C(r"\bemotion\w*|\bmood\b|\bsentiment\b|\bfeelings?\b|(?<!skin\s)\btone\b",
          r"\bcontradict\w*|\bmismatch\w*|" + _NOT + r"(?:match|fit|align|correspond|reflect|"
          r"convey)\w*|\binconsisten\w*|\bincongruen\w*|\bconflict\w*|\bat\s+odds\b|"
          r"\binappropriate\b|\bopposite\b|\bmisaligned\b|\bout\s+of\s+place\b|\bcontrary\b"),
        P(r"\bemotional(?:ly)?\s+(?:contradict|inconsisten|mismatch|incongruen)\w*"),
    ),
}
