"""Metric records: the flat contract every scorer returns and every consumer stores.

``{"task", "metric", "slice", "value", "ci_low", "ci_high", "n", "judge", "metric_version"}``;
``slice == {}`` is the overall number; ``value is None`` means "n/a" (for instance AP when some
rows carry no score) and always ranks below any number.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field


def _clean(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


@dataclass(frozen=True)
class MetricRecord:
    task: str
    metric: str
    slice: dict
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    judge: str | None = None
    metric_version: str = "1"

    def __post_init__(self) -> None:
        # NaN never leaves the scorer: it becomes None ("n/a"), which JSON can carry.
        object.__setattr__(self, "value", _clean(self.value))
        object.__setattr__(self, "ci_low", _clean(self.ci_low))
        object.__setattr__(self, "ci_high", _clean(self.ci_high))
        object.__setattr__(self, "n", int(self.n))
        object.__setattr__(self, "slice", {str(k): str(v) for k, v in self.slice.items()})

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def slice_key(self) -> str:
        """Stable text form of the slice, e.g. ``"modality=image;subcategory=animals"``."""
        return slice_key_of(self.slice)


def slice_key_of(slice_: dict) -> str:
    """The stable text form of a slice (``axis=value`` pairs sorted by axis, joined by ``;``);
    ``{}`` (the overall number) is ``""``. Stored as ``Score.slice_key`` on the server."""
    return ";".join(f"{k}={v}" for k, v in sorted(slice_.items()))


def parse_slice_key(text: str | None) -> dict:
    """Inverse of `slice_key_of`; raises ValueError naming a malformed part."""
    out = {}
    for part in filter(None, (text or "").split(";")):
        k, sep, v = part.partition("=")
        if not sep or not k:
            raise ValueError(f"slice must look like 'axis=value;axis=value', got {text!r}")
        out[k] = v
    return out


@dataclass
class ScoreResult:
    """What scoring one submission produces.

    ``parts`` maps a board part ("all" for dev; "public", "private" and "all" for test) to its
    records. ``pending`` lists metrics that need a judge that was not given. ``notes`` are
    human-readable remarks (blocks skipped, unparsable answers).
    """

    benchmark: str
    split: str
    parts: dict[str, list[MetricRecord]] = field(default_factory=dict)
    pending: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    covered: list[dict] = field(default_factory=list)
    #: plot data: {"part", "task", "slice", "kind": "roc"|"pr", "x": [...], "y": [...]}
    curves: list[dict] = field(default_factory=list)
    #: per part, per task: the headline's per-item outcomes (`leaderboard.core.outcomes`);
    #: they reveal labels, so they are kept by the server and never printed or served
    outcomes: dict[str, dict] = field(default_factory=dict)

    @property
    def records(self) -> list[MetricRecord]:
        """The records of the whole split ("all")."""
        return self.parts.get("all", [])

    def as_dict(self) -> dict:
        return {
            "benchmark": self.benchmark,
            "split": self.split,
            "parts": {k: [r.as_dict() for r in v] for k, v in self.parts.items()},
            "pending": self.pending,
            "notes": self.notes,
            "covered": self.covered,
            "curves": self.curves,
        }
