"""The degraded copies of one split, laid out as a pack (so the toolkit scores them unchanged).

::

    <copies>/benchmark.yaml        the pack's, with ``splits`` = the condition splits below
    <copies>/description.md, agreement.md
    <copies>/robustness.json       the manifest: suites, parameters, library versions, subset
                                   ids, every file's sha256 and the digest of them all
    <copies>/splits/<split>-clean-0/items.jsonl          the subset, original media (level 0)
    <copies>/splits/<split>-<modality>-<degradation>-<level>/items.jsonl
    <copies>/splits/<...>/labels.jsonl                   only in a dev download (its agreement)
    <copies>/media/clean/<path under the pack's media/>
    <copies>/media/<modality>/<degradation>/<level>/<path under media/, new suffix>

A condition's split holds the items assigned to it (`subset.assign_conditions`); ``rounds`` in
the manifest lists, per invocation of the container, each condition's item ids (no id twice in
one round). Items keep their ids and every public field; only ``media`` changes. Labels are the
originals' (the server never writes them here: it scores with its decrypted copy).
"""
from __future__ import annotations

import json
import posixpath
from pathlib import Path

from leaderboard.core.robustness.config import Condition

MANIFEST = "robustness.json"
#: bump when the layout or manifest fields change (part of the cache key)
LAYOUT_VERSION = "2"
CLEAN = "clean"


def condition_split(split: str, condition: Condition | None) -> str:
    """``dev-image-jpeg-3``; the clean subset (``condition=None``) is ``dev-clean-0``."""
    if condition is None:
        return f"{split}-{CLEAN}-0"
    return f"{split}-{condition.key}"


def degraded_path(rel: str, condition: Condition | None, suffix: str | None) -> str:
    """Where the degraded copy of the pack's media file ``rel`` (``media/...``) lives."""
    norm = posixpath.normpath(rel)
    if not norm.startswith("media/"):
        raise ValueError(f"media path {rel!r} is not under media/")
    inner = norm[len("media/"):]
    if condition is None:
        return f"media/{CLEAN}/{inner}"
    if suffix:
        inner = posixpath.splitext(inner)[0] + suffix
    return f"media/{condition.modality}/{condition.degradation}/{condition.level}/{inner}"


def read_manifest(root: str | Path) -> dict:
    """The manifest of a copies folder; ValueError when it is missing or unreadable."""
    path = Path(root) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a degraded-copies manifest ({exc})") from None


def manifest_conditions(manifest: dict) -> list[Condition]:
    return [Condition(c["modality"], c["suite"], c["degradation"], int(c["level"]))
            for c in manifest["conditions"]]
