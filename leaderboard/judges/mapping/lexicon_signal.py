"""v2 lexicon, quality artifacts (TriDF appendix C, table 5): visual signal, temporal, audio.

Written from the paper's definitions and the ways detectors describe each artifact: by name, by a
synonym, or indirectly by what it looks or sounds like ("the face is made of square patches",
"the shading breaks into stripes", "the loud words crackle"). Rule kinds: `patterns.py`.
"""
from __future__ import annotations

from leaderboard.judges.mapping.patterns import BAD, CONTRAST, A, C, P, S, art
from leaderboard.judges.mapping.versions import since, until

_FACEISH = (r"\b(?:face|faces|facial|eyes?|eyelashes|eyebrows?|mouth|lips|teeth|chin|nose|"
            r"cheeks?|hair|hairline|strands|features?|details?|edges?|outlines?|contours?|"
            r"image|picture|photo|video|footage|frame|clip|region|area|patch|subject|person|"
            r"portrait|everything|whole\s+thing)\b")

BLURRINESS = art(
    "blurriness",
    P(r"\bblur(?:ry|red|ring|riness|rier|riest|s)?\b(?!\s+(?:into|together|the\s+line))|"
      r"\bbluriness\b|"
      r"\bout[- ]of[- ]focus\b|\bdefocus\w*|\bunsharp\b|\bsmudg\w*|\bhazy\b|"
      r"\bsoftness\b(?!\s+of\s+the\s+(?:light|lighting|shadows?|voice))|"
      r"\bsoft(?:ened)?\s+(?:focus|details?|features?|face|eyes|image|overall)\b|"
      r"\bfuzzy\s+(?:edges?|details?|outlines?|image|face|features|hair)\b|"
      r"\blow(?:er)?[- ](?:effective\s+)?resolution\b|\bresolution\s+(?:mismatch|drop|loss)\b|"
      r"\bup-?scaled\b|\bsofter\s+than\b|\bless\s+(?:sharp|detailed|crisp)\s+than\b"),
    C(_FACEISH, r"\b(?:is|are|looks?|appears?|seems?|becomes?|gets?|grow|grows)\s+(?:\w+\s+)?"
      r"(?:soft|softer|fuzzy|mushy)\b|\bgrainy\s+and\s+soft\b|\bsmeared\b|\bsmeary\b"),
    C(r"\b(?:face|faces|eyes|hair|features?|details?|eyelashes|mouth|lips|region|skin)\b",
      r"\black(?:s|ing)?\s+(?:\w+\s+)?(?:detail|sharpness|definition)\b|"
      r"\bno\s+(?:crisp|sharp|fine)\s+details?\b"),
    A(r"\b(?:loss|lack|lacks|lacking|absence)\s+of\s+(?:sharpness|fine\s+details?|definition|"
      r"focus)\b|\bno\s+(?:crisp|sharp)\s+(?:details?|edges?|definition)\b|"
      r"\b(?:is|are|looks?)\s*(?:not|n't)\s+(?:\w+\s+)?(?:sharp|in\s+focus|crisp)\b"),
    flaw="smooth smoothly even", quality=True,
    exclude=r"\bbokeh\s+is\s+natural|\bdepth\s+of\s+field\s+is\s+natural|\bsmeared\s+(?:shapes|"
            r"painting|pattern)|\b(?:out-of-focus|blurred|blurry|soft|defocused)\s+(?:background|"
            r"backdrop)\b|\bbackground\s+(?:is\s+)?(?:nicely\s+|softly\s+|slightly\s+)?(?:blurred|"
            r"out\s+of\s+focus|defocused)\b|\bbokeh\b(?!\s+(?:looks|is)\s+(?:fake|artificial|"
            r"unnatural))|\bdepth\s+of\s+field\b")

