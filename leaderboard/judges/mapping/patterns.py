"""Rule kinds and shared vocabulary of the artifact lexicon (`lexicon_signal`,
`lexicon_scene`, `lexicon_human`).

Four kinds of rule, all case-insensitive regular expressions:

- `P` (phrase): names the artifact on its own ("blurry", "posterized", "lip sync is off");
  a claim unless denied (`scope.is_denied`).
- `C` (pair): a subject term and a qualifier in one scope, in either order ("the shadows ... point
  the wrong way", "Colour: too vivid"); a claim unless either is denied. A term in the item's topic
  pairs with a qualifier anywhere in the body.
- `A` (absent): a flaw worded with a negation that the pattern itself contains ("casts no
  shadow", "never blinks", "no variation in pitch", "lacks depth"); a claim unless the sentence is
  generic. This is how a denial ("no blurring") is told from a negated claim: a cue denies a flaw
  word, and an `A` rule names what a real sample would have.
- `S` (sentence co-occurrence): two patterns anywhere in one sentence, for relations that span
  clauses ("her voice sounds upbeat *while* she describes a funeral").

An `Artifact` also carries `flaw_words` (approval words that are its flaw: "smooth" skin,
"steady" pitch), `exclude` (a scope matching it is about something else: "crowd noise" is not
image noise) and `context` (a pattern the sentence needs unless the candidates are audio-only:
prosody in a video answer must be about speech).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from leaderboard.judges.mapping.versions import Version

_F = re.I


@lru_cache(maxsize=None)
def _compile(source: str) -> re.Pattern:
    return re.compile(source, _F)


@dataclass(frozen=True)
class Rule:
    """A rule compiled for one version."""

    kind: str  # "P", "C", "A" or "S"
    a: re.Pattern
    b: re.Pattern | None = None
    unless: re.Pattern | None = None  # S only: a sentence matching it is about something else


@dataclass(frozen=True)
class RuleSpec:
    """A rule as the lexicon tables write it: pattern text with versioned fragments
    (`versions.since`), and the first version that has the rule at all (`since`)."""

    kind: str
    a: str
    b: str | None = None
    unless: str | None = None
    since: int = 0

    def build(self, v: Version) -> Rule:
        def comp(src):
            return _compile(v.resolve(src)) if src is not None else None
        return Rule(self.kind, comp(self.a), comp(self.b), comp(self.unless))


def P(pattern: str, *, since: int = 0) -> RuleSpec:
    return RuleSpec("P", pattern, since=since)


def C(term: str, qualifier: str, *, since: int = 0) -> RuleSpec:
    return RuleSpec("C", term, qualifier, since=since)


def A(pattern: str, *, since: int = 0) -> RuleSpec:
    return RuleSpec("A", pattern, since=since)


def S(first: str, second: str, *, unless: str | None = None, since: int = 0) -> RuleSpec:
    return RuleSpec("S", first, second, unless, since=since)


@dataclass(frozen=True)
class Artifact:
    """An artifact's rules compiled for one version."""

    key: str
    rules: tuple[Rule, ...]
    flaw_words: frozenset[str] = frozenset()
    exclude: re.Pattern | None = None
    context: re.Pattern | None = None
    quality: bool = False  # a benign framing ("normal sensor grain, not an artifact") denies it


@dataclass(frozen=True)
class ArtifactSpec:
    key: str
    rules: tuple[RuleSpec, ...]
    flaw_words: frozenset[str] = frozenset()
    exclude: str | None = None
    context: str | None = None
    quality: bool = False

    def build(self, v: Version, extra: tuple[RuleSpec, ...] = ()) -> Artifact:
        """The artifact as version `v` reads it, with `extra` rules appended."""
        rules = tuple(r.build(v) for r in self.rules + tuple(extra) if v.number >= r.since)
        return Artifact(self.key, rules, self.flaw_words,
                        _compile(v.resolve(self.exclude)) if self.exclude else None,
                        _compile(v.resolve(self.context)) if self.context else None,
                        self.quality)


def art(key: str, *rules: RuleSpec, flaw: str = "", exclude: str | None = None,
        context: str | None = None, quality: bool = False) -> ArtifactSpec:
    return ArtifactSpec(key, rules, frozenset(flaw.split()), exclude, context, quality)


# -- shared vocabulary ---------------------------------------------------------------------------

#: "does not", "isn't", "never" ... before a verb of normal behaviour (the flaw is its failure).
NEG = (r"(?:(?:do|does|did|is|are|was|were|has|have|can|could|will|would)\s*(?:not|n't)|dont|"
       r"doesnt|didnt|isnt|arent|cannot|never|not|no\s+longer|fails?\s+to|failing\s+to)\s+"
       r"(?:\w+\s+)?")
