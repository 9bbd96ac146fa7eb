"""Ranking rules of the boards, as pure functions over plain rows (no DB, no Flask).

The rules (design.md, "Boards, splits and fairness"; issue 3, item 6):

* A board's columns are a task's metrics; each declares ``higher_is_better`` so no metric needs a
  special case. The task's headline metric is the primary column.
* "n/a" (``None``) never ranks above a number, whatever the direction.
* Ties are broken deterministically: the primary metric, then the task's declared secondary
  metrics in order, then the earliest submission, then the lower submission id (two submissions
  stored in the same microsecond still get a fixed order). Values compare exactly as stored.
* One row per team: the submission the team selected, else its best one by the same order on the
  *pick* values (the public part of the test split; see `leaderboard.server.boards.service`). Baselines and
  team-less submissions are rows of their own. Disqualified submissions never represent a team.
* Ranks count competitors only: baselines and disqualified rows are shown but not ranked.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Column:
    """One metric column: how it sorts (``higher_is_better``) and how it prints (``fmt``).

    ``by_magnitude``: a signed metric whose best value is 0 (LOKI's NBI in [-1, 1]) sorts by
    its absolute value, lower first, while the board shows the signed value (issue 12).
    """

    metric: str
    title: str
    higher_is_better: bool
    fmt: str = "pct"
    by_magnitude: bool = False

    @property
    def arrow(self) -> str:
        if self.by_magnitude:
            return "|\u2193|"
        return "\u2191" if self.higher_is_better else "\u2193"

    def as_dict(self) -> dict:
        return {"metric": self.metric, "title": self.title,
                "higher_is_better": self.higher_is_better, "arrow": self.arrow, "fmt": self.fmt,
                "by_magnitude": self.by_magnitude}


@dataclass(frozen=True)
class Cell:
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0

    def as_dict(self) -> dict:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}


@dataclass
class Entry:
    """One submission on one board slice.

    ``cells``: the values shown (the visible part); ``pick``: the values that choose a team's
    representative (the public part on test, the same as ``cells`` on dev).
    """

    submission_id: int
    created_at: datetime
    cells: dict[str, Cell]
    pick: dict[str, Cell] | None = None
    team_id: int | None = None
    team_name: str = ""
    method_name: str = ""
    is_baseline: bool = False
    baseline_kind: str | None = None
    selected: bool = False
    disqualified_reason: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def competes(self) -> bool:
        return not self.is_baseline and not self.disqualified_reason


def by_magnitude(spec: Mapping) -> bool:
    """A signed metric (fmt "signed", range across 0, lower is better) ranks by |value|."""
    return (spec.get("fmt") == "signed" and not spec["higher_is_better"]
            and (spec.get("lower") or 0) < 0 < (spec.get("upper") or 0))


def columns_for(specs: Mapping[str, Mapping], task: Mapping, present) -> list[Column]:
    """A task's metric columns that have values: headline, secondaries, then declared order.

    ``specs``: the benchmark's metric declarations; ``present``: the metrics with a value."""
    names = [task["headline"], *task.get("secondary", []), *specs]
    out, seen = [], set()
    for name in names:
        if name in present and name in specs and name not in seen:
            seen.add(name)
            s = specs[name]
            out.append(Column(name, s.get("title") or name, bool(s["higher_is_better"]),
                              s.get("fmt", "num"), by_magnitude=by_magnitude(s)))
    return out


def board_order(specs: Mapping[str, Mapping], task: Mapping, present) -> tuple[str | None,
                                                                               list[Column]]:
    """(primary metric, the columns that decide the order) of a board whose rows have values
    for ``present``; (None, []) when it has no column. A slice without the headline (SynCred's
    form/style slices) ranks by its first column: the task's secondaries, then declared order."""
    columns = columns_for(specs, task, present)
    if not columns:
        return None, []
    primary = task["headline"] if task["headline"] in present else columns[0].metric
    return primary, order_of(columns, primary=primary, secondary=task.get("secondary", []))


def order_of(columns: Sequence[Column], *, primary: str,
             secondary: Sequence[str] = ()) -> list[Column]:
    """The columns that decide the order: primary first, then declared secondaries present."""
    by_name = {c.metric: c for c in columns}
    if primary not in by_name:
        raise ValueError(f"primary metric {primary!r} is not a column; columns: {sorted(by_name)}")
    out = [by_name[primary]]
    for name in secondary:
        if name in by_name and name != primary and by_name[name] not in out:
            out.append(by_name[name])
    return out


def sort_key(cells: Mapping[str, Cell], order: Sequence[Column], created_at: datetime,
             submission_id: int) -> tuple:
    """Ascending key: a number before n/a; better numbers first in each column's direction."""
    key: list = []
    for col in order:
        cell = cells.get(col.metric)
        value = None if cell is None else cell.value
        if value is None:
            key.append((1, 0.0))
        elif col.by_magnitude:
            key.append((0, abs(value)))
        else:
            key.append((0, -value if col.higher_is_better else value))
    key.append(created_at)
    key.append(submission_id)
    return tuple(key)


def _entry_key(entry: Entry, order: Sequence[Column], *, use_pick: bool) -> tuple:
    cells = entry.pick if (use_pick and entry.pick is not None) else entry.cells
    return sort_key(cells, order, entry.created_at, entry.submission_id)


def pick_team_rows(entries: Iterable[Entry], order: Sequence[Column]) -> list[Entry]:
    """One entry per team: its selected submission, else its best by `order` on ``pick`` values.

    A team that selected several submissions (it should not) is represented by the best of them.
    Disqualified submissions are dropped; baselines and team-less entries stand alone.
    """
    groups: dict[tuple, list[Entry]] = {}
    for e in entries:
        if e.disqualified_reason:
            continue
        if e.team_id is None or e.is_baseline:
            key = ("submission", e.submission_id)
        else:
            key = ("team", e.team_id)
        groups.setdefault(key, []).append(e)
    out = []
    for group in groups.values():
        chosen = [e for e in group if e.selected] or group
        out.append(min(chosen, key=lambda e: _entry_key(e, order, use_pick=True)))
    return out


@dataclass(frozen=True)
class RankedRow:
    rank: int | None
    entry: Entry


def rank_entries(entries: Iterable[Entry], order: Sequence[Column]) -> list[RankedRow]:
    """Sort by `order` on the shown values; competitors get ranks 1..n, others ``None``.

    Disqualified rows (present only in "all submissions" mode) go below every other row.
    """
    ordered = sorted(entries, key=lambda e: (bool(e.disqualified_reason),
                                             _entry_key(e, order, use_pick=False)))
    rows, rank = [], 0
    for e in ordered:
        if e.competes:
            rank += 1
            rows.append(RankedRow(rank, e))
        else:
            rows.append(RankedRow(None, e))
    return rows


def build_rows(entries: Iterable[Entry], columns: Sequence[Column], *, primary: str,
               secondary: Sequence[str] = (), mode: str = "team") -> list[RankedRow]:
    """A board's rows: ``mode`` "team" (one per team) or "all" (every submission)."""
    if mode not in ("team", "all"):
        raise ValueError(f"mode must be 'team' or 'all', got {mode!r}")
    order = order_of(columns, primary=primary, secondary=secondary)
    entries = list(entries)
    if mode == "team":
        entries = pick_team_rows(entries, order)
    return rank_entries(entries, order)


def tie_break_rule(columns: Sequence[Column], *, primary: str,
                   secondary: Sequence[str] = ()) -> str:
    """The ranking rule in words, shown under every board."""
    order = order_of(columns, primary=primary, secondary=secondary)
    parts = [f"{c.title} ({'closer to 0' if c.by_magnitude else 'higher' if c.higher_is_better else 'lower'} is better)"
             for c in order]
    return ("Ranked by " + ", then ".join(parts)
            + ", then the earliest submission (then the lower submission id). "
            "n/a always ranks last. Baseline and disqualified rows are not ranked.")


def competition_ranks(values: Mapping[object, float | None], *,
                      higher_is_better: bool) -> dict[object, int]:
    """Standard competition ranks ("1224") of the keys that have a number; n/a keys are absent."""
    present = [(k, v) for k, v in values.items() if v is not None]
    present.sort(key=lambda kv: -kv[1] if higher_is_better else kv[1])
    ranks: dict[object, int] = {}
    prev, prev_rank = None, 0
    for i, (k, v) in enumerate(present, start=1):
        rank = prev_rank if (prev is not None and v == prev) else i
        ranks[k] = rank
        prev, prev_rank = v, rank
    return ranks