BLOCKINESS = art(
    "blockiness",
    P(r"\bblock(?:y|iness|ing)\b|\bblocks\b|\bmacro-?blocks?\b|\bblock\s+(?:artifacts?|"
      r"artefacts?|structure|patterns?|edges?)\b|\bpixelat\w*|\bpixely\b|"
      r"\bcompression\s+(?:artifacts?|artefacts?|blocks?|tiles?|patches|squares|grid|noise|"
      r"damage)\b|\bjpe?g\s+(?:artifacts?|artefacts?|blocks?|blocking|grid|squares)\b|"
      r"\b(?:square|rectangular)\s+(?:patterns?|patches|tiles|chunks|blocks|artifacts?|grid)\b|"
      r"\bsquare\s+compression\b|\b(?:8|16)\s*(?:x|\u00d7|by)\s*(?:8|16)\b|\bcheckerboard\w*|"
      r"\bgrid(?:-like)?\s+(?:patterns?|artifacts?|of\s+(?:squares?|square\s+tiles|tiles|"
      r"blocks))\b|\brectangular\s+tiles\b|\bchunks\s+of\s+uniform\s+colou?r\b|"
      r"\b(?:breaks?|broke|breaking)\s+(?:up\s+)?into\s+(?:\w+\s+)?(?:blocks|squares|tiles|"
      r"patches)\b|\blow[- ]bitrate\b|\bbitrate\s+(?:drop|artifacts?)\b"),
    A(r"\bsquares\.\s"),
    exclude=r"\bsolid\s+block\b|\bblocking\s+(?:the|her|his|their)\s+(?:view|face|light)\b|"
            r"\bcity\s+blocks?\b|\bbuilding\s+blocks?\b",
    quality=True)

NOISE = art(
    "noise",
    P(r"\bnois(?:e|y)\b|\bgrain(?:y|iness)?\b|\bspeckl\w*|\bsandy\b|\bsand-like\b|\blike\s+sand\b|"
      r"\bsalt[- ]and[- ]pepper\b|\b(?:tiny|small|fine)\s+random\s+(?:dots|specks|speckles|"
      r"pixels)\b|\brandom\s+(?:dots|specks|pixel\s+noise)\b|\bspecks\b|\bnoize\b"),
    flaw="fine uniform even",
    exclude=r"\b(?:wood|leather|fabric)\s+grain\b|\bgrain\s+of\s+(?:the\s+)?(?:wood|"
            r"leather|fabric)|\b(?:hiss\w*|hum|buzz\w*|static)\s+(?:and\s+)?noise\b|"
            r"\bnoise\s+(?:like|such\s+as)\s+(?:a\s+)?(?:hiss|hum|buzz|static)|"
            r"\b(?:audio|sound|voice|speech|microphone|mic|soundtrack|"
            r"crowd|" + since(3, r"audience|") +
            r"traffic|wind|fan|ambient|ambience|room|street|applause|"
            r"background\s+noise|noise\s+floor)\b|\bnoise\s+(?:residual|analysis|print)\b|"
            r"\bno\s+grain\b",
    quality=True)

BANDING = art(
    "banding",
    P(r"\bband(?:ing|ed)\b|\bbands\b|\bposteri[sz]\w*|\bcontour(?:ing|s)?\s+(?:lines|steps|"
      r"bands|artifacts?)\b|\bstepped\s+(?:gradients?|contours?|shading|transitions?|tones?)\b|"
      r"\b(?:stair|step)[- ]?(?:stepping|steps|like)\b|\bstair-?stepping\b|"
      r"\b(?:colou?r|tone|tonal|gr[ae]y|luminance|brightness)\s+(?:steps|levels|jumps)\b|"
      r"\bsteps\s+(?:of|in)\s+(?:colou?r|the\s+gradient|tone|shading)\b|"
      r"\bgradients?\s+(?:steps|stepping|breaks|is\s+banded|has\s+steps)\b|"
      r"\b(?:breaks?|broken)\s+(?:up\s+)?into\s+(?:\w+\s+){0,2}(?:stripes|bands|steps|"
      r"contours|levels)\b|\bflat\s+(?:gr[ae]y|colou?r)\s+levels\b|\bquantiz\w*\s+"
      r"(?:gradients?|colou?rs?|shading)\b|\bhard\s+(?:steps|transitions)\s+between\b|"
      r"\b(?:abrupt|distinct|discrete|visible|hard)\s+(?:steps|stripes|contour\s+steps)\b|"
      r"\btone\s+jumps\b|\bjumps\s+to\s+the\s+next\b"),
    A(r"\bno\s+(?:smooth|continuous)\s+(?:gradient|transition)\b|\binstead\s+of\s+a\s+smooth\s+"
      r"(?:gradient|blend|transition)\b"),
    exclude=r"\b(?:rubber|head|wrist|arm|hair|music|rock|elastic)\s*bands?\b|\bband\s+(?:of\s+)?"
            r"(?:musicians|members|playing)\b|\bfrequency\s+bands?\b",
    quality=True)

