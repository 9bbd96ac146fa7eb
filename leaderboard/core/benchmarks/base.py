"""What a benchmark module declares, and what its scorer receives.

A benchmark module (one per benchmark: ``loki``, ``tridf``, ``syncred``, ``uniaidet``, ``vct2``)
subclasses `Benchmark` and declares:

* ``item_fields`` / ``label_fields``: the typed columns of the public ``items.jsonl`` and the hidden
  ``labels.jsonl`` rows (beyond the common ``id``, ``task``, ``modality``, ``media``, ``question``,
  ``options`` of items and ``id``, ``part`` of labels). Packs are validated against them and compiled
  into columnar tables (`leaderboard.core.packs.Table`).
* ``metrics``: every metric name its records may carry, with direction and display format, so boards
  sort without special cases.
* ``score_block(block, ctx)``: pure function from one task's aligned columns to metric records.

Task kinds fix which prediction fields a task accepts (see docs/internals.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from leaderboard.core.records import MetricRecord

KINDS = ("detection", "yesno", "choice", "multiselect", "explanation", "artifacts")

#: prediction fields each task kind accepts (``id`` always required)
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "detection": ("label", "score", "mask", "rationale", "response"),
    "yesno": ("answer", "response", "rationale"),
    "choice": ("answer", "response", "rationale"),
    "multiselect": ("answer", "response", "rationale"),
    "explanation": ("response", "rationale"),
    "artifacts": ("artifacts", "response", "label", "rationale"),
}

#: column types a pack may declare
FIELD_TYPES = ("category", "text", "float", "int", "bool", "tags", "rle", "json")


@dataclass(frozen=True)
class Field:
    """A typed column of items.jsonl or labels.jsonl.

    ``required_for``: task keys whose rows must carry the field (``("*",)`` = every row).
    ``choices``: allowed values for a category (None = any string).
    """

    type: str
    required_for: tuple[str, ...] = ()
    choices: tuple[str, ...] | None = None
    description: str = ""

    def required(self, task: str) -> bool:
        return "*" in self.required_for or task in self.required_for


@dataclass(frozen=True)
class MetricSpec:
    """How a metric is shown and ranked. ``fmt``: "pct" (fraction shown as %), "num", "signed"."""

    title: str
    higher_is_better: bool
    fmt: str = "pct"
    lower: float | None = 0.0
    upper: float | None = 1.0
    description: str = ""


@dataclass(frozen=True)
class TaskSpec:
    """One task of a benchmark, as declared in ``benchmark.yaml`` and checked by the module."""

    key: str
    kind: str
    modalities: tuple[str, ...]
    headline: str
    title: str = ""
    secondary: tuple[str, ...] = ()
    description: str = ""

    def as_dict(self) -> dict:
        return {"key": self.key, "kind": self.kind, "modalities": list(self.modalities),
                "headline": self.headline, "title": self.title or self.key,
                "secondary": list(self.secondary), "description": self.description}


@dataclass
class Block:
    """The rows of one task a submission covers, with every column aligned row by row.

    ``item``: public columns (decoded: category columns as object arrays of str/None, numbers as
    arrays); ``truth``: hidden label columns, same decoding; ``pred``: validated prediction columns
    (see `leaderboard.core.predictions` for their dtypes). ``ids`` are the item ids.
    """

    task: TaskSpec
    ids: np.ndarray
    item: dict[str, np.ndarray]
    truth: dict[str, np.ndarray]
    pred: dict[str, np.ndarray]
    #: option letters of a multiselect task, in the column order of ``pred["selected"]``
    letters: str = ""

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def task_letters(self) -> str:
        return self.letters

    def col(self, name: str) -> np.ndarray:
        """A truth column if there is one, else an item column (breakdown axes live in either)."""
        if name in self.truth:
            return self.truth[name]
        return self.item[name]

    def has(self, name: str) -> bool:
        return name in self.truth or name in self.item

    def subset(self, mask: np.ndarray) -> "Block":
        return Block(self.task, self.ids[mask],
                     {k: v[mask] for k, v in self.item.items()},
                     {k: v[mask] for k, v in self.truth.items()},
                     {k: v[mask] for k, v in self.pred.items()}, self.letters)


@dataclass
class ScoringContext:
    """What a scorer may use besides the block: a judge, the bootstrap seed, pack extras."""

    judge: object | None = None
    seed: int = 0
    n_resamples: int = 1000
    extras: dict = field(default_factory=dict)
    pending: list = field(default_factory=list)
    notes: list = field(default_factory=list)


class Benchmark:
    """Base class of the five benchmark modules (a plugin registry, as CTFd does for challenges)."""

    key: ClassVar[str]
    title: ClassVar[str]
    kinds: ClassVar[dict[str, str]]  # task key -> kind this module knows how to score
    item_fields: ClassVar[dict[str, Field]] = {}
    label_fields: ClassVar[dict[str, Field]] = {}
    metrics: ClassVar[dict[str, MetricSpec]] = {}
    #: ids of taxonomy keys accepted in ``artifacts`` predictions (TriDF)
    artifact_keys: ClassVar[tuple[str, ...]] = ()
    #: whether container runs of this benchmark need a GPU and show logs to teams
    container_gpu: ClassVar[bool] = True
    container_logs: ClassVar[str] = "tail"

    #: free-text fields of predictions the scorer reads (others are validated, then dropped)
    keeps_text: ClassVar[tuple[str, ...]] = ()
    #: accepts the authors' offline ``{"model", "responses": [...]}`` format (LOKI)
    accepts_offline_format: ClassVar[bool] = False

    def score_block(self, block: Block, ctx: ScoringContext) -> list["MetricRecord"]:
        raise NotImplementedError

    def extract(self, kind: str, text: str, options: dict | None):
        """Parse a free-text ``response`` into an answer ("yes"/"no", a letter, a list of
        letters) for ``kind``; None when unparsable (counted, and scored as wrong)."""
        raise NotImplementedError(f"{self.key} does not extract {kind} answers from text")

    def composite(self, records: list["MetricRecord"], ctx: ScoringContext) -> list["MetricRecord"]:
        """Records computed from several tasks' records (TriDF's TCS). Default: none."""
        return []

    def metric(self, name: str) -> MetricSpec:
        try:
            return self.metrics[name]
        except KeyError:
            raise KeyError(f"{self.key}: metric {name!r} is not declared; declared: "
                           f"{sorted(self.metrics)}") from None


_REGISTRY: dict[str, type[Benchmark]] = {}


def register(cls: type[Benchmark]) -> type[Benchmark]:
    """Class decorator of every benchmark module; the lookup is
    `leaderboard.core.benchmarks.get_benchmark`, which imports them all first."""
    _REGISTRY[cls.key] = cls
    return cls


def registered(key: str) -> Benchmark:
    """An instance of the registered benchmark ``key``; KeyError naming the known keys. Only
    what is already imported is known: callers use `leaderboard.core.benchmarks.get_benchmark`."""
    try:
        return _REGISTRY[key]()
    except KeyError:
        raise KeyError(f"unknown benchmark {key!r}; known: {sorted(_REGISTRY)}") from None


def registered_keys() -> list[str]:
    return sorted(_REGISTRY)
