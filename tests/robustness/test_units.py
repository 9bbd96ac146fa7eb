"""Pieces without Docker: the opaque combined input, splitting predictions back, the plot."""
from __future__ import annotations

import json

from leaderboard.builders.copies import build_copies, plan_copies
from leaderboard.core.robustness.layout import read_manifest
from leaderboard.server.boards.robustness_plot import severity_svg
from leaderboard.server.jobs.robustness_run import build_combined_input, split_predictions


def test_combined_input_hides_conditions_and_splits_back(small_pack, tmp_path):
    copies = build_copies(plan_copies(small_pack, "dev"), tmp_path / "c")
    manifest = read_manifest(copies)
    mapping = build_combined_input(copies, manifest, tmp_path / "in")
    text = (tmp_path / "in" / "items.jsonl").read_text()
    rows = [json.loads(x) for x in text.splitlines()]
    assert len(rows) == len(mapping) == 32
    for word in ("jpeg", "blur", "dev-", "sc-", "clean"):  # no condition, no original id
        assert word not in text
    assert all(r["id"].startswith("r") and len(r["id"]) == 17 for r in rows)
    files = {p.relative_to(tmp_path / "in").as_posix() for p in (tmp_path / "in").rglob("*")
             if p.is_file()}
    assert files == {"items.jsonl"} | {r["media"][0] for r in rows}
    first_split = [mapping[r["id"]][0] for r in rows[:8]]
    assert len(set(first_split)) > 1  # shuffled, not one condition after another
    again = build_combined_input(copies, manifest, tmp_path / "in2")
    assert set(again) != set(mapping)  # a new secret per run
    preds = tmp_path / "p.jsonl"
    lines = [json.dumps({"id": r["id"], "score": 0.5}) for r in rows]
    preds.write_text("\n".join(lines + ['{"id": "r-made-up", "score": 1}', "garbage"]) + "\n")
    dropped = split_predictions(preds, mapping, tmp_path / "split")
    assert dropped == 2
    out = tmp_path / "split" / "dev-image-jpeg-5.jsonl"
    ids = [json.loads(x)["id"] for x in out.read_text().splitlines()]
    assert sorted(ids) == sorted(manifest["subset"]["image"])


def test_severity_plot_escapes_and_breaks_at_na():
    svg = severity_svg([{"label": "<jpeg>", "x": [0, 1, 2], "y": [0.9, None, 0.5]},
                        {"label": "blur", "x": [0, 1], "y": [0.9, 0.8]}],
                       [{"label": "blur", "x": [0, 1], "y": [0.7, 0.6]}],
                       title="t & u", y_label="TPR", fmt="pct")
    assert "<jpeg>" not in svg and "&lt;jpeg&gt;" in svg and "t &amp; u" in svg
    assert svg.count('class="faint"') == 1
    assert svg.count("<polyline") == 1 + 2 + 1  # jpeg broken in two, blur, faint blur
    assert ">clean</text>" in svg and "90.0%" in svg
