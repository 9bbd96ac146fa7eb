"""v2 lexicon, semantic artifacts of people and speech (TriDF appendix C, table 6: human
biology, prosody; plus the benchmark's audio-visual desync and emotional contradiction).

Described more often than named: "her lips move a beat after the words" (desync), "she sounds
cheerful while announcing a death" (emotion), "the dance steps have no weight" (movement), "the
thumb emerges from the back of the hand" (anatomy). Rule kinds: `patterns.py`.
"""
from __future__ import annotations

from leaderboard.judges.mapping.patterns import BAD, BODY, CONTRAST, NEG, A, C, P, S, art
from leaderboard.judges.mapping.versions import since, until

_ANAT_QUAL = (
    r"\bdistort\w*|\bdeform\w*|\bmalform\w*|\bmisshap\w*|\bextra\b|\badditional\b|\bmissing\b|"
    r"\bfused\b|\bfuse[sd]?\b|\bmerg\w*|\btwist\w*|\belongat\w*|\bstretch\w*|\basymmetr\w*|"
    r"\bmissing\b|"
    r"\bdisproportion\w*|\btoo\s+(?:many|few|long|short|large|small|big)\b|"
    r"\b(?:bent|bends?|bending)\s+(?:in\s+two|three|the\s+wrong|backwards|at\s+an?\s+impossible)|"
    r"\bcontort\w*|\bmangled\b|\bwarp\w*|\bwrong\s+(?:number|way|side|place)\b|"
    r"\bimplausib\w*|\bimpossib\w*|\babnormal\w*|\bduplicat\w*|\bmelt\w*|\bunhinge\w*|"
    r"\bdifferent\s+(?:sizes?|lengths?|shapes?)\b|\bblend\w*\s+together\b|\binto\s+(?:a\s+single|"
    r"one)\s+(?:\w+\s+)?(?:mass|blob|shape|lump)\b|\b(?:longer|shorter|larger|smaller|bigger)\s+"
    r"than\b|\bshaped\s+irregularly\b|\birregular(?:ly)?\s+(?:shaped|blobs?)\b|\bnot\s+round\b|"
    r"\bblobs?\b|\bstar-shaped\b|\bindistinct\b|\b(?:oddly|strangely|wrongly|lower|higher)\s+"
    r"attached\b|\bplaced\s+on\s+(?:her|his|their)\s+(?:neck|chin|cheek|forehead|shoulder|jaw|"
    r"chest|back)\b|\bemerges?\s+from\b|\bgrows?\s+from\b|"
    r"\bcontinues?\s+into\b|\bonly\s+(?:one|two|three|four)\s+(?:fingers|toes|hands|arms|legs)\b|"
    r"\btwo\s+left\b|\btwo\s+right\b|\bthree\s+(?:legs|arms|hands|eyes|ears)\b|"
    r"\b(?:six|seven|4|6|three|four)\s+fingers\b|\bmitten-?like\b|\blosing\s+the\s+fingers\b|"
    r"\b180\s+degrees\b|\bindependently\s+of\b|\bunnatural\s+(?:shape|proportion|angle|length|"
    r"size|number)\w*|\bextra\s+joint\b|\btoo\s+many\s+knuckles\b|\bthree\s+times\b|"
    r"\bmuch\s+further\s+than\b|\bwithout\s+individual\s+teeth\b|"
    r"\binhuman\b|\binto\s+the\s+(?:nostril|cheek|neck|skin|jaw|arm)\b|\bseems?\s+to\s+"
    r"continue\b|\bbelly\s+buttons\b")
ANATOMICAL_INCONSISTENCY = art(
    "anatomical_inconsistency",
    C(rf"\b(?:{BODY})\b", _ANAT_QUAL),
    P(r"\banatom\w*\s+(?:inconsisten|error|flaw|issue|problem|anomal|implausib|incorrect|abnormal|"
      r"distort)\w*|\b(?:extra|missing|fused|sixth|additional)\s+(?:finger|limb|arm|leg|toe|hand|"
      r"tooth|teeth|ear|joint|thumb)\w*|\bsix\s+fingers\b|\b(?:implausible|impossible|distorted|"
      r"incorrect|wrong)\s+anatomy\b|\btwo\s+(?:left|right)\s+(?:hands|feet)\b|"
      r"\btwo\s+belly\s+buttons\b|\b(?:three|four|five|six)\s+(?:legs|arms|hands|ears|eyes|"
      r"thumbs)\b(?!\s+(?:of|on)\s+(?:the|a)\s+(?:chair|table|stool|robot|statue))|"
      r"\b(?:six|seven|eight|4|6|7)\s+fingers\b|\bonly\s+(?:one|two|three|four)\s+(?:fingers|"
      r"toes)\b"),
    A(r"\b(?:no|without|missing\s+(?:a|its|the|her|his))\s+(?:\w+\s+)?(?:thumbs?|fingers?|"
      r"collarbone|ears?|nose|teeth|hand|arm|leg)\b(?!\s+(?:issues?|problems?))|"
      r"\b(?:collarbone|thumb|finger|ear|hand|arm|leg|tooth|teeth)\s+(?:is|are)\s+missing\b"),
    exclude=r"\breflection\w*|\bshadow\w*|\bout\s+of\s+(?:sync|step)\b|\b(?:bracelet|ring|"
            r"watch|earrings?|necklace|glasses|strap|sleeve|glove|mitten)s?\b(?!-like)|"
            r"\bcatch\s?lights?\b|\bhighlights?\b|\bsparkle\b|\bmakeup\b|"
            r"\b(?:chair|table|stool|bench|desk|bed|sofa|couch|tripod|robot|statue|spider|dog|"
            r"cat|horse|animal)s?\s+(?:has|have|had|with)\s+(?:\w+\s+)?(?:legs|arms)\b|"
            r"\bmerges?\s+into\s+the\s+(?:background|wall)|\bgaze\b|\blook\w*\s+(?:in|at)\s+"
            r"(?:slightly\s+)?different\s+(?:directions|points|depths)")