_COLOR = (r"\bcolou?r\w*|\bhues?\b|\bskin\s+tones?\b|\btones?\b|\btint\w*|\bsaturat\w*|"
          r"\bvibranc\w*|\bcomplexion\b|\bwhite\s+balance\b|\bgrading\b")
COLOR_INCONSISTENCY = art(
    "color_inconsistency",
    P(r"\b(?:over|hyper)-?saturat\w*|\bexcessive(?:ly)?\s+(?:saturat|vibran|vivid)\w*|"
      r"\bunnatural(?:ly)?\s+(?:saturat|vibran|vivid|colou?r|hue|skin\s+tone|red|green|blue|"
      r"orange|pink|yellow|glow)\w*|\bcolou?r\s+(?:cast|shift|bleed|mismatch|inconsisten|"
      r"imbalance|drift|jump|oscillat|fring)\w*|\bgarish\b|\bwashed[- ]out\b|"
      r"\bneon\b(?!\s+(?:signs?|lights?|tubes?|lighting|glow\s+of))|"
      r"\bfluorescent\b(?!\s+(?:lights?|lamps?|tubes?|lighting))|\bradioactive\b|\bglowing\s+(?:red|green|blue|orange|pink|yellow)\b|"
      r"\b(?:impossibly|too|overly|unnaturally|excessively|extremely|super)\s+(?:vivid|saturated|"
      r"vibrant|bright\s+colou?rs?|colou?rful)\b|\bover-?vivid\b|\bskin[- ]tone\s+(?:mismatch|"
      r"shift|difference|drift|jump)\w*|\btone\s+mismatch\b|\b(?:pinker|redder|yellower|"
      r"oranger|greener|bluer|more\s+(?:saturated|reddish|yellow|yellowish|pink|pinkish|"
      r"orange|red|vivid|magenta|green|greenish))\b|\bsaturation\s+(?:is\s+)?(?:exaggerat\w*|"
      r"too\s+high|boosted|pushed|oscillat\w*|varies|jumps)\b|\bmismatched\s+skin\s+tones?\b"),
    C(_COLOR, BAD + r"|\boverly\b|\btoo\s+(?:vivid|bright|saturated|vibrant|warm|cool|pink|red|"
      r"orange|yellow)\b|\bvivid\b|\bcast\b|\bshift\w*|\bdiffer\w*|\bsaturated\b|\bintense\b|"
      r"\bdrift\w*|\boscillat\w*|\bglow\w*|\bpinkish\b|\breddish\b|\bexaggerat\w*"),
    flaw="even", quality=True,
    exclude=r"\btone\s+of\s+(?:voice|the\s+voice)|\b(?:voice|vocal|emotional|speaking)\s+tone\b|"
            r"\btone\s+(?:is|was|sounds)\s+(?:cold|detached|flat|cheerful|upbeat|happy|sad|"
            r"neutral|warm|bright)|\bsame\s+(?:tone|note)\b|\btones?\s+of\s+the\s+voice\b|"
            r"\bchanges?\s+from\s+\w+\s+to\s+\w+\s+between\s+frames|\blit\s+with\s+a\s+\w+\s+tone\b",
    context=r"\b(?:colou?r|hue|tint|saturat|skin|vivid|neon|pink|red|orange|yellow|tone|"
            r"vibran|glow|grading|complexion|balance)")

