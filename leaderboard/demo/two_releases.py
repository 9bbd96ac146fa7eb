"""Two releases of a demo pack (issue 37, item 6): release 1 without the generator that became
public last, release 2 adding its items, as an organiser publishing a later release would.

`LATER` names, per demo benchmark, the generator release 1 leaves out: for UniAIDet,
Qwen-Image (public 2025-08-04, after every other generator of its demo and after the demo
baselines' made-at dates, `leaderboard.server.demo_seed.DEMO_MADE_AT`). Release 2 is the full
demo pack (``release: 2``, version "2") plus `EXTRA` more images of that generator per domain
(drawn by the demo's own UniAIDet renderer, ids and splits as the generator makes them), so
its column has enough items on every board part; release 1 is the full pack without that
generator's items, labels and media, and without its row in the ``generators:`` table (version
"1"). Every item of release 1 is byte for byte an item of release 2, so release 2 passes the
server's "adds, never changes" check (`leaderboard.server.services.releases.check_additive`).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import orjson
import yaml

from leaderboard.demo import images, uniaidet
from leaderboard.demo.writer import assign_part, assign_split

#: demo benchmark -> the generator its release 1 leaves out (release 2 adds it)
LATER = {"uniaidet": "Qwen-Image"}
#: images of the later generator release 2 adds per domain, beyond the pack's own three
EXTRA = 24
#: the renderer's row numbers of the extra images start here (past any small pack's rows)
_FIRST_EXTRA = 100_000


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _set_meta(pack: Path, **fields) -> dict:
    path = pack / "benchmark.yaml"
    raw = yaml.safe_load(path.read_text())
    raw.update(fields)
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
    return raw


def derive(full: Path, out: Path, *, generator: str, seed: int = 0) -> tuple[Path, Path]:
    """Write ``out/v1`` (``full`` without ``generator``'s items) and ``out/v2`` (``full`` as
    release 2); both replaced. Returns their paths."""
    v1, v2 = out / "v1", out / "v2"
    for dest in (v1, v2):
        if dest.exists():
            shutil.rmtree(dest)
    out.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns(".cache")
    shutil.copytree(full, v2, ignore=ignore)
    _set_meta(v2, release=2, version="2")
    _add_uniaidet(v2, generator, seed=seed)
    shutil.copytree(full, v1, ignore=ignore)
    raw = yaml.safe_load((v1 / "benchmark.yaml").read_text())
    _set_meta(v1, release=1, version="1",
              generators=[g for g in raw.get("generators", []) if g["key"] != generator])
    later: set[str] = set()
    for split_dir in sorted((v1 / "splits").iterdir()):
        mine = {r["id"] for r in _rows(split_dir / "labels.jsonl")
                if r.get("generator") == generator}
        for name in ("labels.jsonl", "items.jsonl"):
            path = split_dir / name
            kept = [line for line in path.read_text().splitlines()
                    if line.strip() and json.loads(line)["id"] not in mine]
            path.write_text("".join(line + "\n" for line in kept))
        later |= mine
    for media in list((v1 / "media").rglob("*")):
        if media.is_file() and media.stem in later:  # media are named by item id
            media.unlink()
    return v1, v2


def _add_uniaidet(pack: Path, generator: str, *, seed: int) -> None:
    """Append `EXTRA` images of ``generator`` per domain to a UniAIDet demo pack (small scale:
    the renderer, sizes, ids, splits and parts of `leaderboard.demo.uniaidet.generate`)."""
    family = uniaidet.FAMILY_OF[generator]
    if family in ("inpainting", "editing", "deepfake"):
        raise ValueError(f"{generator!r} is a partial generator: its items would need masks")
    rows: dict[str, list[tuple[bytes, bytes]]] = {}
    for d, domain in enumerate(uniaidet.DOMAINS):
        for i in range(EXTRA):
            n = _FIRST_EXTRA + d * EXTRA + i
            rng = np.random.default_rng([seed, n])
            h, w = uniaidet.SIZES[int(rng.integers(0, 3))]
            img, _mask = uniaidet.render(domain, generator, rng, h, w)
            item_id = uniaidet.opaque_id(domain, generator, n, seed=seed)
            rel = f"media/images/{item_id}.png"
            (pack / rel).write_bytes(images.png_bytes(img))
            item = {"id": item_id, "task": "detection", "modality": "image", "width": w,
                    "height": h, "media": [rel]}
            truth = {"id": item_id, "label": "fake", "domain": domain, "family": family,
                     "generator": generator}
            key = f"{domain}:{generator}:{n}"
            split = assign_split(key, seed=seed)
            if split == "test":
                truth["part"] = assign_part(key, seed=seed)
            rows.setdefault(split, []).append((orjson.dumps(item), orjson.dumps(truth)))
    for split, pairs in rows.items():
        with open(pack / "splits" / split / "items.jsonl", "ab") as items, \
                open(pack / "splits" / split / "labels.jsonl", "ab") as labels:
            for item, truth in pairs:
                items.write(item + b"\n")
                labels.write(truth + b"\n")