_EXPR = (r"\bexpressions?\b|\bsmil\w*|\bfrown\w*|\bgrin\w*|\bfacial\s+(?:movements?|muscles?|"
         r"animation|emotions?|expressions?)|\beyebrows?\b|\bbrows?\b|\bcheeks\b|"
         r"\blaugh\w*\s+on\s+the\s+face\b")
_EMO_ADJ = (r"\b(?:happy|cheerful|upbeat|joyful|jubilant|bright|chirpy|perky|pleased|playful|"
            r"giggly|excited|enthusiastic|amused|amusement|sad|sadness|mournful|sorrowful|"
            r"tearful|crying|bored|boredom|tired|detached|indifferent|uninterested|irritated|"
            r"annoyed|angry|anger|calm|calmly|neutral|cold|emotionless|sincere|warm|friendly|"
            r"casual|serious|solemn|apologetic|hesitant|relaxed|cheery|gleeful|pleasant|"
            r"terrified|scared|afraid|fear|shocked|astonish\w*|surprised|beaming|smiling|"
            r"laughing|laughs|laughter|miserable|distress\w*|grieving|grief|joy|excitement|"
            r"urgency|alarm|panic|sarcastic|serene|content|smile|grin|screams?|screaming)\b")
_CONTEXT = (r"\b(?:context|situation|setting|scene|occasion|content|message|words|saying|says|"
            r"said|describ\w*|talk\w*\s+about|story|news|report\w*|announc\w*|apolog\w*|"
            r"condolence|eulogy|funeral|death|died|passed\s+away|loss|accident|crash|disaster|"
            r"letter|greeting|warning|threat|insults?|comedy|joke|meeting|dinner|party|"
            r"playground|trophy|supposed\s+to|out\s+of\s+place|mourners|reading|wedding|"
            r"celebrat\w*|birthday|injury|proposal|proposing|complaint|layoffs|breach|"
            r"\"[^\"]{3,}\")")
UNNATURAL_EXPRESSIONS = art(
    "unnatural_expressions",
    C(_EXPR, BAD + r"|\bstiff\w*|\bfrozen\b|\bfixed\b|\bblank\b|\bforced\b|\bexaggerat\w*|"
      r"\bemotionless\b|\blifeless\b|\brigid\b|\bmask-like\b|\brobotic\b|\binappropriate\b|"
      r"\beerie\b|\bcreepy\b|\buncanny\b|\bcartoon\w*|\bgrotesque\b|"
      r"\bout\s+of\s+(?:place|context)\b|\bnot\s+in\s+line\b|\btoo\s+wide\b|\bbarely\s+"
      r"changes?\b|\bnever\s+changes?\b|\bmotionless\b|\b(?:stay|stays|remain|remains)\s+"
      r"(?:completely\s+|perfectly\s+)?(?:still|flat|motionless|frozen|fixed|the\s+same|neutral)\b|"
      r"\b(?:completely|perfectly)\s+still\b|\bconstant\b|"
      r"\bsame\s+(?:mild\s+)?(?:smile|expression)\b|\brepeated\b|\blag\s+behind\b|"
      r"\bdoesn't\s+(?:touch|reach)\s+the\s+eyes\b|\bdon't\s+participate\b|\btell\s+different\b|"
      r"\bshoot\s+up\s+and\s+down\b|\blimited\s+to\b|\bonly\s+after\b|"
      r"\bdoesn't\s+read\b|\b(?:does\s+not|doesn't|don't|do\s+not)\s+(?:fit|move|change)\b|"
      r"\bfrozen\s+in\b|\basymmetric\w*|\bnothing\s+else\s+in\s+the\s+face\b" + since(3,
      r"|\bbarely\s+(?:moves?|reacts?|changes?)\b|\b(?:stay|stays|remain|remains)\s+put\b|\b(?:don't|do\s+not|"
      r"doesn't|does\s+not|never)\s+(?:lift|crease|wrinkle|take\s+part|react|join\s+in)\b|"
      r"\bdetached\s+from\b|\bno\s+trace\s+of\b|\bisn't\s+a\s+trace\s+of\b|\bpuppet\w*")),
    P(r"\bexpressionless\b|\bemotionless\s+face\b|\bpoker[- ]faced?\b|\bmask-like\s+(?:face|"
      r"quality)\b|\bfrozen\s+(?:smile|face|expression|in\s+a\s+\w+\s+smile)\b|\buncanny\s+"
      r"(?:smile|expression|face)\b|\bsmile\s+(?:looks|is|seems)\s+(?:\w+\s+)?(?:pasted|painted|"
      r"fake|forced|stiff|frozen)\b|\bthe\s+eyes\s+(?:and\s+cheeks\s+)?(?:are\s+)?(?:completely\s+"
      r")?neutral\b|\beyes\s+(?:don't|do\s+not)\s+participate\b"),
    S(r"\b(?:face|facial|expression|smil\w*|grin\w*|look(?:s|ed)?|beaming|frown\w*|brows?|"
      r"eyebrows)\b[^.!?]{0,60}?" + _EMO_ADJ,
      _CONTEXT + r"[^.!?]*?(?:" + CONTRAST + r"|\bat\s+(?:a|what)\b|\bdoesn't\s+fit\b)|(?:" +
      CONTRAST + r"|\bat\s+(?:a|what)\b|\bsupposed\b)[^.!?]*?" + _CONTEXT,
      unless=r"\b(?:voice|tone\s+of\s+voice|vocal|sounds|audio)\b"),
    exclude=r"\bvoice\b[^.!?]{0,40}\b(?:cheerful|happy|upbeat|sad|bored|calm)\b|\bface\s+"
            r"(?:region|boundary|mask|swap\w*|texture|edges?|outline)|\bswapped\s+face\b|"
            r"\bface\s+(?:is|looks|becomes)\s+(?:blurr|smear|soft|pinker|noisy|grainy|lit)|"
            r"\bfacial\s+features\s+(?:also\s+)?change|\bfaces?\s+(?:subtly\s+)?changes?\s+"
            r"identity|\bface\s+(?:has|shows)\s+(?:a\s+)?(?:doll|pink|warm|heavy|sandy)|"
            r"\blit\b|\blighting\b")