BLENDING_ARTIFACTS = art(
    "blending_artifacts",
    P(r"(?<!seamlessly\s)(?<!smoothly\s)(?<!naturally\s)(?<!smooth\s)\bblend(?:s|ed|ing)?\b"
      r"(?!\s+(?:seamlessly|smoothly|naturally|well|in\b|nicely|perfectly|together|into\s+(?:each|"
      r"one|a\s+single)))|\bseams?\b|"
      r"\bseamlines?\b|\bsplic(?:e|ed|ing)\b|" + until(3, r"\bpasted\b|\bpaste-?in\b|") +
      r"\bcut[- ]and[- ]paste\w*|"
      r"\bcut[- ]?out\b|\bcut\s+out\s+sharply\b|\bhalos?\b|\bstitch(?:ed|ing)\b|"
      r"\bcomposit(?:ed|ing|e)\b|\bfring(?:e|ing)\b|\bmask\s+(?:edge|border|boundary|line|"
      r"outline)s?\b|\b(?:face|swap|mask)\s+(?:boundary|border|edge|outline|contour)\b|"
      r"\bboundary\s+(?:discontinuit|mismatch|artifact|seam)\w*|"
      r"\bfaint\s+(?:line|contour|edge|seam|outline)\b|\bvisible\s+(?:edge|border|boundary|"
      r"outline|line|contour|seam|fringe|transition|mask)\b|\boutline\s+around\b|"
      r"\b(?:edge|border|boundary|outline)\s+(?:around|along)\s+(?:the|her|his|their)\s+"
      r"(?:\w+'s\s+)?(?:face|head|jaw|cheeks?|hair|fingers|mouth|outline|body)\b"),
    C(r"\b(?:boundar\w*|borders?|outlines?|transitions?|masks?|seams?)\b|\b(?:edges?|contours?)\s+"
      r"(?:of|around|along|between|where|at)\s+(?:the\s+|her\s+|his\s+|their\s+)?(?:\w+'s\s+)?"
      r"(?:face|facial|mask|jaw\w*|head|hair\w*|cheeks?|neck|subject|person|body|mouth|patch|"
      r"region|forehead|chin|temples?|ears?|inserted|pasted|swapped)\b|\bface\s+edges?\b",
      r"\bvisible\b|\bsharp\b|\bharsh\b|\babrupt\w*|\bjagged\b|\bhard\b|\bnoticeable\b|"
      r"\bmismatch\w*|\binconsisten\w*|\bunnatural\w*|\bartificial\w*|\birregular\w*|"
      r"\bobvious\w*|\bdistinct\b|\brounded\b|\bshows?\s+up\b|\bappears\b|"
      r"\bflicker\w*|\bpulses\b|\bdiscontinu\w*|\blighter\b|\bdarker\b|\bbrighter\b"),
    A(r"\b(?:not|n't|never|poorly|badly|imperfectly)\s+(?:\w+\s+)?(?:blended|feathered|merged)\b|"
      r"\b(?:doesn't|does\s+not|don't|do\s+not)\s+continue\s+into\b"),
    # "pasted" names blending unless it is the inferred cause of something else ("as if the face
    # were pasted from a low-quality JPEG": compression, not a visible seam)
    S(r"\bpasted\b|\bpaste-?in\b", r"\bpasted\b|\bpaste-?in\b",
      unless=r"\b(?:as\s+if|as\s+though|suggests?|would\s+produce|hints?\s+at|compress\w*|jpeg|"
             r"block\w*|macroblocks?|tiles|grid|re-?encod\w*|parallax)\b", since=3),
    quality=True,
    exclude=r"\bblur\w*\s+(?:hair\s+)?boundar|\bsmooth\s+blend\b|\bedges?\s+of\s+the\s+(?:nose|"
            r"lips|frame|screen|image|table)\b|\bbrightness\s+flickers\s+at\s+the\s+edges\b|"
            r"\bbands?\b|\bstripes\b|\bgradient\b|\bsteps\b|\bspeckle\b|"
            r"\bface\s+(?:is\s+)?(?:drawn\s+)?on\s+top\b(?!.*edge)")

_CONTRAST = CONTRAST.replace(r"|\bthan\b", "")
_LIGHTWORD = (r"(?:\blit\b|\blighting\b|\blight\b|\blamps?\b|\bsun(?:light)?\b|\bdaylight\b|"
              r"\bceiling\b|\bfluorescents?\b|\blight\s+source\b|\bdark\b|\billuminat\w*|"
              r"\bfront-?lit\b|\bback-?lit\b|\bbrighter\b|\bdarker\b)")
LIGHTING_INCONSISTENCY = art(
    "lighting_inconsistency",
    C(r"\blight(?:ing|s)?\b|\blit\b|\billuminat\w*|\blight\s+sources?\b|\bhighlights?\b|"
      r"\bkey\s+light\b", BAD + r"|\bdifferent\s+(?:directions?|angles?|sides?|sources?|"
      r"colou?r)\b|\bchanges?\s+direction\b|\bmultiple\s+(?:light|sources|directions)\b|"
      r"\bconflicting\b|\bopposite\b|\bfrom\s+(?:below|the\s+wrong)\b|\btoo\s+(?:bright|dark)\b|"
      r"\bbluish\b|\bbrighter\s+than\b|\bdarker\s+than\b|\bwithout\s+any\s+(?:visible\s+)?"
      r"(?:light\s+)?source\b|\bno\s+(?:visible\s+)?(?:light\s+)?source\b|\bshouldn't\b|"
      r"\bproblem\b"),
    S(r"\blit\b|\blighting\b|\billuminat\w*|\blight\s+(?:on|from|source|comes)\b|"
      r"\bsun(?:light)?\s+from\b|\bfront-?lit\b|\bback-?lit\b",
      _LIGHTWORD + r"[^.!?]*(?:" + _CONTRAST + r"|;)[^.!?]*" + _LIGHTWORD),
    P(r"\btwo\s+suns\b|\billumination\s+mismatch\b|\blighting\s+(?:mismatch|inconsisten\w*)|"
      r"\b(?:lit|light)\s+from\s+(?:a\s+)?(?:different|another|the\s+opposite)\s+(?:direction|"
      r"side|angle)\b"),
    flaw="even", quality=True,
    exclude=r"\bflicker\w*|\bbrightness\s+(?:pulses|pulsing|drops|varies|changes|fluctuat)|"
            r"\bbrightens\s+and\s+darkens\b|\bshadow\w*\s+(?:point|fall|go)|"
            r"\blight\s+(?:from\s+the\s+right\s+)?explains\b|\bcatch(?:es)?\s+it\b")

