"""A toy benchmark (registered by tests/core/conftest.py) and a pack factory for it."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from leaderboard.core.benchmarks.base import Benchmark, Field, MetricSpec
from leaderboard.core.records import MetricRecord


class Toy(Benchmark):
    key = "toy"
    title = "Toy"
    kinds = {"detect": "detection", "ask": "yesno", "pick": "multiselect", "arts": "artifacts"}
    item_fields = {"width": Field("int"), "height": Field("int"), "phrasing": Field("category")}
    label_fields = {"label": Field("category", ("detect",), ("fake", "real")),
                    "answer": Field("category"), "truth_letters": Field("tags", (), tuple("ABCDE")),
                    "generator": Field("category"), "mask": Field("rle"),
                    "artifacts": Field("tags", (), ("blur", "noise"))}
    metrics = {"accuracy": MetricSpec("Accuracy", True), "n_rows": MetricSpec("Rows", True, "num",
                                                                               None, None)}
    artifact_keys = ("blur", "noise")
    accepts_offline_format = True

    def extract(self, kind, text, options):
        t = text.strip().lower()
        if kind == "yesno":
            return t if t in ("yes", "no") else None
        return None

    def score_block(self, block, ctx):
        k = block.task.kind
        if k == "detection":
            correct = block.pred["decision"] == (block.truth["label"] == "fake")
        elif k == "yesno":
            correct = block.pred["answer"] == (block.truth["answer"] == "yes")
        else:
            correct = np.ones(len(block), dtype=bool)
        out = [MetricRecord(block.task.key, "accuracy", {}, float(correct.mean()), n=len(block)),
               MetricRecord(block.task.key, "n_rows", {}, float(len(block)), n=len(block))]
        for m in sorted(set(block.item["modality"].tolist())):
            sel = block.item["modality"] == m
            out.append(MetricRecord(block.task.key, "accuracy", {"modality": m},
                                    float(correct[sel].mean()), n=int(sel.sum())))
        return out


#: the authors' file index of item ``<split>-a<i>`` (see ``sources`` in the toy benchmark.yaml)
ASK_INDEX = {"dev": [5, 3, 7, 1], "test": [0, 2, 4, 6]}


def write_toy_pack(root: Path, *, n: int = 20, extra_item: dict | None = None,
                   extra_label: dict | None = None) -> Path:
    """A toy pack: tasks detect (image+video), ask (image), pick (image), arts (image)."""
    root.mkdir(parents=True, exist_ok=True)
    meta = {
        "key": "toy", "title": "Toy", "version": "1", "modalities": ["image", "video"],
        "splits": ["dev", "test"],
        "tasks": [
            {"key": "detect", "kind": "detection", "modalities": ["image", "video"],
             "headline": "accuracy"},
            {"key": "ask", "kind": "yesno", "modalities": ["image"], "headline": "accuracy"},
            {"key": "pick", "kind": "multiselect", "modalities": ["image"], "headline": "accuracy"},
            {"key": "arts", "kind": "artifacts", "modalities": ["image"], "headline": "accuracy"},
        ],
    }
    import yaml

    # the "ask" items come from an authors' file of 8 records, in an order unlike the pack's
    meta["sources"] = {"ask.json": 8}
    (root / "benchmark.yaml").write_text(yaml.safe_dump(meta))
    (root / "description.md").write_text("# Toy\n")
    (root / "agreement.md").write_text("Be nice.\n")
    (root / "media").mkdir(exist_ok=True)
    for split in ("dev", "test"):
        d = root / "splits" / split
        d.mkdir(parents=True, exist_ok=True)
        items, labels = [], []
        for i in range(n):
            fake = i % 2 == 0
            mod = "image" if i % 4 < 2 else "video"
            items.append({"id": f"{split}-d{i}", "task": "detect", "modality": mod,
                          "width": 4, "height": 3})
            labels.append({"id": f"{split}-d{i}", "label": "fake" if fake else "real",
                           "generator": "g1" if fake else "", "part": "public" if i < n // 2
                           else "private"})
        for i in range(4):
            items.append({"id": f"{split}-a{i}", "task": "ask", "modality": "image",
                          "question": "Is it AI-generated?", "phrasing": "ask_fake"})
            labels.append({"id": f"{split}-a{i}", "answer": "yes" if i % 2 else "no",
                           "part": "public", "source": "ask.json",
                           "source_index": ASK_INDEX[split][i]})
            items.append({"id": f"{split}-p{i}", "task": "pick", "modality": "image",
                          "options": {"A": "a", "B": "b", "C": "c", "D": "d", "E": "none"}})
            labels.append({"id": f"{split}-p{i}", "truth_letters": ["A", "C"], "part": "public"})
            items.append({"id": f"{split}-r{i}", "task": "arts", "modality": "image"})
            labels.append({"id": f"{split}-r{i}", "artifacts": ["blur"], "part": "private"})
        if extra_item:
            items.append(extra_item)
        if extra_label:
            labels.append(extra_label)
        (d / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
        (d / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    return root


def perfect_rows(split: str = "dev", n: int = 20) -> list[dict]:
    rows = []
    for i in range(n):
        fake = i % 2 == 0
        rows.append({"id": f"{split}-d{i}", "label": "fake" if fake else "real",
                     "score": 0.9 if fake else 0.1})
    for i in range(4):
        rows.append({"id": f"{split}-a{i}", "answer": "yes" if i % 2 else "no"})
        rows.append({"id": f"{split}-p{i}", "answer": ["A", "C"]})
        rows.append({"id": f"{split}-r{i}", "artifacts": ["blur"]})
    return rows


def write_rows(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