_EYES = (r"\bgaze\w*|\beye\s+(?:contact|direction|movements?|line|focus)\b|\beyes\b|\beye\b|"
         r"\bpupils?\b|\birises\b|\biris\b|\bblink\w*|\bstar(?:e|es|ing)\b|\beyelids?\b|"
         r"\blids\b")
UNNATURAL_GAZE = art(
    "unnatural_gaze",
    C(_EYES,
      r"\bunnatural\w*|\brobotic\w*|\bfixed\b|\bvacant\b|\blifeless\b|\bdead\b|\bglassy\b|"
      r"\bnever\b|\brarely\b|\bhardly\s+ever\b|\binfrequent\w*|\bstiff\w*|\bfrozen\b|"
      r"\bdifferent\s+(?:directions?|depths|points?)\b|\bmisalign\w*|\bcross(?:-?eyed|ed)\b|"
      r"\bwander\w*|\bunfocused\b|\bempty\b|\bstaring\b|\bwall-?eyed\b|" + NEG +
      r"(?:move|blink|focus|track|follow|point|look|converge|leave)\w*|\bnot\s+(?:\w+\s+)?"
      r"(?:looking|focused|aligned)\b|\btoo\s+(?:often|frequent\w*|rare\w*|much|little|slow\w*|"
      r"quick\w*|fast|regular\w*|far)\b|\bexcessive\w*|\babnormal\w*|\bodd\w*|\bstrange\w*|"
      r"\bweird\w*|\binconsisten\w*|\bmismatch\w*|\bwrong\b|\buncanny\b|\boff\b|\blocked\b|"
      r"\bperfectly\s+(?:regular|centred|centered|periodic)\b|\bregular\s+(?:\d|intervals)|"
      r"\blike\s+a\s+(?:timer|clock|metronome)\b|\bonly\s+(?:once|twice|a\s+single|with\s+one)\b|"
      r"\bone\s+eye\s+at\s+a\s+time\b|\bincomplete\w*|\bhalf(?:way|-?\s*blinks?|\s+way|"
      r"-?closed|-?lowered|-?open)\b|"
      r"\bpast\s+(?:the\s+viewer|it|him|her|the\s+camera)\b|\bat\s+nothing\b|\broll\w*\b|"
      r"\bdrifts?\s+outward\b|\bdiverge\w*|\babsent\b|\bmissing\b|\bnone\s+for\b|"
      r"\bone\s+(?:at\s+the\s+viewer|looks\s+straight)\b|\bother\s+(?:one\s+)?(?:looks|drifts|"
      r"somewhere)\b|\bunequal\b|\bin\s+wrong\s+direction\b|\bnot\s+at\s+the\s+camera\b|"
      r"\bnever\s+leaves\b|\bseldom\b|\bbarely\b|\bonce\s+every\b"),
    A(r"\b(?:no|never|rarely|seldom|infrequent|lack\s+of|absence\s+of|without|zero|hardly\s+ever|"
      r"hardly\s+any|barely)\s+(?:\w+\s+)?blink\w*|" + NEG + r"blink\w*|\bblink\w*\s+(?:is|are)"
      r"\s+(?:absent|missing|rare)\b|\bcross-?eyed\b|\blazy\s+eye\b|\bdead\s+eyes\b|"
      r"\bglassy\s+eyes\b|\bvacant\s+(?:stare|eyes|gaze|look)\b|\bblank\s+stare\b|"
      r"\beyes\s+(?:don't|do\s+not)\s+look\s+at\s+the\s+same\b"),
    flaw="fixed steady stable constant even",
    exclude=r"\beyes?\s+(?:region\s+)?(?:is|are|look|looks)\s+(?:\w+\s+)?(?:blurr\w*|soft|"
            r"grainy|noisy)|\bpupils?\s+(?:are\s+)?shaped\b|"
            r"\birises\s+are\s+not\s+round\b|\breflections?\s+in\s+the\s+(?:pupils|eyes)\b|"
            r"\bvisible\s+in\s+her\s+eyes\b|\bcrow's\s+feet\b|\bnarrowed\b|\bthe\s+eyes\s+and\s+"
            r"cheeks\b|\beyes\s+don't\s+participate\b|\bdoesn't\s+touch\s+the\s+eyes\b|"
            r"\beyes\s+look\s+sad\b|\bwide\s+eyes\b|\bteary\s+eyes\b|\beye\s+region\s+is\b")