UNNATURAL_TEXTURE = art(
    "unnatural_texture",
    P(r"\b(?:overly|too|unnaturally|excessively|extremely|suspiciously|impossibly)\s+"
      r"(?:smooth|flawless|polished)\w*|"
      r"\bover-?smooth\w*|\bsmooth(?:ed|ness)?\s+(?:like|as)\s+(?:\w+\s+)?(?:rubber|plastic|wax|"
      r"porcelain|glass|marble|a\s+doll|silicone)\b|\bplastic(?:ky|-like|\s+look\w*|\s+skin|"
      r"\s+surface)?\b|\brubbery\b|\bwax(?:y|like|-like)\b|\bairbrush\w*|\bporcelain\b|"
      r"\bdoll-?like\b|\blike\s+a\s+doll\b|\bmannequin\w*|\bvideo\s+game\s+character\b|"
      r"\bpolished\s+marble\b|\bvelvety\b|\bsilicone\b|\bfelt\b|"
      r"\bplush\b|\bstamped\s+on\b|\bpainted\s+(?:surface|look)\b|"
      r"\bflawless\s+skin\b|\bporeless\b|\bskin\s+(?:is\s+|looks\s+)?(?:too\s+)?"
      r"(?:smooth|flawless|poreless)\b|\bsmooth\s+(?:skin|surface|painted|plush|texture)\b|"
      r"\btexture\s+(?:of|like)\s+(?:\w+\s+)?(?:marble|plastic|rubber|wax|porcelain|glass|"
      r"clay)\b|\buniform,?\s+plastic\b|\bsurfaces?\s+(?:are\s+|look\s+)?(?:overly\s+)?"
      r"(?:clean|smooth|plasticky|uniform)\b|\blooks?\s+like\s+(?:felt|plastic|wax|rubber|"
      r"clay|cgi)\b"),
    C(r"\btextur\w*", BAD + r"|\bsmooth\w*|\brepetitive\b|\brepeated\b|\buniform\b|\bflat\b|"
      r"\bglossy\b|\bpainted\b|\bpainterly\b|\bcartoon\w*|\bsynthetic\b"),
    C(r"\bskin\b|\bsurfaces?\b|\bfur\b|\bbeard\b|\bhair\b|\bface\b|\bcheeks\b",
      r"\b(?:too|overly|unnaturally|extremely|very|perfectly|suspiciously)\s+(?:smooth|clean|"
      r"uniform|even|glossy|shiny|flawless)\b|\bsmooth\s+(?:like|as)\b|\bglossy\b|"
      r"\bsheen\b|\brubber\w*|\bwaxy\b|\bclay\b|\bfelt\b|\brendered\b|\bpainted\b|"
      r"\bcartoon\w*|\bplastic\w*|\bsmoothness\b"),
    A(r"\b(?:no|without|lacks?|lacking)\s+(?:\w+\s+)?(?:visible\s+)?(?:individual\s+)?(?:strands|"
      r"hairs)\b|"
      r"\b(?:no|without|lacks?|lacking|missing|absence\s+of|devoid\s+of|free\s+of)\s+(?:any\s+)?"
      r"(?:\w+\s+)?(?:visible\s+)?(?:pores|skin\s+texture|texture|texture\s+details?|"
      r"fine\s+wrinkles|wrinkles|creases|skin\s+detail|hair\s+detail|individual\s+(?:hairs?|"
      r"strands|texture)|single\s+(?:visible\s+)?hair|natural\s+(?:skin\s+)?(?:irregularit\w*|"
      r"texture|imperfections)|imperfections|blemishes|crumbs|makeup\s+texture)\b|"
      r"\bno\s+individual\s+hairs\b"),
    flaw="smooth smoothly clean even perfect uniform", quality=True,
    exclude=r"\bsmooth\s+(?:gradient|blend|motion|movement|transition|voice|delivery)|"
            r"\bnoise\b|\bgrain\w*|\bspeckl|\btexture\s+\"?boils|\bgrainy\s+texture\b")

