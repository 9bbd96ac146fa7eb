"""Make release N+1 of a pack folder for tests (issue 37): copy, add items, optionally change one.

Independent of the server's release code: it edits the pack's files as an organiser would.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def next_release(src: Path, dest: Path, *, release: int, add: int = 6, prefix: str = "r",
                 meta: dict | None = None, new_label: dict | None = None,
                 change_first_label: dict | None = None, drop_first: bool = False) -> Path:
    """Copy pack ``src`` to ``dest`` as release ``release``: each split gets ``add`` new items
    (copies of its first items with ids ``<prefix><release>-<old id>``, the same media, labels
    updated with ``new_label``); ``meta`` is merged into benchmark.yaml; ``change_first_label``
    alters the first old item's label (a value, or a function of the old value), ``drop_first`` removes it (both make an invalid release)."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".cache"))
    meta_path = dest / "benchmark.yaml"
    raw = yaml.safe_load(meta_path.read_text())
    raw["release"] = release
    raw.update(meta or {})
    meta_path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
    for split_dir in sorted((dest / "splits").iterdir()):
        items, labels = _rows(split_dir / "items.jsonl"), _rows(split_dir / "labels.jsonl")
        by_id = {r["id"]: r for r in labels}
        extra_items, extra_labels = [], []
        for item in items[:add]:
            new_id = f"{prefix}{release}-{item['id']}"
            extra_items.append({**item, "id": new_id})
            extra_labels.append({**by_id[item["id"]], "id": new_id, **(new_label or {})})
        if change_first_label:
            first = by_id[items[0]["id"]]
            first.update({k: v(first[k]) if callable(v) else v
                          for k, v in change_first_label.items()})
        if drop_first:
            first = items[0]["id"]
            items, labels = items[1:], [r for r in labels if r["id"] != first]
        _write(split_dir / "items.jsonl", items + extra_items)
        _write(split_dir / "labels.jsonl", labels + extra_labels)
    return dest