_MOVE = (r"\bmov(?:e|es|ing|ement|ements)\b|\bmotions?\b|\bgestur\w*|\bgait\b|\bwalk\w*|"
         r"\bhead\s+(?:turns?|tilts?|nods?|pose|movements?|bobs?)\b|\bnods?\b|\bposture\b|"
         r"\bbody\s+language\b|\brunning\b|\bdanc\w*|\bstride\b|\bsteps\b|\bjump\w*|\bspin\b|"
         r"\bclimbs?\b|\bswing\w*|\bpush-?ups?\b|\bcrowd\b|\bpeople\b|\bturns?\b")
UNNATURAL_MOVEMENT = art(
    "unnatural_movement",
    C(_MOVE,
      r"\bunnatural\w*|\bjerk\w*|\brobotic\w*|\bstiff\w*|\brigid\w*|\bmechanical\w*|\bfloaty\b|"
      r"\bglid\w*|\bslid(?:e|es|ing)\b|\bteleport\w*|\bimplausib\w*|\bimpossib\w*|\babrupt\w*|"
      r"\bstutter\w*|\berratic\w*|\bchoppy\b|\bwooden\b|\bpuppet-?like\b|\bawkward\w*|"
      r"\bweird\w*|\bstrange\w*|\bodd\w*|\bunrealistic\w*|\bdef(?:y|ies)\s+physics\b|"
      r"\bphysically\s+(?:impossible|implausible)\b|\bnot\s+(?:\w+\s+)?(?:smooth|fluid|natural|"
      r"physical\w*|realistic)\b|\black\w*\s+(?:\w+\s+)?(?:inertia|weight|momentum|bounce)\b|"
      r"\bno\s+(?:weight|effort|inertia|momentum|bounce)\b|\bwithout\s+(?:any\s+)?(?:weight|"
      r"effort|stepping|bounce|the\s+natural)\b|\brepetitive\b|\bloop\w*|\binconsisten\w*|"
      r"\bfrozen\b|\b(?:don't|do\s+not|doesn't|does\s+not)\s+(?:move|swing)\b|\bconstant\s+"
      r"speed\b|\brhythmically\b|\bmetronome\b|\bhydraulic\b|\bice\s+skat\w*|\bconveyor\b|"
      r"\bpaddle\b|\btwists?\s+independently\b|\brotate\s+almost\b"),
    P(r"\bjerky\b|\brobotic\s+(?:movements?|motions?|gestures?)\b|\bpuppet-?like\b|"
      r"\bmoonwalk\w*|\bfeet\s+slid\w*|\bdef(?:y|ies)\s+(?:gravity|physics)\b|\bglid(?:es|ing)\s+"
      r"(?:like|forward|across|along)\b|\bfloaty\b|\bno\s+stepping\s+rhythm\b|\bbobs\s+"
      r"rhythmically\b|\blike\s+(?:a|an)\s+(?:metronome|puppet|robot|hydraulic\s+lift|"
      r"conveyor)\b|\bweightless\w*|\bno\s+weight\b|\bbobble-?head\b|\bmechanical\s+nods?\b|\bnods?\s+(?:are\s+)?"
      r"(?:jerky|mechanical|robotic)\b|\bhave\s+no\s+weight\b"),
    A(r"\b(?:arms?|legs?|body|people|crowd|head)\s+(?:don't|do\s+not|doesn't|does\s+not|never)\s+"
      r"(?:move|swing|turn|bounce)\b|\b(?:neck|body|torso|shoulders)\s+(?:stays|remains|is|are)\s+"
      r"(?:perfectly\s+|completely\s+)?(?:still|frozen|static|rigid|motionless)\b|\bwithout\s+(?:the\s+)?natural\s+(?:up-and-down\s+)?"
      r"bounce\b|\bwith\s+no\s+effort\b"),
    flaw="",
    exclude=r"\bcamera\s+(?:moves|pans|movement)\b|\bmouth\s+(?:movements?|continues)\b|"
            r"\blip\s+movements?\b|\beyes\s+move\b|\bmovements?\s+of\s+the\s+(?:lips|mouth)\b|"
            r"\bas\s+(?:she|he)\s+moves\b|\bwhen\s+(?:she|he|the\s+\w+)\s+moves\b|"
            r"\bmotion\s+continuity\b|\bhead\s+(?:is\s+)?steady\b|\bbody\s+(?:is\s+)?original\b|"
            r"\bduring\s+fast\s+movements\b|\bfast\s+motion\b|\brelative\s+to\s+the\s+head\b",
    context=None)

