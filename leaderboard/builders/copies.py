"""Build the degraded copies of one split (layout: `leaderboard.core.robustness.layout`).

Each modality's subset holds up to ``conditions x items_per_condition`` items, dealt to the
conditions by `leaderboard.core.robustness.subset.assign_conditions`: an item is degraded under
one condition per invocation of the container (``rounds`` in the manifest: what each invocation
holds; one round when the split has enough items, more for a small split).

``plan_copies`` is cheap (the subset and the cache key: sha256 over the layout version, the
pack's key, the split's ``items.jsonl``, the subset's ids and strata, the subset's media bytes,
every suite's signature, the chosen degradations and levels, the item count and the seed).
``build_copies`` writes the copies under ``<root>/<key>/`` once: when that folder's manifest
is there, nothing is rebuilt. So a new suite version (a new signature) builds new copies, and
nothing else that leaves those inputs alone does (re-importing the same pack, another title,
a budget change, a second request). Builds write into a temporary folder and rename it, so a
reader never sees a half-built copy.

On a held-out split the subset is drawn from the public part only (the robustness board is
shown at once, so it must say nothing about the private part).

Labels are never written by the server's build (``with_labels=False``): it scores with its
decrypted labels. An offline build of a dev split (the team's own copy) may write them.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from leaderboard.builders.degrade import apply, library_versions
from leaderboard.core.packs import HELD_OUT_SPLITS, Pack, load_pack
from leaderboard.core.robustness.config import Condition, RobustnessConfig, pack_config
from leaderboard.core.robustness.layout import (
    LAYOUT_VERSION,
    MANIFEST,
    condition_split,
    degraded_path,
)
from leaderboard.core.robustness.subset import (
    assign_conditions,
    rounds_needed,
    select_subset,
    strata_of,
    take_rows,
)
from leaderboard.core.table import Table


@dataclass(frozen=True)
class CopiesPlan:
    key: str
    pack: Pack
    split: str
    config: RobustnessConfig
    rows: dict[str, np.ndarray]          # modality -> subset rows of the split
    labels: Table
    #: modality -> [round][condition of that modality] -> positions into ``rows[modality]``
    assignment: dict[str, list[list[np.ndarray]]]

    @property
    def conditions(self) -> list[Condition]:
        return self.config.conditions()

    @property
    def rounds(self) -> int:
        """Invocations of the container a run needs (the largest modality's rounds)."""
        return max((len(a) for a in self.assignment.values()), default=0)

    def round_rows(self, cond: Condition) -> list[np.ndarray]:
        """Per round of its modality, the rows of the split ``cond`` degrades in it."""
        j = [c for c in self.conditions if c.modality == cond.modality].index(cond)
        rows = self.rows[cond.modality]
        return [rows[blocks[j]] for blocks in self.assignment[cond.modality]]

    def condition_rows(self, cond: Condition) -> np.ndarray:
        """Rows of the split that ``cond`` degrades (over every round), ascending."""
        parts = self.round_rows(cond)
        return np.sort(np.concatenate(parts)) if parts else self.rows[cond.modality][:0]

    @property
    def n_files(self) -> int:
        """Degraded files to write (the progress total)."""
        return sum(len(self.condition_rows(c)) for c in self.conditions)


def _item_seed(seed: int, item: str, cond: Condition) -> int:
    h = hashlib.sha256(f"{seed}\0{item}\0{cond.suite}\0{cond.key}".encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


def plan_copies(pack: Pack | str | os.PathLike, split: str, *, labels: Table | None = None,
                config: RobustnessConfig | None = None) -> CopiesPlan | None:
    """What the copies of ``split`` hold and their cache key; None without a robustness plan
    (or when ``split`` is not one of the plan's splits)."""
    pack = pack if isinstance(pack, Pack) else load_pack(pack)
    config = config or pack_config(pack)
    if config is None or split not in config.splits:
        return None
    items = pack.items(split)
    labels = labels if labels is not None else pack.labels(split)
    h = hashlib.sha256()
    h.update(f"layout={LAYOUT_VERSION}\0pack={pack.key}\0split={split}\0".encode())
    h.update(hashlib.sha256(pack.items_path(split).read_bytes()).digest())
    h.update(json.dumps(config.describe(), sort_keys=True).encode())
    rows, assignment = {}, {}
    for plan in config.plans:
        n_cond = len(plan.degradations) * len(plan.levels)
        sel = select_subset(items, labels, modality=plan.modality,
                            n=n_cond * config.items_per_condition, seed=config.seed,
                            part="public" if split in HELD_OUT_SPLITS else None)
        rows[plan.modality] = sel
        strata = strata_of(items, labels, sel) if len(sel) else np.array([], dtype=object)
        rounds = rounds_needed(len(sel), n_cond, config.items_per_condition)
        assignment[plan.modality] = assign_conditions(
            strata, n_cond, rounds, seed=config.seed, modality=plan.modality) if rounds else []
        for i, s in zip(sel.tolist(), strata.tolist()):
            h.update(f"{items.ids[i]}\0{s}\0".encode())
            for rel in items.value("media", i) or ():
                h.update(hashlib.sha256((pack.root / rel).read_bytes()).digest())
    return CopiesPlan(h.hexdigest()[:20], pack, split, config, rows, labels, assignment)


def copies_dir(root: str | os.PathLike, plan: CopiesPlan) -> Path:
    return Path(root) / plan.key


def is_built(path: Path) -> bool:
    return (path / MANIFEST).is_file()


def build_copies(plan: CopiesPlan, root: str | os.PathLike, *, with_labels: bool = False,
                 progress: Callable[[int, int], None] | None = None) -> Path:
    """Write the copies under ``root/<key>/`` unless they are there; return that folder.

    ``progress(done, total)`` is called after each degraded file. Raises
    `leaderboard.builders.degrade.DegradeError` naming the item when a file cannot be degraded.
    """
    dest = copies_dir(root, plan)
    if is_built(dest):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        _write(plan, tmp, with_labels=with_labels, progress=progress)
        try:
            os.replace(tmp, dest)
        except OSError:  # another build finished first (same key: same bytes)
            if not is_built(dest):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _write(plan: CopiesPlan, out: Path, *, with_labels: bool, progress) -> None:
    pack, split, items = plan.pack, plan.split, plan.pack.items(plan.split)
    out.mkdir(parents=True)
    files: dict[str, str] = {}
    all_rows = np.unique(np.concatenate([r for r in plan.rows.values()] or [np.array([], int)]))
    splits, conds = [], []
    # level 0: the clean subset, the original bytes linked (or copied) in
    clean_split = condition_split(split, None)
    _items_file(out, clean_split, pack, split, items, all_rows,
                lambda rel: degraded_path(rel, None, None),
                plan.labels if with_labels else None)
    for i in all_rows.tolist():
        for rel in items.value("media", i) or ():
            new = degraded_path(rel, None, None)
            target = out / new
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(pack.root / rel, target)
            except OSError:
                shutil.copyfile(pack.root / rel, target)
            files[new] = hashlib.sha256(target.read_bytes()).hexdigest()
    splits.append(clean_split)
    done, total = 0, plan.n_files
    for mp in plan.config.plans:
        for cond in (c for c in plan.conditions if c.modality == mp.modality):
            rows = plan.condition_rows(cond)
            deg = mp.suite.degradation(cond.degradation)
            params = deg.level(cond.level)
            name = condition_split(split, cond)
            for i in rows.tolist():
                for rel in items.value("media", i) or ():
                    data = (pack.root / rel).read_bytes()
                    seed = _item_seed(plan.config.seed, str(items.ids[i]), cond)
                    try:
                        blob = apply(cond.modality, cond.degradation, params, data, seed=seed,
                                     suffix=Path(rel).suffix)
                    except ValueError as exc:
                        raise type(exc)(f"item {items.ids[i]} ({rel}), {cond.key}: {exc}") \
                            from None
                    new = degraded_path(rel, cond, deg.suffix)
                    (out / new).parent.mkdir(parents=True, exist_ok=True)
                    (out / new).write_bytes(blob)
                    files[new] = hashlib.sha256(blob).hexdigest()
                done += 1
                if progress is not None:
                    progress(done, total)
            _items_file(out, name, pack, split, items, rows,
                        lambda rel, c=cond, s=deg.suffix: degraded_path(rel, c, s),
                        plan.labels if with_labels else None)
            splits.append(name)
            conds.append({"modality": cond.modality, "suite": cond.suite,
                          "degradation": cond.degradation, "level": cond.level, "split": name,
                          "params": params, "suffix": deg.suffix, "items": len(rows)})
    rounds = []
    for r in range(plan.rounds):  # what each invocation of the container holds
        rounds.append({condition_split(split, c): [str(items.ids[i]) for i in
                                                   plan.round_rows(c)[r].tolist()]
                       for c in plan.conditions if r < len(plan.assignment[c.modality])})
    _pack_files(pack, out, splits)
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    manifest = {"layout": LAYOUT_VERSION, "key": plan.key, "benchmark": pack.key,
                "pack_version": pack.version, "split": split, "clean_split": clean_split,
                "config": plan.config.describe(), "conditions": conds,
                "subset": {m: [str(items.ids[i]) for i in r.tolist()]
                           for m, r in plan.rows.items()},
                "rounds": rounds,
                "libraries": library_versions(), "files": files, "digest": digest,
                "labels": with_labels}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                                encoding="utf-8")


def _items_file(out: Path, name: str, pack: Pack, split: str, items: Table, rows: np.ndarray,
                media_of,
                labels: Table | None) -> None:
    folder = out / "splits" / name
    folder.mkdir(parents=True, exist_ok=True)
    rows_set = rows.tolist()
    with open(pack.items_path(split), encoding="utf-8") as fh:
        by_id = {}
        for line in fh:
            if line.strip():
                row = json.loads(line)
                by_id[row["id"]] = row
    with open(folder / "items.jsonl", "w", encoding="utf-8") as fh:
        for i in rows_set:
            row = dict(by_id[str(items.ids[i])])
            media = row.get("media")
            if isinstance(media, str):
                row["media"] = media_of(media)
            elif media:
                row["media"] = [media_of(m) for m in media]
            fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    if labels is not None:
        sub = take_rows(labels, np.asarray(rows_set, dtype=np.int64))
        with open(folder / "labels.jsonl", "w", encoding="utf-8") as fh:
            for row in label_rows(sub):
                fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def label_rows(table: Table):
    """A compiled label table back as ``labels.jsonl`` rows (absent cells left out)."""
    for i, rid in enumerate(table.ids.tolist()):
        row = {"id": str(rid)}
        for name, col in table.columns.items():
            if not col.present[i]:
                continue
            if col.type == "tags":
                row[name] = [v for v, on in zip(col.vocab, col.data[i]) if on]
                continue
            value = table.value(name, i)
            if isinstance(value, np.generic):
                value = value.item()
            row[name] = bool(value) if col.type == "bool" else value
        yield row


def _pack_files(pack: Pack, out: Path, splits: list[str]) -> None:
    meta = yaml.safe_load((pack.root / "benchmark.yaml").read_text(encoding="utf-8"))
    meta["splits"] = splits
    meta["robustness"] = False  # copies are not degraded again
    meta["description"], meta["agreement"] = "description.md", "agreement.md"
    (out / "benchmark.yaml").write_text(yaml.safe_dump(meta, sort_keys=False), encoding="utf-8")
    for which, name in (("description", "description.md"), ("agreement", "agreement.md")):
        (out / name).write_text(pack.text(which), encoding="utf-8")