#: Qualifiers that make a subject term a flaw ("inconsistent", "doesn't match", "wrong").
BAD = (r"\binconsisten\w*|\bmismatch\w*|\bmis-?match\w*|" + NEG + r"(?:match|align|agree|"
       r"correspond|consistent|natural|realistic|coherent|plausible|fit|line\s+up|right|correct|"
       r"real|normal|proper|add\s+up|make\s+sense)\w*|"
       r"\bunnatural\w*|\bwrong\w*|\bincorrect\w*|\bodd\w*|\bstrange\w*|\bweird\w*|"
       r"\bconflict\w*|\bcontradict\w*|\bimplausib\w*|\bimpossib\w*|\bunrealistic\w*|"
       r"\babnormal\w*|\bartificial\w*|\bfake\b|\birregular\w*|\banomal\w*|\bunexpected\b|"
       r"\bflaw\w*|\berrors?\b|\bissues?\b|\bproblem\w*|\bdiscrepan\w*|\bdistort\w*|"
       r"\bsuspicious\w*|\bincongru\w*|\bat\s+odds\b|\bout\s+of\s+place\b|\bdisagree\w*|"
       r"\boff\b(?!\s+(?:camera|screen|the\b))")
#: A contrast inside a sentence ("lit from the left *while* the room is lit from the right").
CONTRAST = (r"\bwhile\b|\bwhereas\b|\bbut\b|\byet\b|\balthough\b|\bthough\b|\bdespite\b|"
            r"\bhowever\b|\binstead\b|\brather\s+than\b|\bunlike\b|\bcompared\s+(?:with|to)\b|"
            r"\bthan\b|\beven\s+(?:though|when|as|during)\b|\bin\s+contrast\b")
BODY = (r"hands?|fingers?|fingertips?|thumbs?|limbs?|arms?|forearms?|legs?|feet|foot|toes?|"
        r"teeth|tooth|ears?|earlobes?|necks?|torso|shoulders?|elbows?|knees?|wrists?|jaws?|"
        r"jawline|chin|skull|head|body|bodies|proportions?|joints?|nails?|fingernails?|"
        r"knuckles?|nose|nostrils?|lips?|mouth|irises|iris|pupils?|eyes?|eyeballs?|eyelids?|"
        r"eyebrows?|brows?|collarbones?|belly\s+buttons?|navel|hips?|spine|waist|forehead|"
        r"cheekbones?|palms?|heels?|ankles?|chest|breasts?|abdomen|stomach|hairline|"
        r"face\s+shape|facial\s+(?:structure|proportions?|features?)|anatomy|skeleton|bones?|"
        r"tongue|gums?|thighs?|calf|calves|mitten-like\s+hands")
OBJECT = (r"objects?|items?|props?|(?:eye|sun)?glasses|spectacles|lens(?:es)?|frames?\s+of\s+"
          r"(?:the|his|her)\s+glasses|earrings?|jewel\w*|necklaces?|chains?|bracelets?|"
          r"pendants?|rings?|wrist\s*watch\w*|watch\s+(?:face|strap|dial|hands)|the\s+watch|"
          r"clocks?|dials?|straps?|buckles?|"
          r"helmets?|hats?|caps?|hoods?|ties?|necktie|knots?|shirts?|collars?|buttons?|zippers?|"
          r"jackets?|coats?|sleeves?|belts?|shoes?|sneakers?|boots?|gloves?|bags?|handbags?|"
          r"backpacks?|purses?|handles?|leash(?:es)?|umbrellas?|canopy|shafts?|cups?|"
          r"mugs?|lids?|rims?|bottles?|plates?|bowls?|forks?|knives|knife|spoons?|scissors|"
          r"blades?|chairs?|backrests?|armrests?|tables?|desks?|couch|sofa|beds?|lamps?|"
          r"books?|book\s+covers?|phones?|smartphones?|screens?|laptops?|trackpad|keyboards?|"
          r"keys|hinges?|cars?|steering\s+wheels?|wheels?|spokes|tires?|tyres?|bicycles?|"
          r"bikes?|pedals?|cranks?|guitars?|strings?|pianos?|microphones?|mics?|"
          r"(?:microphone|mic|music|tripod)\s+stands?|"
          r"headphones?|toys?|balls?|balloons?|fences?|poles?|doors?|windows?|stair(?:case|s)?|"
          r"railings?|towers?|bridges?|baskets?|fruit|trophy|trophies|cameras?|"
          r"tripods?|badges?|wallets?|pens?|pencils?|notebooks?|vases?|candles?|cakes?|pots?|"
          r"pans?|teapots?|kettles?|boxes|box|packages?|trays?|accessor\w*|furniture|"
          r"vehicles?|instruments?|tools?|devices?|utensils?|dishes|cutlery|jars?|glass(?:es)?"
          r"|headset|earbuds?|bracelet|signpost|bench(?:es)?|shelf|shelves|racket\w*|bats?|"
          r"clothing|clothes|garments?|fabric|dress|skirt|scarf|hood|remote|"
          r"controller|cables?|cords?|wires?|ladders?|boats?|planes?|trains?|buses|bus|truck")