_VOICE = (r"\b(?:voice|voices|speech|speaking|speaker|speaks?|delivery|intonation|prosod\w*|"
          r"pitch|tone|cadence|pacing|pace|melody|syllables?|words?|sentences?|phrases?|"
          r"narrat\w*|reading|read|question|says|said|talk\w*|pauses?|breath\w*|stress|emphasis|"
          r"tts|synthesi[sz]er|inflection|timing|utterance|accent|sounds?|audio|register)\b")
UNNATURAL_PROSODY = art(
    "unnatural_prosody",
    C(r"\bspeech\b|\bvoices?\b|\bspeaker\b|\bwords\b|\bsentences?\b|\bphrases?\b|"
      r"\bnarration\b|\bnarrator\b|\breading\b|\bdigit\b|\bsyllables?\b" +
      since(3, r"|\b(?:each|every)\s+(?:word|phrase)\b"),
      r"\bmonoton\w*|\bflat\w*|\brobotic\w*|\bmechanical\w*|\blifeless\b|\bstilted\b|"
      r"\bchoppy\b|\bmachine-?like\b|\bsing-?song\b|\bstaccato\b|\bmetronomic\b|\brobot\b|"
      r"\bevenly\s+spaced\b|\b(?:perfectly|unnaturally|too|strikingly|very)\s+(?:even|regular|"
      r"constant|uniform|steady|timed|calm)\b|\bsame\s+(?:pitch|note|melod\w*|shape|rising|"
      r"falling|pace|duration|length|register)\b|\bequal\s+(?:stress|weight|emphasis)\b|"
      r"\bno\s+(?:\w+\s+)?(?:rise|variation|inflection|emphasis|melody|breaths?|ups\s+and\s+downs|"
      r"pitch\s+reset)\b|\bnever\s+(?:speeds|slows|wavers|pauses)\b|\bunnatural\w*|"
      + until(3, r"\bsynthetic\w*|\bartificial\w*|\bcomputer-?generated\b|") +
      r"\bunemotional\b|\bemotionless\b|"
      r"\bconcatenated\b|\bidentical\b|\bresets?\b|\bunbroken\b|\brushed\b|\bdrawn\s+out\b|"
      r"\bmiddle\s+of\s+(?:words|phrases)\b|\bstretched\b" + since(3, r"|\bequally\s+spaced\b|"
      r"\blike\s+a\s+(?:typewriter|metronome|ticking\s+clock)\b")),
    C(r"\bprosod\w*|\bintonation\w*|\bcadence\b|\brhythm\w*|\bpitch\w*|\bpacing\b|\bpace\b|"
      r"\bdelivery\b|\bstress\b|\bemphasis\b|\bpauses?\b|\bspeaking\s+"
      r"(?:style|rate)\b|\bspeech\s+rate\b|\bmelody\b|\btiming\b|"
      r"\bcontour\b|\binflection\b",
      r"\bmonoton\w*|\bflat\w*|\brobotic\w*|\bmechanical\w*|\bunnatural\w*|\bsynthetic\w*|"
      r"\bartificial\w*|\blifeless\b|\bstilted\b|\bchoppy\b|\bodd\w*|\bstrange\w*|\buneven\w*|"
      r"\boff\b(?!\s+(?:camera|screen))|\bwrong\w*|\bweird\w*|\bunexpected\b|"
      r"\birregular\w*|\bawkward\w*|\black\w*\s+(?:\w+\s+)?(?:variation|emotion|inflection|"
      r"expressiveness|intonation|melody)\b|\bcomputer-?generated\b|\bmachine-?like\b|"
      r"\bmisplaced\b|\bsing-?song\b|\bstaccato\b|\buniform\b|\bconstant\b|\bwrong\s+"
      r"(?:syllables?|words?|places?)\b|\bmetronomic\b|\bevenly\s+spaced\b|\b(?:perfectly|"
      r"unnaturally|too|strikingly|very)\s+(?:even|regular|constant|uniform|steady|timed|calm)\b|"
      r"\bsame\s+(?:pitch|note|melod\w*|shape|rising|falling|pace|duration|length|register)\b|"
      r"\bidentical\b|\bequal\s+(?:stress|weight|emphasis)\b|\bas\s+much\s+emphasis\b|"
      r"\brushed\b|\bdrawn\s+out\b|\bweird\b|\bmiddle\s+of\s+(?:words|phrases)\b|"
      r"\bfixed\s+intervals\b|\bresets?\b|\bat\s+random\b|\bwithout\s+regard\b|\beven\b|"
      r"\bstable\b|\bregular\b|\brepeats\b|\bdownstep\b|\bsmoothness\b|\bone\s+note\b|"
      r"\bno\s+(?:\w+\s+)?(?:rise|variation|change|inflection|emphasis|expression|melody|"
      r"breaths?|pauses|energy|ups\s+and\s+downs|pitch\s+reset)\b|\bnever\s+(?:speeds|slows|"
      r"wavers|breaks|pauses)\b|\bin\s+the\s+wrong\s+places\b|\bdoesn't\s+mark\b|\bsame\s+"
      r"(?:up-down\s+)?pattern\b|\bunbroken\b|\blands\s+on\s+the\s+wrong\b|\bemotionless\b|"
      r"\bunemotional\b|\bno\s+natural\b|\bperfectly\s+timed\b|\bconcatenated\b" + since(3, r"|"
      r"\bequally\s+spaced\b|\blike\s+a\s+(?:typewriter|metronome|ticking\s+clock)\b|"
      r"\bsame\s+(?:rise|fall|melody|contour|cadence|rhythm)\b|"
      r"\bcop(?:y|ies)\s+(?:it\s+)?exactly\b|"
      r"\bmetronome-?like\b|\brehearsed\s+pattern\b")),
    P(r"\bmonoton\w*|\brobotic\s+(?:voice|speech|delivery|tone|sound\w*|cadence|intonation)\b|"
      r"\bflat\s+(?:intonation|delivery|voice|affect|melody|tone)\b|\bsounds?\s+(?:robotic|"
      r"mechanical|" + until(3, r"synthetic|") +
      r"like\s+(?:a\s+)?(?:robot|machine|text-to-speech|tts|speech\s+"
      r"synthesizer))\b|\bunnatural\s+(?:prosody|intonation|pauses?|rhythm|cadence|stress|pitch|"
      r"pacing|speech)\b|\bweird\s+pauses\b|\bmetronomic\b|\bsing-?song\b|\btts-like\b|"
      r"\bread\s+by\s+a\s+(?:speech\s+synthesizer|machine|robot)\b|\blike\s+a\s+(?:machine|"
      r"robot)\s+reading\b|\bstress\s+(?:is\s+)?(?:placed\s+)?on\s+the\s+wrong\b|"
      r"\b(?:voice|speech)\s+(?:is|sounds)\s+(?:\w+\s+)?(?:robotic|mechanical|monotone|flat)\b|"
      r"\btrain\s+announcement\b|\bdoesn't\s+sound\s+human\b|\blike\s+a\s+(?:tts|text-to-speech|"
      r"synthetic|computer|robot|machine)\s+voice\b"),
    A(since(3, r"\bnot\s+(?:a\s+single|one)\s+(?:audible\s+)?breath\b|") +
      r"\b(?:no|without|lacks?|lacking|absence\s+of|almost\s+no|little|zero)\s+(?:\w+\s+){0,2}?"
      r"(?:variation|change\s+in\s+pitch|pitch\s+(?:variation|changes?)|inflection|intonation|"
      r"emphasis|melody|ups\s+and\s+downs|rise|rising\s+tone|pauses?\s+for\s+breath\w*|"
      r"breath\w*|hesitations?|fillers|pitch\s+reset|natural\s+pauses|expression|emotional\s+"
      r"inflection)\b|\b(?:never|doesn't|does\s+not|don't)\s+(?:\w+\s+)?(?:takes?\s+a\s+breath|"
      r"pause\s+for\s+breath|speeds?\s+up|slows?\s+down|wavers?|rises?)\b|\bbreaths?\s+(?:are\s+)?"
      r"(?:absent|missing)\b|\b(?:aren't|are\s+not)\s+lengthened\b|\bwithout\s+the\s+rising\b|"
      r"\b(?:questions?|sentences?|statements?)\s+(?:don't|do\s+not|doesn't|does\s+not|never)\s+"
      r"(?:go|goes|rise|rises|end)\s+(?:up|higher|with\s+a\s+ris\w*)\b"),
    flaw="even stable steady consistent smooth smoothly uniform clean perfect clear fluid",
    context=_VOICE,
    exclude=r"\bfacial\s+expression\b|\bexpression\s+(?:of|on)\s+the\s+face\b|\bpeaks?\b|"
            r"\bflat\s+(?:\w+\s+)?accent\b|\bmonoton\w*\s+(?:hum|buzz|drone|beep|whine)\b|"
            r"\bloud\s+(?:words|parts|passages|syllables)\b|\bclip\w*|\bhum\b|\bhiss\w*|"
            r"\bclicks?\b|\bdistort\w*|\bblink\w*|\bstepping\s+rhythm\b|\brhythm\s+of\s+(?:the\s+)?"
            r"(?:blink|steps|walk|movement)")

