"""The items a robustness condition uses: a seeded, class-stratified subset of one modality,
and the assignment of its items to conditions.

A modality's subset holds up to ``conditions x items_per_condition`` items (`select_subset`);
`assign_conditions` deals them to the conditions so that no invocation of the container sees
one base item twice (docs/robustness.md, "One condition per item"): each condition's drop is
then paired with the submission's clean predictions on that condition's own items.
Strata are (task, class), the class being the label's ``label`` (fake/real) or ``answer`` when
the benchmark has one; sizes are allocated to strata in proportion (largest remainders, at
least one item per stratum while ``n`` allows), and each stratum's items are drawn by a
permutation seeded with sha256(seed, modality, stratum), so adding a stratum or an item
elsewhere does not reshuffle the others. Rows come back in the split's order.
"""
from __future__ import annotations

import hashlib

import numpy as np

from leaderboard.core.table import Column, Table

_CLASS_COLUMNS = ("label", "answer")


def _rng(*parts) -> np.random.Generator:
    digest = hashlib.sha256("\0".join(map(str, parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def strata_of(items: Table, labels: Table, rows: np.ndarray) -> np.ndarray:
    """(task, class) keys of ``rows`` as strings, e.g. ``"detection|fake"``."""
    task = items.decoded("task")[rows]
    cls = np.full(len(rows), "", dtype=object)
    for name in _CLASS_COLUMNS:
        if name in labels.columns and labels.columns[name].type in ("category", "text"):
            col = labels.decoded(name)[rows]
            cls = np.array(["" if v is None else str(v) for v in col], dtype=object)
            break
    return np.array([f"{t}|{c}" for t, c in zip(task.tolist(), cls.tolist())], dtype=object)


def select_subset(items: Table, labels: Table, *, modality: str, n: int, seed: int,
                  part: str | None = None) -> np.ndarray:
    """Rows (ascending) of at most ``n`` items of ``modality`` that carry media; with ``part``,
    only items of that part (held-out splits use the public part, so that robustness numbers,
    shown at once, say nothing about the private part)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    if len(labels) != len(items) or not np.array_equal(labels.ids, items.ids):
        raise ValueError("labels are not aligned with the items of this split")
    mods = items.decoded("modality")
    media = items.decoded("media") if "media" in items.columns else np.full(len(items), None)
    keep = (mods == modality) & np.array([bool(m) for m in media], dtype=bool)
    if part is not None and "part" in labels.columns:
        keep &= labels.decoded("part") == part
    rows = np.flatnonzero(keep)
    if len(rows) <= n:
        return rows
    strata = strata_of(items, labels, rows)
    keys, counts = np.unique(strata.astype(str), return_counts=True)
    take = _allocate(counts, n)
    chosen = []
    for key, k in zip(keys.tolist(), take.tolist()):
        members = rows[strata == key]
        order = _rng(seed, modality, key).permutation(len(members))
        chosen.append(members[np.sort(order[:k])])
    return np.sort(np.concatenate(chosen)) if chosen else rows[:0]


def _allocate(counts: np.ndarray, n: int) -> np.ndarray:
    """Proportional shares of ``n`` (sum == n, each <= its count), one each first when n allows."""
    counts = counts.astype(np.int64)
    base = np.minimum(counts, 1) if n >= len(counts) else np.zeros_like(counts)
    left = n - int(base.sum())
    room = counts - base
    exact = room / max(room.sum(), 1) * left
    share = np.minimum(np.floor(exact).astype(np.int64), room)
    rest = left - int(share.sum())
    for i in np.argsort(-(exact - share), kind="stable"):
        if rest <= 0:
            break
        if share[i] < room[i]:
            share[i] += 1
            rest -= 1
    return base + share


def take_rows(table: Table, rows: np.ndarray) -> Table:
    """A new `Table` of ``rows`` of ``table`` (in that order), every column kept as encoded."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = {}
    for name, col in table.columns.items():
        if col.type in ("text", "json", "rle"):
            offs = col.data
            parts, new = [], np.zeros(len(rows) + 1, dtype=np.int64)
            for j, i in enumerate(rows.tolist()):
                chunk = col.blob[offs[i]:offs[i + 1]]
                parts.append(chunk)
                new[j + 1] = new[j] + len(chunk)
            cols[name] = Column(col.type, new, col.present[rows], col.vocab, b"".join(parts),
                                None if col.sizes is None else col.sizes[rows])
        else:
            cols[name] = Column(col.type, col.data[rows], col.present[rows], col.vocab)
    return Table(ids=table.ids[rows], columns=cols, meta=dict(table.meta))


# -- which condition each item is degraded under (each item once per invocation) ---------------
def rounds_needed(n_items: int, n_conditions: int, per_condition: int) -> int:
    """Invocations of the container a modality needs so that each of its ``n_conditions`` gets
    ``per_condition`` items while no invocation holds an item twice: 1 when the subset has
    ``n_conditions x per_condition`` items, more for a smaller split, at most one per condition
    (then every condition holds every item, one condition per item per invocation)."""
    if n_items < 1 or n_conditions < 1:
        return 0
    need = -(-n_conditions * per_condition // n_items)
    return max(1, min(n_conditions, need))


def assign_conditions(strata: np.ndarray, n_conditions: int, rounds: int, *, seed: int,
                      modality: str) -> list[list[np.ndarray]]:
    """``[round][condition]`` -> positions (into ``strata``) of the items that condition degrades
    in that invocation.

    The items are dealt into ``n_conditions`` blocks, stratum by stratum (each stratum's items in
    a permutation seeded by sha256(seed, "assign", modality, stratum)), the dealing position
    carried from one stratum to the next: every block holds each stratum's items to within one,
    and the blocks' sizes differ by at most one. Blocks are then matched to conditions by a
    seeded permutation, and in round ``r`` condition ``c`` takes block ``(c + r) mod C`` (a Latin
    square): within one round every item is in exactly one condition, and across ``C`` rounds
    every condition has every item once.
    """
    strata = np.asarray(strata).astype(str)
    if n_conditions < 1 or not 1 <= rounds <= max(n_conditions, 1):
        raise ValueError(f"need 1 <= rounds <= conditions, got {rounds} and {n_conditions}")
    blocks: list[list[int]] = [[] for _ in range(n_conditions)]
    deal = 0
    for key in np.unique(strata).tolist():
        members = np.flatnonzero(strata == key)
        for pos in members[_rng(seed, "assign", modality, key).permutation(len(members))]:
            blocks[deal % n_conditions].append(int(pos))
            deal += 1
    order = _rng(seed, "blocks", modality).permutation(n_conditions)
    arrays = [np.sort(np.asarray(b, dtype=np.int64)) for b in blocks]
    return [[arrays[order[(c + r) % n_conditions]] for c in range(n_conditions)]
            for r in range(rounds)]
