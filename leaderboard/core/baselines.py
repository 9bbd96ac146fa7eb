"""Reference submissions: random, all-fake and all-real predictions for any pack and split.

They are the rows every board marks as baselines. For tasks that are not plain detection, "all-fake"
answers as a detector that believes every item is fake would: "yes" to "is it AI-generated?", "no"
to "is it real?" (LOKI's ``phrasing``), "yes" to TriDF's artifact questions; choice tasks take the
first option; open questions say the item is manipulated and name no artifact. "all-real" is the
mirror image. These rules are deliberately simple and documented, not tuned.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import orjson

KINDS = ("random", "all-fake", "all-real")

_EXPLANATIONS = (
    "The lighting on the subject does not match the background.",
    "Edges around the object are blurry and the texture looks unnatural.",
    "Text in the image is unreadable and the hands have the wrong number of fingers.",
    "The shadows fall in inconsistent directions.",
)


def baseline_rows(pack, split: str, kind: str, *, seed: int = 0):
    """Yield one prediction row per item of ``split``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    rng = np.random.default_rng(seed)
    items = pack.items(split)
    task_of = items.decoded("task")
    kinds = {t.key: t.kind for t in pack.tasks}
    phrasing = items.decoded("phrasing") if "phrasing" in items.columns else None
    art_keys = list(pack.benchmark.artifact_keys)
    fake = kind == "all-fake"
    for i, rid in enumerate(items.ids.tolist()):
        k = kinds[str(task_of[i])]
        row: dict = {"id": rid}
        if k == "detection":
            if kind == "random":
                s = float(rng.random())
                row.update(label="fake" if s >= 0.5 else "real", score=round(s, 6))
            else:
                row.update(label="fake" if fake else "real", score=1.0 if fake else 0.0)
        elif k == "yesno":
            if kind == "random":
                row["answer"] = "yes" if rng.random() < 0.5 else "no"
            else:
                asks_real = phrasing is not None and phrasing[i] == "ask_real"
                row["answer"] = "yes" if fake != asks_real else "no"
        elif k in ("choice", "multiselect"):
            letters = sorted((items.value("options", i) or {"A": ""}).keys())
            if kind == "random":
                if k == "choice":
                    row["answer"] = letters[int(rng.integers(len(letters)))]
                else:
                    pick = rng.random(len(letters)) < 0.5
                    if not pick.any():
                        pick[int(rng.integers(len(letters)))] = True
                    row["answer"] = [x for x, p in zip(letters, pick) if p]
            else:
                row["answer"] = letters[0] if k == "choice" else [letters[0]]
        elif k == "explanation":
            row["response"] = (_EXPLANATIONS[int(rng.integers(len(_EXPLANATIONS)))]
                               if kind == "random" else
                               "This looks AI-generated." if fake else "This looks authentic.")
        elif k == "artifacts":
            if kind == "random" and art_keys:
                n = int(rng.integers(1, min(3, len(art_keys)) + 1))
                row["artifacts"] = sorted(rng.choice(art_keys, size=n, replace=False).tolist())
                row["label"] = "fake" if rng.random() < 0.5 else "real"
            else:
                row.update(artifacts=[], label="fake" if fake else "real")
        yield row


def write_baseline(pack, split: str, kind: str, out: str | Path, *, seed: int = 0) -> int:
    """Write a baseline predictions file (gzip when ``out`` ends in .gz); returns the row count."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if out.suffix == ".gz" else open
    n = 0
    with opener(out, "wb") as fh:
        for row in baseline_rows(pack, split, kind, seed=seed):
            fh.write(orjson.dumps(row) + b"\n")
            n += 1
    return n