AUDIO_VISUAL_DESYNC = art(
    "audio_visual_desync",
    P(r"\bout\s+of\s+sync\b|\bout\s+of\s+step\b|\bdesync\w*|\bunsynchroni[sz]\w*|\basynchron\w*|"
      r"\b(?:audio|sound|speech|voice)\s+(?:lags?|leads?|delay\w*|offset|comes\s+first|arrives\s+"
      r"(?:before|first|early|late))\b|\b(?:lag|delay|offset)\w*\s+between\s+(?:the\s+)?(?:audio|"
      r"sound|speech|lips?|mouth|video)\b|\bmismatch\w*\s+between\s+(?:the\s+)?(?:audio|sound|"
      r"speech|voice|lips?|mouth)\b|\blip[- ]?sync\w*\s+(?:is\s+)?(?:off|poor|bad|wrong|broken|"
      r"drift\w*|error\w*|issue\w*|problem\w*|mismatch\w*|fail\w*|lag\w*|delay\w*|inconsisten\w*)|"
      r"\blip[- ]?sync\s+off\b|"
      r"\b(?:lips?|mouth)\s+(?:\w+\s+){0,2}(?:a\s+beat\s+)?(?:after|behind)\s+"
      r"(?:the\s+)?(?:words|audio|speech|voice|sound)\b|\bfalls?\s+behind\s+the\s+audio\b|"
      r"\btrail(?:s|ing)?\s+the\s+(?:audio|speech|voice)\b|\bmouth\s+(?:continues\s+to\s+move|"
      r"is\s+still\s+moving|keeps\s+moving|closes\s+while|stays\s+(?:partly\s+)?(?:open|closed))|"
      r"\bnot\s+accompanied\s+by\s+lip\b|\bvisemes?\b|\bdubbed\b|\bbad\s+dub\w*"),
    C(r"\blips?\b|\bmouth\w*|\blip\s+movements?\b|\bmouth\s+(?:shapes?|movements?|opening)\b|"
      r"\bfacial\s+expressions\s+lag\b",
      r"(?:do|does|did|is|are)\s*(?:not|n't)\s+(?:\w+\s+)?(?:match|sync|synchroni[sz]|follow|"
      r"align|correspond|line\s+up|fit)\w*|\bdont\s+(?:match|follow)\b|\bmismatch\w*|"
      r"\bmisalign\w*|\blag\w*|\bdelay\w*|\bahead\s+of\b|\bbehind\b|\btrail\w*|\bafter\s+"
      r"(?:the\s+)?(?:words|sentences|speech|audio)|\bwhile\s+(?:words|the\s+audio)|"
      r"\bout\s+of\s+(?:sync|step)\b|\bphonemes?\b|\bloudness\b|\bwhen\s+(?:she|he)\s+says\b|"
      r"\bwide\s+open\s+on\s+whispers\b|\bbefore\s+the\s+mouth\b"),
    flaw="",
    exclude=r"\blip[- ]?sync\s+(?:models?|manipulation|attempt|deepfakes?)\b|\bcan(?:no|')?t\s+"
            r"(?:\w+\s+)?(?:check|assess|judge)\b|\bshadow\w*\s+(?:on\s+the\s+wall\s+)?"
            r"(?:is\s+larger\s+and\s+)?moves?\s+out\s+of\s+sync|\bshadow\b")

