"""Writes a pack in the contract's layout; shared by the demo generators and the pack builders."""
from __future__ import annotations

import hashlib
import shutil
from contextvars import ContextVar
from pathlib import Path

import orjson
import yaml


def _digest(parts: tuple, seed: int) -> bytes:
    return hashlib.sha256("\x1f".join(map(str, (seed, *parts))).encode()).digest()


def stable_fraction(*parts: object, seed: int = 0) -> float:
    """A deterministic number in [0, 1) from the given parts (independent of row order)."""
    return int.from_bytes(_digest(parts, seed)[:8], "big") / 2**64


def opaque_id(prefix: str, *parts: object, seed: int) -> str:
    """An item id that says nothing about the item: ``<prefix>-`` + a hash of its generation key
    (ids that named a generator or a class would leak the hidden labels)."""
    return f"{prefix}-{_digest(parts, seed).hex()[:16]}"


def assign_split(item_key: str, *, seed: int, dev_fraction: float = 0.3) -> str:
    """'dev' or 'test' for an item (stable under re-ordering and re-running)."""
    return "dev" if stable_fraction("split", item_key, seed=seed) < dev_fraction else "test"


def assign_part(item_key: str, *, seed: int, private_fraction: float = 0.5) -> str:
    """'public' or 'private' part of the test board for an item."""
    return "private" if stable_fraction("part", item_key, seed=seed) < private_fraction else "public"


#: False while a team's copy is written (``leaderboard demo-packs`` without
#: ``--with-test-labels``): `PackWriter` then never writes a held-out split's labels
HELD_OUT_LABELS: ContextVar[bool] = ContextVar("held_out_labels", default=True)
HELD_OUT = ("test",)  # leaderboard.core.packs.HELD_OUT_SPLITS (the writer stays dependency-free)

#: opens the demo description's caveat; it runs to the end of its paragraph
DEMO_CAVEAT = "**This demo pack is procedural**"


def release_description(demo_text: str, *, source: str) -> str:
    """A demo pack's description as a pack built from the authors' data shows it.

    The title loses " (demo pack)", and the demo caveat (``DEMO_CAVEAT`` to the end of its
    paragraph) is replaced by ``source``, a sentence saying where the data came from.
    """
    text = demo_text.replace(" (demo pack)\n", "\n", 1)
    cut = text.find(DEMO_CAVEAT)
    if cut >= 0:  # the demo's caveat does not apply: say where the data come from instead
        end = text.find("\n\n", cut)
        text = text[:cut] + source + text[end:]
    return text


def release_agreement(demo_text: str) -> str:
    """A demo pack's agreement as a pack built from the authors' data shows it (no "(demo)")."""
    return demo_text.replace(" (demo)", "")


class PackWriter:
    """Streams items and labels of each split to disk; media paths are made relative to the pack.

    Usage::

        with PackWriter(out, meta, description=md, agreement=md) as w:
            rel = w.media("image/0001.png")       # returns (relative path, absolute path)
            w.add("test", item_row, label_row)     # label_row gets "part" on held-out splits
    """

    def __init__(self, root: Path, meta: dict, *, description: str, agreement: str):
        self.root = Path(root)
        if self.root.exists():
            shutil.rmtree(self.root)
        (self.root / "media").mkdir(parents=True)
        self.meta = dict(meta)
        self.meta.setdefault("splits", ["dev", "test"])
        self.meta.setdefault("agreement", "agreement.md")
        self.meta.setdefault("description", "description.md")
        (self.root / self.meta["description"]).write_text(description, encoding="utf-8")
        (self.root / self.meta["agreement"]).write_text(agreement, encoding="utf-8")
        self._files: dict[tuple[str, str], object] = {}
        self.counts: dict[str, int] = {}
        self.held_out_labels = HELD_OUT_LABELS.get()

    def _keeps_labels(self, split: str) -> bool:
        return self.held_out_labels or split not in HELD_OUT

    def media(self, rel: str) -> tuple[str, Path]:
        rel = rel.lstrip("/")
        path = self.root / "media" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        return f"media/{rel}", path

    def _fh(self, split: str, what: str):
        key = (split, what)
        if key not in self._files:
            d = self.root / "splits" / split
            d.mkdir(parents=True, exist_ok=True)
            self._files[key] = open(d / f"{what}.jsonl", "wb")
        return self._files[key]

    def add(self, split: str, item: dict, label: dict) -> None:
        if item["id"] != label["id"]:
            raise ValueError("item and label rows must share the id")
        self._fh(split, "items").write(orjson.dumps(item) + b"\n")
        if self._keeps_labels(split):
            self._fh(split, "labels").write(orjson.dumps(label) + b"\n")
        self.counts[split] = self.counts.get(split, 0) + 1

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self._files.clear()
        for split in self.meta["splits"]:  # a split with no rows still has (empty) files
            d = self.root / "splits" / split
            d.mkdir(parents=True, exist_ok=True)
            for what in ("items", "labels") if self._keeps_labels(split) else ("items",):
                (d / f"{what}.jsonl").touch()
        (self.root / "benchmark.yaml").write_text(
            yaml.safe_dump(self.meta, sort_keys=False, allow_unicode=True), encoding="utf-8")

    def __enter__(self) -> "PackWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
