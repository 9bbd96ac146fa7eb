"""Pieces without Docker: the assignment of items to conditions, the fresh combined input and
splitting predictions back, the paired drop, the plot."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from leaderboard.builders.copies import build_copies, plan_copies
from leaderboard.core.packs import load_pack
from leaderboard.core.robustness.layout import read_manifest
from leaderboard.core.robustness.scoring import score_copies
from leaderboard.core.robustness.subset import assign_conditions, rounds_needed
from leaderboard.core.scoring import score_predictions
from leaderboard.server.boards.robustness_plot import severity_svg
from leaderboard.server.jobs.robustness_run import (
    INPUT_MTIME_NS,
    build_combined_input,
    round_entries,
    split_predictions,
)
from tests.robustness.conftest import set_plan


def test_assignment_is_balanced_stratified_seeded_and_each_item_once():
    strata = np.array(["d|fake"] * 37 + ["d|real"] * 26 + ["q|A"] * 7)
    n_cond = 6
    one = assign_conditions(strata, n_cond, 1, seed=0, modality="image")
    assert len(one) == 1 and len(one[0]) == n_cond
    blocks = one[0]
    every = np.concatenate(blocks)
    assert sorted(every.tolist()) == list(range(len(strata)))  # each item exactly once
    sizes = [len(b) for b in blocks]
    assert max(sizes) - min(sizes) <= 1  # balanced
    for key in np.unique(strata):  # stratified: each class split evenly to within one
        per = [int((strata[b] == key).sum()) for b in blocks]
        assert max(per) - min(per) <= 1, (key, per)
    again = assign_conditions(strata, n_cond, 1, seed=0, modality="image")
    assert all(np.array_equal(a, b) for a, b in zip(blocks, again[0]))  # seeded
    other = assign_conditions(strata, n_cond, 1, seed=1, modality="image")
    assert not all(np.array_equal(a, b) for a, b in zip(blocks, other[0]))
    # rounds: a Latin square over the same blocks, each item once per round; all C rounds
    # give every condition every item
    full = assign_conditions(strata, n_cond, n_cond, seed=0, modality="image")
    for round_ in full:
        assert sorted(np.concatenate(round_).tolist()) == list(range(len(strata)))
    assert all(np.array_equal(a, b) for a, b in zip(full[0], blocks))
    for c in range(n_cond):
        mine = np.concatenate([full[r][c] for r in range(n_cond)])
        assert sorted(mine.tolist()) == list(range(len(strata)))
    with pytest.raises(ValueError, match="rounds"):
        assign_conditions(strata, n_cond, n_cond + 1, seed=0, modality="image")


def test_rounds_needed():
    assert rounds_needed(2500, 25, 100) == 1      # enough items: one invocation
    assert rounds_needed(3000, 25, 100) == 1
    assert rounds_needed(92, 4, 30) == 2          # 46 items per condition in 2 invocations
    assert rounds_needed(92, 25, 100) == 25       # every condition every item, one at a time
    assert rounds_needed(0, 25, 100) == 0


def test_copies_hold_each_item_once_per_invocation(small_pack, tmp_path):
    plan = plan_copies(small_pack, "dev")
    assert plan.rounds == 1 and len(plan.rows["image"]) == 32 and plan.n_files == 32
    copies = build_copies(plan, tmp_path / "c")
    manifest = read_manifest(copies)
    (round_,) = manifest["rounds"]
    ids = [i for v in round_.values() for i in v]
    assert len(ids) == len(set(ids)) == 32 and set(ids) == set(manifest["subset"]["image"])
    pack = load_pack(copies)
    labels = load_pack(small_pack).labels("dev")
    for c in manifest["conditions"]:
        assert c["items"] == 8 and sorted(pack.items(c["split"]).ids) == sorted(round_[c["split"]])
        fakes = sum(labels.decoded("label")[labels.index[i]] == "fake" for i in round_[c["split"]])
        assert fakes in (4, 5), fakes  # 18 fakes / 32 dealt over 4 conditions
    # a split too small for a condition's own items: rounds, no item twice in one
    set_plan(small_pack, {"items_per_condition": 30, "seed": 0,
                          "suites": {"image": {"degradations": ["jpeg", "blur"],
                                               "levels": [1, 5]}}})
    plan = plan_copies(small_pack, "dev")
    assert plan.rounds == 2 and plan.n_files == 2 * 92
    for c in plan.conditions:
        per_round = plan.round_rows(c)
        assert len(np.concatenate(per_round)) == 46
        assert not set(per_round[0].tolist()) & set(per_round[1].tolist())


def test_combined_input_is_fresh_uniform_and_splits_back(small_pack, tmp_path):
    copies = build_copies(plan_copies(small_pack, "dev"), tmp_path / "c")
    manifest = read_manifest(copies)
    (entries,) = round_entries(copies, manifest)
    dest = tmp_path / "in"
    mapping = build_combined_input(copies, entries, dest)
    text = (dest / "items.jsonl").read_text()
    rows = [json.loads(x) for x in text.splitlines()]
    assert len(rows) == len(mapping) == 32
    for word in ("jpeg", "blur", "dev-", "sc-", "clean"):  # no condition, no original id
        assert word not in text
    assert all(r["id"].startswith("r") and len(r["id"]) == 17 for r in rows)
    assert len({mapping[r["id"]][1] for r in rows}) == 32  # each base item once
    copy_inodes = {os.stat(p).st_ino for p in copies.rglob("*") if p.is_file()}
    paths = [dest, dest / "media", *dest.rglob("*")]
    assert {p.relative_to(dest).as_posix() for p in paths if p.is_file()} == \
        {"items.jsonl"} | {r["media"][0] for r in rows}
    for p in paths:
        st = os.stat(p)
        assert st.st_mtime_ns == INPUT_MTIME_NS, p  # one timestamp for all
        if p.suffix == ".png":  # (reading a file or folder moves its access time, not before)
            assert st.st_atime_ns == INPUT_MTIME_NS, p
        if p.is_file():
            assert st.st_nlink == 1 and st.st_ino not in copy_inodes  # fresh, never linked
            assert st.st_mode & 0o7777 == 0o644
        else:
            assert st.st_mode & 0o7777 == 0o755
    names = [r["media"][0] for r in rows]
    assert all(n.startswith("media/") and n.count("/") == 1 for n in names)  # one flat folder
    assert len({len(n) for n in names if n.endswith(".png")}) == 1  # random, same-length names
    first_split = [mapping[r["id"]][0] for r in rows[:8]]
    assert len(set(first_split)) > 1  # shuffled, not one condition after another
    again = build_combined_input(copies, entries, tmp_path / "in2")
    assert not set(again) & set(mapping)  # new random ids per invocation
    preds = tmp_path / "p.jsonl"
    lines = [json.dumps({"id": r["id"], "score": 0.5}) for r in rows]
    preds.write_text("\n".join(lines + ['{"id": "r-made-up", "score": 1}', "garbage"]) + "\n")
    dropped = split_predictions(preds, mapping, tmp_path / "split")
    assert dropped == 2
    out = tmp_path / "split" / "dev-image-jpeg-5.jsonl"
    ids = [json.loads(x)["id"] for x in out.read_text().splitlines()]
    assert sorted(ids) == sorted(manifest["rounds"][0]["dev-image-jpeg-5"])


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_drop_is_paired_with_the_clean_predictions_on_the_same_items(small_pack, tmp_path):
    plan = plan_copies(small_pack, "dev")
    copies = build_copies(plan, tmp_path / "c", with_labels=True)
    pack = load_pack(copies)
    manifest = read_manifest(copies)
    labels = {json.loads(x)["id"]: json.loads(x)["label"]
              for x in (copies / "splits/dev-clean-0/labels.jsonl").read_text().splitlines()}
    # clean: right on most items, a few reals scored high (so conditions' clean values differ)
    rng = np.random.default_rng(5)
    clean = {i: (0.9 if lab == "fake" else float(rng.choice([0.1, 0.95])))
             for i, lab in labels.items()}
    preds = {"dev-clean-0": _write(tmp_path / "clean.jsonl",
                                   [{"id": i, "score": s} for i, s in clean.items()])}
    conds = [c["split"] for c in manifest["conditions"]]
    same, flat = conds[0], conds[-1]
    for name in conds:
        ids = pack.items(name).ids.tolist()
        scores = {i: clean[i] for i in ids} if name == same else \
            {i: 0.5 for i in ids} if name == flat else \
            {i: (0.2 if labels[i] == "fake" and k % 2 else clean[i]) for k, i in enumerate(ids)}
        preds[name] = _write(tmp_path / f"{name}.jsonl",
                             [{"id": i, "score": s} for i, s in scores.items()])
    result = score_copies(pack, preds, n_resamples=200)
    recs = {json.dumps(r.slice, sort_keys=True): r for r in result.records
            if r.metric == "tpr_at_fpr_5"}

    def rec(**kw):
        return recs[json.dumps({k: str(v) for k, v in kw.items()}, sort_keys=True)]

    drops = []
    for name, c in zip(conds, manifest["conditions"]):
        at = {"modality": "image", "degradation": c["degradation"], "level": c["level"]}
        ref, drop, value = rec(**at, summary="clean"), rec(**at, summary="drop"), rec(**at)
        # the reference is the clean predictions scored on this condition's own items
        alone = _write(tmp_path / f"ref-{name}.jsonl",
                       [{"id": i, "score": clean[i]} for i in pack.items(name).ids.tolist()])
        expected = next(r.value for r in score_predictions(pack, name, alone).parts["all"]
                        if r.metric == "tpr_at_fpr_5" and r.slice == {})
        assert ref.value == pytest.approx(expected) and ref.n == drop.n == value.n == 8
        assert drop.value == pytest.approx(ref.value - value.value)
        drops.append(drop.value)
        if name == same:  # identical answers on the same items: 0 in every resample
            assert (drop.value, drop.ci_low, drop.ci_high) == (0.0, 0.0, 0.0)
        if name == flat:  # all tied at 0.5: TPR at 5% FPR is 0, the drop its reference
            assert value.value == 0.0 and drop.value == pytest.approx(ref.value)
    mean = rec(modality="image", summary="drop")
    assert mean.value == pytest.approx(np.mean(drops)) and mean.n == 32
    assert mean.ci_low <= mean.value <= mean.ci_high
    assert set(result.positions[("detection", "image")]) == {c.split("dev-")[1] for c in conds}


def test_severity_plot_escapes_and_breaks_at_na():
    svg = severity_svg([{"label": "<jpeg>", "x": [0, 1, 2], "y": [0.9, None, 0.5]},
                        {"label": "blur", "x": [0, 1], "y": [0.9, 0.8]}],
                       [{"label": "blur", "x": [0, 1], "y": [0.7, 0.6]}],
                       title="t & u", y_label="TPR", fmt="pct")
    assert "<jpeg>" not in svg and "&lt;jpeg&gt;" in svg and "t &amp; u" in svg
    assert svg.count('class="faint"') == 1
    assert svg.count("<polyline") == 1 + 2 + 1  # jpeg broken in two, blur, faint blur
    assert ">clean</text>" in svg and "90.0%" in svg
