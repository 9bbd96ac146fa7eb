"""The ``benchmark.yaml`` of a one-split copy of a pack: what a team's download holds (issue 33).

A split's archive is itself a pack (design "Benchmark packs"), so its ``benchmark.yaml`` may list
only the split it carries, and names its texts by the standard names it stores them under. That
file is `split_meta` of the pack's own: the same mapping with ``splits: [split]``,
``description: description.md`` and ``agreement: agreement.md``, dumped by PyYAML's
``safe_dump`` (keys in the pack's order, Unicode kept). Nothing else changes, so every field
scoring reads (tasks, modalities, headline metrics, releases, generators, extras) is the pack's.

Receipts commit to these bytes (`leaderboard.core.transparency.receipts.pack_digests`), not to
the server's file: ``sha256sum benchmark.yaml`` of a team's download equals the receipt's
``pack.benchmark_yaml``, and the server's full pack (or the organisers' release) gives the same
digest once narrowed. `split_meta` is idempotent: narrowing a download gives its bytes back.
"""
from __future__ import annotations

import yaml

from leaderboard.core.errors import PackError, ProblemList


def split_meta(text: str | bytes, split: str) -> bytes:
    """``benchmark.yaml`` narrowed to ``split`` (module docstring), UTF-8.

    PackError (naming the file) when the text is not a YAML mapping or does not list ``split``.
    """
    problems = ProblemList()
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raw = None
        problems.add(f"not valid YAML: {exc}", file="benchmark.yaml")
    else:
        if not isinstance(raw, dict):
            problems.add("must be a mapping of fields", file="benchmark.yaml")
        elif split not in (raw.get("splits") or []):
            problems.add(f"does not list the split {split!r}", field="splits",
                         file="benchmark.yaml")
    if problems:
        raise PackError("invalid benchmark.yaml", problems)
    raw.update(splits=[split], description="description.md", agreement="agreement.md")
    return yaml.safe_dump(raw, sort_keys=False, allow_unicode=True).encode("utf-8")