TEMPORAL_ARTIFACTS = art(
    "temporal_artifacts",
    P(r"\btemporal(?:ly)?\s+(?:inconsisten|artifact|artefact|instabilit|jitter|discontinu|"
      r"incoheren|glitch|error|flicker|drift|unstable)\w*|\bframe[- ]to[- ]frame\b|"
      r"\bfrom\s+(?:one\s+)?frame\s+to\s+(?:the\s+next|frame)\b|\b(?:between|across)\s+"
      r"(?:consecutive\s+|successive\s+|adjacent\s+|different\s+|the\s+)?frames\b|"
      r"\bjitter\w*|\bmorph\w*|\bidentity\s+(?:drift|shift|change|swap)\w*|\bwobbl\w*|"
      r"\bshimmer\w*|\btrembl\w*|\b(?:boils|boiling)\b|\b(?:seem|seems|appear|appears)\s+to\s+"
      r"(?:swim|boil|slide|melt|shift)\b|\bswim(?:s|ming)?\s+(?:slightly\s+)?(?:from|between|across)\b|"
      r"\b(?:dis|re)?appears?\s+and\s+(?:dis|re)appear\w*|\b(?:disappears?|reappears?|vanish\w*)"
      r"\b|\bsudden(?:ly)?\s+(?:appear|disappear|vanish|change|jump)\w*|"
      r"\b(?:appear|disappear|vanish)\w*\s+(?:suddenly|abruptly|briefly)\b|"
      r"\b(?:breaks?|broken|lack\s+of|poor|loss\s+of|disrupted)\s+(?:motion\s+|temporal\s+)?"
      r"continuity|\bcontinuity\s+(?:errors?|breaks?|issues?)|\b(?:in|for)\s+(?:several|some|"
      r"a\s+few|certain|a\s+couple\s+of|two|three|individual|brief)\s+frames\b|"
      r"\bfor\s+a\s+(?:split\s+second|single\s+frame|frame\s+or\s+two)\b|"
      r"\b(?:changes?|changing|shifts?|shifting|rearrang\w*|drifts?|drifting|varies|flips?)\s+"
      r"(?:its\s+|their\s+|in\s+)?(?:shape|size|identity|form|position|colou?r|logo|lettering|"
      r"from\s+\w+\s+to)\b|\bshift\s+shape\b|\bchanges?\s+(?:over\s+time|over\s+the\s+clip|"
      r"across\s+the\s+clip|subtly|between|from\s+shot)\b|\bsnaps?\s+back\b|"
      r"\b(?:flicker\w*|switch\w*|alternat\w*|jump\w*)\s+between\s+(?!frames|consecutive|"
      r"successive|adjacent)(?:\w+\s+){0,3}?(?:identities|faces|versions|words|letters|shapes|"
      r"states|positions|expressions|colou?rs)\b|\bslides?\s+across\b|\bdrifts?\s+(?:slightly\s+)?relative\b|\bin\s+some\s+frames\b|"
      r"\breappears?\s+later\b|\bthe\s+overlay\s+breaks\b|\blags\s+by\s+a\s+"
      r"frame\b|\blags?\s+behind\s+(?:her|his|their|the)\s+(?:real\s+)?(?:movement|motion)\b|"
      r"\bdiffer\s+between\s+\d|"
      r"\b(?:frame|shot)\s+\d+\s*(?:-|to)\s*\d+\b|\bfaces?\s+(?:looks?|is|are)\s+different\s+"
      r"from\s+frame\b|\bunstable\s+(?:face|features|identity|shape)\b|"
      r"\b(?:losing|loses|lose)\s+(?:the\s+)?fingers\b|\bthen\s+(?:the\s+)?\w+\s+come\s+back\b"),
    A(r"\b(?:doesn't|does\s+not|don't|do\s+not)\s+rotate\s+with\b"),
    flaw="", quality=True,
    context=None,
    exclude=r"\b(?:stable|consistent|steady|unchanged|constant|coherent|smooth|identical|the\s+same|"
            r"stays?\s+put)\s+(?:from\s+frame\s+to\s+frame|across\s+(?:the\s+|all\s+)?frames|"
            r"between\s+frames|over\s+time|throughout)\b|"
            r"\b(?:in|on)\s+every\s+frame\b|\bhalf-?blinks?\b|\bbrightness\b|"
            + since(3, r"\bkeeps?\s+(?:their|its|his|her)\s+(?:\w+\s+)?(?:shape|identity|form|"
                    r"size)\s+(?:from\s+frame\s+to\s+frame|across|between|throughout)\b|") +
            r"\bflicker(?:s|ed|ing|y)?\b(?!\s+between\s+(?!frames))|"
            r"\bexposure\b|\bluminance\b|\bgrain\b|\bsensor\s+noise\b|\bvoice\b|\bspeech\b|"
            r"\baudio\b|\bsound\b")

