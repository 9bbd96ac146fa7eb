"""The ``robustness:`` section of a pack's ``benchmark.yaml``: which suites, levels and items.

::

    robustness:
      items_per_condition: 100     # items per condition, each item in one condition (default 100)
      seed: 0                      # the subset's and the noise's seed (default 0)
      splits: [dev, test]          # splits that get degraded copies (default: every split)
      suites:                      # per modality; a modality left out gets its default suite
        image: {suite: images, version: "1", degradations: [jpeg, blur], levels: [1, 3, 5]}
        audio: {suite: audio}
        video: false               # no robustness track for this modality

Without the section, every image, video or audio modality of the pack gets its default suite
(`suites.DEFAULT_SUITE`, newest version), all degradations, levels 1-5, 100 items per condition.
``robustness: false`` turns the track off. Every problem names the field.
"""
from __future__ import annotations

from dataclasses import dataclass

from leaderboard.core.errors import PackError, ProblemList
from leaderboard.core.robustness.suites import DEFAULT_SUITE, LEVELS, Suite, get_suite

DEFAULT_ITEMS = 100
#: how items are dealt to conditions (`subset.assign_conditions`); part of the method, so copies
#: built under another design are not current
ASSIGNMENT = "one-condition-per-item@1"
MAX_ITEMS = 100_000


@dataclass(frozen=True)
class Condition:
    """One degraded copy: a degradation of a suite at a level (level 0 = the clean items)."""

    modality: str
    suite: str          # name@version
    degradation: str
    level: int

    @property
    def key(self) -> str:
        """``image-jpeg-3``: unique within a split (a pack has one suite per modality, and two
        modalities' suites may share a degradation name, e.g. ``resize``)."""
        return f"{self.modality}-{self.degradation}-{self.level}"

    def slice(self) -> dict:
        """The records' slice: ``{"modality": "image", "degradation": "jpeg", "level": "3"}``
        (slice values are text)."""
        return {"modality": self.modality, "degradation": self.degradation,
                "level": str(self.level)}


@dataclass(frozen=True)
class ModalityPlan:
    modality: str
    suite: Suite
    degradations: tuple[str, ...]
    levels: tuple[int, ...]


@dataclass(frozen=True)
class RobustnessConfig:
    items_per_condition: int
    seed: int
    splits: tuple[str, ...]
    plans: tuple[ModalityPlan, ...]

    def conditions(self) -> list[Condition]:
        out = []
        for p in self.plans:
            for d in p.degradations:
                out.extend(Condition(p.modality, p.suite.ref, d, lv) for lv in p.levels)
        return out

    def describe(self) -> dict:
        """JSON-ready method statement (shown on pages, stored with each run)."""
        return {"items_per_condition": self.items_per_condition, "seed": self.seed,
                "assignment": ASSIGNMENT,
                "suites": [{"modality": p.modality, "suite": p.suite.ref,
                            "signature": p.suite.signature, "degradations": list(p.degradations),
                            "levels": list(p.levels)} for p in self.plans]}


def _err(problems: ProblemList, field: str, message: str) -> None:
    problems.add(message, file="benchmark.yaml", field=f"robustness.{field}" if field else
                 "robustness")


