"""The plan in benchmark.yaml, the stratified subset, and copies built once per suite version."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from leaderboard.builders.copies import build_copies, plan_copies
from leaderboard.core.errors import PackError
from leaderboard.core.packs import load_pack
from leaderboard.core.robustness import SUITES, Degradation, Suite, parse_config
from leaderboard.core.robustness.layout import read_manifest
from leaderboard.core.robustness.subset import select_subset, strata_of, take_rows
from tests.robustness.conftest import set_plan


def test_default_plan_and_field_errors():
    cfg = parse_config(None, modalities=("image", "text"), splits=("dev", "test"))
    assert [p.suite.ref for p in cfg.plans] == ["images@1"]
    assert len(cfg.conditions()) == 25 and cfg.items_per_condition == 100
    assert parse_config(False, modalities=("image",), splits=("dev",)) is None
    assert parse_config(None, modalities=("text",), splits=("dev",)) is None
    bad = {"items_per_condition": 0, "splits": ["nope"], "colour": 1,
           "suites": {"image": {"degradations": ["jpeg", "sepia"], "levels": [0]},
                      "audio": {}}}
    with pytest.raises(PackError) as exc:
        parse_config(bad, modalities=("image",), splits=("dev",))
    for field in ("robustness.items_per_condition", "robustness.splits", "robustness.colour",
                  "robustness.suites.image.degradations", "robustness.suites.audio"):
        assert field in str(exc.value.as_dict()), field
    with pytest.raises(PackError, match="invalid benchmark.yaml") as exc:
        parse_config({"suites": {"image": {"suite": "images", "version": "9"}}},
                     modalities=("image",), splits=("dev",))
    assert "versions of 'images' known here" in str(exc.value.as_dict())


def test_validate_pack_checks_the_plan(small_pack):
    set_plan(small_pack, {"items_per_condition": "many"})
    with pytest.raises(PackError):
        load_pack(small_pack).validate(check_media=False)


def test_subset_is_stratified_seeded_and_stable(small_pack):
    pack = load_pack(small_pack)
    items, labels = pack.items("test"), pack.labels("test")
    rows = select_subset(items, labels, modality="image", n=20, seed=0)
    assert len(rows) == 20 and np.all(np.diff(rows) > 0)
    assert np.array_equal(rows, select_subset(items, labels, modality="image", n=20, seed=0))
    assert not np.array_equal(rows, select_subset(items, labels, modality="image", n=20, seed=1))
    all_strata = strata_of(items, labels, np.arange(len(items)))
    fake_share = np.mean(["|fake" in s for s in all_strata])
    picked = np.mean(["|fake" in s for s in strata_of(items, labels, rows)])
    assert abs(picked - fake_share) <= 1 / 20 + 1e-9  # proportional to within one item
    sub = take_rows(labels, rows)
    assert list(sub.ids) == [items.ids[i] for i in rows]
    assert list(sub.decoded("label")) == list(labels.decoded("label")[rows])


def _mtimes(folder):
    return {p: os.stat(p).st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def test_built_once_rebuilt_only_for_a_new_suite_version(small_pack, tmp_path, monkeypatch):
    out = tmp_path / "copies"
    plan = plan_copies(small_pack, "dev")
    first = build_copies(plan, out)
    manifest = read_manifest(first)
    assert [c["split"] for c in manifest["conditions"]] == ["dev-image-jpeg-1", "dev-image-jpeg-5",
                                                             "dev-image-blur-1",
                                                             "dev-image-blur-5"]
    assert manifest["libraries"]["pillow"] and manifest["digest"]
    assert len(manifest["subset"]["image"]) == 32  # 4 conditions x 8 items, each once
    assert not (first / "splits" / "dev-image-jpeg-1" / "labels.jsonl").exists()
    copies = load_pack(first)
    assert copies.splits[0] == "dev-clean-0" and len(copies.items("dev-image-blur-5")) == 8
    stamp = _mtimes(first)
    # nothing that leaves the inputs alone rebuilds: a second request, another title
    meta = (small_pack / "benchmark.yaml").read_text()
    (small_pack / "benchmark.yaml").write_text(meta.replace("title: SynCred-Bench",
                                                            "title: Renamed"))
    (small_pack / "description.md").write_text("changed")
    again = plan_copies(small_pack, "dev")
    assert again.key == plan.key
    assert build_copies(again, out) == first and _mtimes(first) == stamp
    # a new version of the suite does
    base = load_pack(small_pack).meta.extras["robustness"]
    newer_suite = Suite("images", "1-test", "image", (
        Degradation("jpeg", "JPEG", ({"quality": 80},) * 4 + ({"quality": 5},), ".jpg"),
        Degradation("blur", "blur", tuple({"sigma": s} for s in (1, 2, 3, 4, 6)), ".png")))
    monkeypatch.setitem(SUITES, newer_suite.ref, newer_suite)
    set_plan(small_pack, {**base, "suites": {"image": {**base["suites"]["image"],
                                                       "version": "1-test"}}})
    newer = plan_copies(small_pack, "dev")
    assert newer.key != plan.key
    second = build_copies(newer, out)
    assert second != first and _mtimes(first) == stamp
    a = (first / "media/image/jpeg/5").rglob("*.jpg")
    b = (second / "media/image/jpeg/5").rglob("*.jpg")
    assert sorted(p.read_bytes() for p in a) != sorted(p.read_bytes() for p in b)


def test_offline_copies_carry_labels_and_score(small_pack, tmp_path):
    from click.testing import CliRunner

    from leaderboard.cli import main
    from leaderboard.core.baselines import write_baseline

    runner = CliRunner()
    res = runner.invoke(main, ["degrade", "--pack", str(small_pack), "--split", "dev",
                               "--out", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    folder = tmp_path / "c" / plan_copies(small_pack, "dev").key
    assert (folder / "splits" / "dev-image-jpeg-5" / "labels.jsonl").is_file()
    copies = load_pack(folder)
    preds = tmp_path / "preds"
    preds.mkdir()
    for split in copies.splits:
        write_baseline(copies, split, "all-fake", preds / f"{split}.jsonl")
    res = runner.invoke(main, ["robustness-score", "--copies", str(folder), "--predictions",
                               str(preds), "--json"])
    assert res.exit_code == 0, res.output
    records = json.loads(res.output)["records"]
    slices = {json.dumps(r["slice"], sort_keys=True) for r in records}
    assert '{"degradation": "jpeg", "level": "5", "modality": "image"}' in slices
    assert '{"degradation": "blur", "modality": "image", "summary": "mean"}' in slices
    assert '{"modality": "image", "summary": "drop"}' in slices
    res = runner.invoke(main, ["robustness-score", "--copies", str(folder), "--predictions",
                               str(preds)])
    assert "detection / image (tpr_at_fpr_5); level 0 = clean" in res.output
    assert "worst:" in res.output
    res = runner.invoke(main, ["robustness-inputs", "--copies", str(folder), "--out",
                               str(tmp_path / "in")])
    assert res.exit_code == 0, res.output
    one = tmp_path / "in" / "dev-image-blur-5"
    assert (one / "items.jsonl").is_file() and not (one / "labels.jsonl").exists()


def test_held_out_subsets_use_the_public_part_only(small_pack):
    plan = plan_copies(small_pack, "test")
    labels = load_pack(small_pack).labels("test")
    parts = set(labels.decoded("part")[plan.rows["image"]].tolist())
    assert parts == {"public"} and len(plan.rows["image"]) == 32


def test_offline_commands_fail_with_a_message(small_pack, tmp_path):
    from click.testing import CliRunner

    from leaderboard.cli import main

    runner = CliRunner()
    set_plan(small_pack, False)
    res = runner.invoke(main, ["degrade", "--pack", str(small_pack), "--split", "dev",
                               "--out", str(tmp_path)])
    assert res.exit_code == 1 and "has no robustness plan for split 'dev'" in res.output
    res = runner.invoke(main, ["robustness-score", "--copies", str(small_pack),
                               "--predictions", str(tmp_path)])
    assert res.exit_code == 1 and "not a degraded-copies manifest" in res.output