FLICKER = art(
    "flicker",
    C(r"\bbrightness\b|\bluminance\b|\bexposure\b|\billumination\b",
      r"\bpuls\w*|\bpump\w*|\bfluctuat\w*|\boscillat\w*|\bflash\w*|\bjumps?\b|\bdrops?\b|"
      r"\bdips?\b|\bbrightens\b|\bdarkens\b|\bstrob\w*|\bunstable\b|\bflicker\w*|"
      r"\bchanges?\s+(?:rapidly|every|from\s+frame|abruptly|suddenly)\b|\bvaries\s+(?:from\s+frame|"
      r"rapidly|every|over\s+time)\b"),
    P(r"\bflicker(?:s|ed|ing|y)?\b(?!\s+between\s+(?!frames))|\bstrob\w*|\bbrightness\s+(?:fluctuat|vari|change|shift|jump|"
      r"puls|pump|drop|dip|oscillat|flash)\w*|\b(?:fluctuat\w*|pulsing|pulsating|pumping|"
      r"oscillating|unstable|jumping)\s+(?:of\s+)?(?:the\s+)?(?:brightness|exposure|lighting|"
      r"illumination|luminance)|\blighting\s+(?:fluctuat\w*|puls\w*|flash\w*|changes\s+rapidly)|"
      r"\bbrighten\w*\s+and\s+darken\w*|\bdarken\w*\s+and\s+brighten\w*|\bluminance\s+(?:of\s+"
      r"\w+\s+\w+\s+)?(?:oscillat|fluctuat|puls|vari|jump)\w*|\bbrightness\s+drops\b|"
      r"\bexposure\s+(?:is\s+being\s+reset|pumping|jumps|flickers)\b|\bflashes\s+of\s+"
      r"(?:light|brightness)\b|\bbrightness\s+pulsing\b|\bpulsing\s+of\s+brightness\b"),
    quality=True,
    exclude=r"\bflicker\w*\s+between\s+(?!frames|consecutive|successive|adjacent)")

# Sounds of the scene, not of the signal (README of the evaluation set, audio conventions): "the
# crackling of a fire", "bees buzzing", "the click of a pen", "lip smacks" map to nothing.
_SCENE_SOUND = (r"\b(?:fire|fireplace|campfire|pen|door|keyboard|typing|footsteps?|dogs?|birds?|"
                r"traffic|crowd|audience|applause|music|song|drums?|guitar|piano|waves|rain|"
                r"dishes|cutlery|cups?|bees?|insects?|flies|popcorn|fireworks?|cork|bubble\s+wrap|"
                r"balloons?|knuckles?|clapping|claps?|tongue|lip\s+smacks?|mouth\s+clicks?|"
                r"fridge|refrigerator|engine|lawnmower|vacuum|kettle|frying|sizzl\w*|radio|"
                r"thunder|truck|train|plane|airplane|aircraft|subway|fingers?|mouse|tune|melody|"
                r"drone\s+(?:flying|overhead))\b|\bhum(?:s|med|ming)?\s+(?:a|along|to\s+herself|"
                r"to\s+himself)\b")