def parse_config(raw, *, modalities: tuple[str, ...], splits: tuple[str, ...]
                 ) -> RobustnessConfig | None:
    """The pack's robustness plan, or None when it has none (off, or no degradable modality).

    ``raw``: the ``robustness`` value of benchmark.yaml (None when absent). Raises PackError
    naming each bad field.
    """
    if raw is False:
        return None
    raw = {} if raw is None else raw
    problems = ProblemList()
    if not isinstance(raw, dict):
        _err(problems, "", f"must be a mapping or false, got {type(raw).__name__}")
        raise PackError("invalid benchmark.yaml", problems)
    known = {"items_per_condition", "seed", "splits", "suites"}
    for k in sorted(set(raw) - known):
        _err(problems, str(k), f"unknown key; allowed: {sorted(known)}")
    n = raw.get("items_per_condition", DEFAULT_ITEMS)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ITEMS:
        _err(problems, "items_per_condition", f"must be an integer in 1..{MAX_ITEMS}, got {n!r}")
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        _err(problems, "seed", f"must be a non-negative integer, got {seed!r}")
    want_splits = raw.get("splits", list(splits))
    if not isinstance(want_splits, list) or any(s not in splits for s in want_splits):
        _err(problems, "splits", f"must be a list of the pack's splits {list(splits)}, "
             f"got {want_splits!r}")
    suites = raw.get("suites", {})
    if not isinstance(suites, dict):
        _err(problems, "suites", "must be a mapping of modality -> suite settings")
        suites = {}
    for m in suites:
        if m not in DEFAULT_SUITE:
            _err(problems, f"suites.{m}", f"no suite for modality {m!r}; degradable modalities: "
                 f"{sorted(DEFAULT_SUITE)}")
        elif m not in modalities:
            _err(problems, f"suites.{m}",
                 f"modality {m!r} is not one of the pack's {list(modalities)}")
    plans = []
    for m in modalities:
        if m not in DEFAULT_SUITE:
            continue
        plan = _plan(m, suites.get(m, {}), problems)
        if plan is not None:
            plans.append(plan)
    if problems:
        raise PackError("invalid benchmark.yaml", problems)
    if not plans or not want_splits:
        return None
    return RobustnessConfig(n, seed, tuple(want_splits), tuple(plans))


def _plan(modality: str, spec, problems: ProblemList) -> ModalityPlan | None:
    where = f"suites.{modality}"
    if spec is False:
        return None
    if not isinstance(spec, dict):
        _err(problems, where, "must be a mapping (suite, version, degradations, levels) or false")
        return None
    known = {"suite", "version", "degradations", "levels"}
    for k in sorted(set(spec) - known):
        _err(problems, f"{where}.{k}", f"unknown key; allowed: {sorted(known)}")
    version = spec.get("version")
    try:
        suite = get_suite(str(spec.get("suite", DEFAULT_SUITE[modality])),
                          None if version is None else str(version))
    except KeyError as exc:
        _err(problems, f"{where}.suite", str(exc.args[0]))
        return None
    if suite.modality != modality:
        _err(problems, f"{where}.suite",
             f"suite {suite.ref} is for {suite.modality}, not {modality}")
        return None
    names = [d.name for d in suite.degradations]
    degr = spec.get("degradations", names)
    if not isinstance(degr, list) or not degr or any(d not in names for d in degr) \
            or len(set(degr)) != len(degr):
        _err(problems, f"{where}.degradations", f"must be a non-empty list of distinct names "
             f"from {names}, got {degr!r}")
        return None
    levels = spec.get("levels", list(LEVELS))
    bad_level = any(isinstance(v, bool) or v not in LEVELS for v in levels) \
        if isinstance(levels, list) else True
    if not isinstance(levels, list) or not levels or bad_level or len(set(levels)) != len(levels):
        _err(problems, f"{where}.levels", f"must be a non-empty list of distinct levels from "
             f"{list(LEVELS)}, got {levels!r}")
        return None
    return ModalityPlan(modality, suite, tuple(degr), tuple(sorted(levels)))


def pack_config(pack) -> RobustnessConfig | None:
    """`parse_config` of a loaded `leaderboard.core.packs.Pack`."""
    return parse_config(pack.meta.extras.get("robustness"), modalities=pack.modalities,
                        splits=pack.splits)


def meta_config(meta_json: dict) -> RobustnessConfig | None:
    """`parse_config` from the server's stored pack metadata (``Benchmark.meta_json``)."""
    return parse_config((meta_json or {}).get("robustness"),
                        modalities=tuple(meta_json.get("modalities", ())),
                        splits=tuple(meta_json.get("splits", ())))