_VOICE_EMO = (r"\b(?:voice|tone|delivery|sounds?|sounding|laugh\w*|chuckl\w*|giggl\w*|crying|"
              r"sobbing|scream\w*|shout\w*|yell\w*|affect|narrator|emotion\w*|vocal|intonation)\b")
# Emotional valence of the voice and of what is said: a cheerful voice on sad content (or the
# reverse) is the contradiction, even without a contrast word ("reports a disaster in a bright,
# cheerful voice").
_POS_EMO = (r"\b(?:happy|happiness|cheerful|upbeat|joyful|jubilant|bright|chirpy|perky|pleased|"
            r"playful|giggly|excited|enthusiastic|amused|laughing|laughs|laughter|chuckl\w*|"
            r"giggl\w*|smiling|beaming|warm|friendly|casual|relaxed|cheery|gleeful|pleasant|light|"
            r"lively|joy|delighted|sincere" + since(3, r"|giddy|delight|merry|jolly|jovial|chipper|"
            r"bubbly|elated|gleeful|flirtatious|flirty|sunny|breezy|carefree|amused|smiley") +
            r")\b")
_NEG_EMO = (r"\b(?:sad|sadness|mournful|sorrowful|tearful|crying|sobbing|bored|tired|detached|"
            r"indifferent|uninterested|irritated|annoyed|angry|cold|flat|neutral|emotionless|"
            r"lifeless|miserable|distress\w*|serious|solemn|gloomy|depressed|unemotional|"
            r"disinterested|apathetic|hesitant|apologetic|soft" + since(3, r"|sleepy|drowsy|"
            r"lethargic|listless|deadpan|dull|weary|dead|glum|sombre|somber|subdued|muted|level|"
            r"measured") + r")\b")
_NEG_CONTENT = (r"\b(?:disaster|death|died|dead|dying|funeral|eulogy|loss|grie\w*|mourn\w*|"
                r"resign\w*|fired|bankrupt\w*|divorce|hospital|war|attack|victims?|failure|"
                r"crash|accident|injury|injured|pain\w*|apolog\w*|sorry|condolences?|layoffs?|"
                r"threat\w*|warning|danger\w*|fire|help|terrified|terror|complaint|breach|tragic|"
                r"tragedy|insults?|furious|fight|combative|sob\w*|wept|weeping|urgent|emergency|"
                r"sad\s+(?:words|content|news|message)|bad\s+news|passed\s+away|illness|cancer|"
                r"sarcastic|devastated|horrible|awful|scream\w*\s+for\s+help" +
                since(3, r"|worst|harrowing|"
                r"diagnos\w*|arrest\w*|flood\w*|terrif\w*|furious|outraged|heartbroken|"
                r"sobbing|crying|tears|grave|killed|murder\w*|shooting|kidnap\w*|ransom|"
                r"scared|frightened|afraid|panic\w*|robbed|evacuat\w*|earthquake|storm|"
                r"burn(?:ed|t)\s+down|destroyed|homeless|bereave\w*") + r")\b")