CLIPPING = art(
    "clipping",
    P(r"\bclipp(?:ing|ed)\b(?!\s+(?:through|into|in\b))|\bclips\s+(?:badly|heavily|hard|at|on|"
      r"when)\b|\bclip\s+(?:badly|heavily|hard)\b|\bcrackl\w*|\boverdriv\w*|\boverload\w*|"
      r"\bdistort\w*|\bharsh\w*|\bfuzzy\s+(?:sound|audio|voice|distortion)|\bsquared\s+off\b|"
      r"\bcut\s+flat\b|\bflattened\s+peaks?\b|\bpeaks?\s+(?:are\s+)?(?:flattened|clipped|"
      r"cut\s+off|squashed)|\bbreaks?\s+up\b|\bcrunch\w*|\bover\s+the\s+(?:maximum|limit)\b|"
      r"\btoo\s+loud\b|\bsaturat\w*\s+(?:audio|sound|peaks|signal)|\bbuzzing\s+distortion\b"),
    flaw="", quality=True,
    exclude=r"\bcrackl\w*\s+(?:and|&)\s+pops\b(?!.*(?:loud|distort|harsh))|\b(?:below|under|"
            r"short\s+of|avoid\w*|without)\s+(?:any\s+)?clipping\b|" + _SCENE_SOUND)

HISS = art(
    "hiss",
    P(r"\bhiss\w*|\bstatic\b(?!\s+(?:image|camera|shot|background\s+image|pose|frame|expression|"
      r"discharges?|clicks?))|\bsh{2,}\b|\bs{3,}h*\b|\bhigh[- ]frequency\s+(?:noise|static|hiss)|"
      r"\bwhite\s+noise|\btape\s+noise|\bnoise\s+floor\b(?!\s*(?:is|:)?\s*(?:very\s+|quite\s+)?"
      r"(?:low|minimal|negligible|inaudible|clean))|\b(?:constant|steady|broadband|"
      r"continuous|hissing|constant\s+background|steady\s+background|continuous\s+background)\s+"
      r"noise\b|\bnoise\s+in\s+the\s+(?:pauses|"
      r"gaps|silences?)\b|\bhiss\s+noise\b"),
    quality=True,
    exclude=r"\bcrowd\s+noise\b|\btraffic\s+noise\b|\bno\s+crowd\b|\bnoise\s+(?:floor|levels?)\s*"
            r"(?:is|are|:)?\s*(?:very\s+|quite\s+|extremely\s+)?(?:low|minimal|negligible|"
            r"inaudible|clean)\b|" + _SCENE_SOUND)

BUZZ = art(
    "buzz",
    P(r"\bbuzz(?:es|ed|ing|y)?\b(?!\s+distortion)|\bhum(?:s|ming|med)?\b|\bdron(?:e|ing)\b|"
      r"\belectrical\s+(?:interference|noise|hum|tone)|\blow[- ](?:frequency|pitched)\s+"
      r"(?:tone|noise|hum|rumble|drone|buzz)|\bmains\s+hum|\b(?:50|60)\s*hz\b|\brumbl\w*|"
      r"\bground\s+loop\b|\bsteady\s+low\s+tone\b|\blow,?\s+(?:steady|constant)\s+tone\b"),
    quality=True,
    exclude=r"\bbuzzing\s+distortion\b|" + _SCENE_SOUND)

POPS = art(
    "pops",
    P(r"\bpops?\b(?!\s+(?:out|up|music|song))|\bpopping\b(?!\s+in)|\bclick(?:s|ing)?\b|"
      r"\b(?:audio|sound|digital)\s+glitch\w*|\babrupt\s+(?:sounds?|noises?|transients?|bursts?)|"
      r"\b(?:a|an|one|two|tiny|small|sharp|audible|little)\s+snaps?\b|\bsnaps?\s+(?:in|at|between|"
      r"sounds?)\b|"
      r"\bsharp\s+(?:transients?|spikes?|clicks?|sounds?)|\bsudden\s+(?:spikes?|bursts?|noises?|"
      r"clicks)|\bdropouts?\b|\btransients?\b|\bstatic\s+discharges?\b|"
      r"\bdiscontinuit\w*|\bshort,?\s+(?:sharp\s+)?bursts?\b|\bglitch\w*\s+(?:in|between)\s+"
      r"(?:the\s+)?(?:audio|words|speech)|\btiny\s+glitches\b"),
    exclude=_SCENE_SOUND, quality=True)

SIGNAL = {a.key: a for a in (BLURRINESS, BLOCKINESS, NOISE, BANDING, COLOR_INCONSISTENCY,
                             BLENDING_ARTIFACTS, LIGHTING_INCONSISTENCY, UNNATURAL_TEXTURE,
                             TEMPORAL_ARTIFACTS, FLICKER, CLIPPING, HISS, BUZZ, POPS)}