_POS_CONTENT = (r"\b(?:wedding|won|win|winning|lottery|best\s+day|amazing|thrilled|wonderful|"
                r"happiest|joke|comedy|birthday|propos\w*|love\s+letter|celebrat\w*|goal|concert|"
                r"trip|vacation|exciting|great\s+news|good\s+news|congratulat\w*|promotion|"
                r"baby|party|so\s+happy|excited" +
                since(3, r"|engaged|engagement|over\s+the\s+moon|"
                r"ecstatic|overjoyed|graduat\w*|reunion|surprise\s+party|holiday|prize|victory|"
                r"thrilling|hilarious|funny") + r")\b")
_MARK = (CONTRAST + r"|\bfor\s+(?:a|an|someone)\b|\bwhere\s+you'?d\b|\bsupposed(?:ly)?\b|"
         r"\byou'?d\s+expect\b")
_EMO_DENIAL_OK = r"\bemotion\w*|\bmood\b|\bsentiment\b|\bfeelings?\b|(?<!skin\s)\btone\b|\baffect\b"
EMOTIONAL_CONTRADICTION = art(
    "emotional_contradiction",
    C(_EMO_DENIAL_OK + r"|\bvoices?\b|\bdelivery\b",
      r"\bcontradict\w*|\bmismatch\w*|" + NEG + r"(?:match|fit|align|correspond|reflect|convey|"
      r"suit)\w*|\binconsisten\w*|\bincongruen\w*|\bconflict\w*|\bat\s+odds\b|"
      r"\binappropriate\b|\bopposite\b|\bmisaligned\b|\bout\s+of\s+place\b|\bcontrary\b|"
      r"\bwrong\s+emotion\b|\bdifferent\s+emotions\b|\bisn't\s+reflected\b|"
      r"\bnot\s+reflected\b|\bemotional\s+range\s+of\b"),
    P(since(3, r"\b(?:doesn't|does\s+not|didn't|did\s+not)\s+sound\s+(?:\w+\s+)?(?:sorry|sad|"
      r"upset|angry|happy|excited|scared|afraid|worried|sincere|apologetic|concerned|urgent|"
      r"frightened|furious|grieving|joyful|thrilled)\b|\bthe\s+opposite\s+of\s+what\s+the\s+"
      r"(?:moment|situation|words|content|news)\s+(?:calls|call|asks)\s+for\b|") +
      r"\bemotional(?:ly)?\s+(?:contradict|inconsisten|mismatch|incongruen)\w*|"
      r"\bemotion\s+not\s+match\b|\bwrong\s+emotion\b|\bthe\s+affect\s+doesn't\s+match\b|"
      r"\bconvey\s+different\s+emotions\b"),
    S(_VOICE_EMO + r"[^.!?]{0,60}?" + _EMO_ADJ + r"|" + _EMO_ADJ + r"[^.!?]{0,30}?\b(?:voice|"
      r"tone|delivery|laugh\w*|emotion)\b|\bno\s+(?:joy|anger|urgency|fear|excitement|"
      r"amusement|emotion|alarm|sadness)\b",
      _CONTEXT + r"[^.!?]*?(?:" + _MARK + r")|(?:" + _MARK + r"|\bdespite\b)[^.!?]*?" + _CONTEXT +
      r"|\b(?:face|facial|expression)\b[^.!?]*?(?:" + CONTRAST + r")|(?:" + CONTRAST +
      r")[^.!?]*?\b(?:face|facial|expression)\b"),
    S(_VOICE_EMO + r"[^.!?]{0,40}?" + _POS_EMO + r"|" + _POS_EMO + r"[^.!?]{0,25}?\b(?:voice|"
      r"tone|delivery)\b" +
      since(3, r"|\b(?:laughs|laughing|giggles|giggling|chuckles|chuckling)\b"),
      _NEG_CONTENT, unless=r"\bno\s+" + _POS_EMO),
    S(_VOICE_EMO + r"[^.!?]{0,40}?" + _NEG_EMO + r"|" + _NEG_EMO + r"[^.!?]{0,25}?\b(?:voice|"
      r"tone|delivery)\b|\bno\s+(?:joy|excitement|amusement|enthusiasm)\b", _POS_CONTENT),
    flaw="",
    exclude=r"\blit\b|\blight(?:ing|s)?\b|\bcolou?r\w*|\bskin\s+tone")

HUMAN = {a.key: a for a in (
    ANATOMICAL_INCONSISTENCY, UNNATURAL_EXPRESSIONS, UNNATURAL_GAZE, UNNATURAL_MOVEMENT,
    UNNATURAL_PROSODY, AUDIO_VISUAL_DESYNC, EMOTIONAL_CONTRADICTION)}
