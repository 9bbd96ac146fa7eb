"""SynCred-Bench pack from CONTENT_STYLE_INDEX file names, meta.json and the FP450 folder."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from leaderboard.builders import syncred
from leaderboard.builders.common import SourceError
from leaderboard.core.benchmarks.syncred import FORMS, STYLES
from leaderboard.core.packs import load_pack
from tests.builders.helpers import items_of, labels_of, score_baseline, write_png


def make_release(root: Path) -> Path:
    k = 0
    for form in FORMS:
        for style in STYLES[:3]:
            write_png(root / "SynCred-600" / f"{form}_{style}_{k:03d}.png", seed=k)
            k += 1
    for j in range(10):  # FP450: a few with the same naming, most with their own names
        name = f"{FORMS[j % 6]}_SP_{j:03d}.png" if j < 4 else f"real_{j}.jpg.png"
        write_png(root / "FP450" / name, seed=1000 + j)
    (root / "README.txt").write_text("not an image")
    (root / "meta.json").write_text(json.dumps({
        "ML_NR_000.png": {"language": "zh"}, "IN_SC_004.png": {"language": "en", "style": "cv"},
        "FP450/real_5.jpg.png": {"language": "EN", "form": "AM"}}))
    return root


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return make_release(tmp_path_factory.mktemp("syncred") / "SynCred-Bench")


def _by_source(out: Path, split: str, release: Path) -> dict[str, dict]:
    """Labels keyed by the source file name (matched through the image bytes)."""
    import hashlib

    digest = {hashlib.sha256(p.read_bytes()).hexdigest()[:16]: p.name
              for p in release.rglob("*.png")}
    return {digest[i[3:]]: lab for i, lab in labels_of(out, split).items()}


def test_builds_positives_negatives_and_overrides(release, tmp_path):
    out = tmp_path / "pack"
    report = syncred.build(release, out, dev_fraction=0.0)
    pack = load_pack(out)
    pack.validate()
    assert report.counts == {"test": 28}
    labels = _by_source(out, "test", release)
    assert sum(lab["label"] == "fake" for lab in labels.values()) == 18
    assert labels["PI_CC_008.png"] | {"part": None} == {"id": labels["PI_CC_008.png"]["id"],
                                                         "label": "fake", "form": "PI",
                                                         "style": "CC", "part": None}
    assert labels["ML_NR_000.png"]["language"] == "zh"
    assert labels["IN_SC_004.png"]["style"] == "CV"  # meta.json overrides the file name
    assert labels["ML_SP_000.png"]["label"] == "real"  # FP450 keeps form/style from its name
    assert labels["real_5.jpg.png"] == {**labels["real_5.jpg.png"], "label": "real",
                                        "form": "AM", "language": "en"}
    assert "style" not in labels["real_6.jpg.png"]
    items = items_of(out, "test")
    assert all(i.startswith("sc-") and "_" not in it["media"][0] for i, it in items.items())
    records = score_baseline(pack, "test", "all-fake", tmp_path)
    assert records[("detection", "tpr", ())].value == 1.0
    assert records[("detection", "fpr", ())].value == 1.0
    assert records[("detection", "tpr_at_fpr_5", ())].value == 0.0
    assert ("detection", "tpr", (("form", "AD"),)) in records
    assert ("detection", "tpr", (("style_group", "DR"),)) in records


@pytest.mark.parametrize("edit, where", [
    (lambda r: write_png(r / "SynCred-600" / "XX_NR_001.png", seed=5000),
     "SynCred-600/XX_NR_001.png"),
    (lambda r: (r / "meta.json").write_text('{"ML_NR_000.png": {"language": "fr"}}'),
     "meta.json entry 'ML_NR_000.png', field 'language'"),
    (lambda r: (r / "meta.json").write_text('[{"image": "ML_NR_000.png", "category": "Memo"}]'),
     "meta.json record 0, field 'form'"),
    (lambda r: (r / "meta.json").write_text(
        '[{"image": "ML_NR_000.png", "style": "SC"}, {"file": "ML_NR_000.png", "style": "CV"}]'),
     "meta.json record 1, field 'style': style 'CV' contradicts 'SC' given by meta.json record 0"),
    (lambda r: (r / "meta.json").write_text('{"data": [3]}'), "meta.json record 0"),
    (lambda r: (r / "meta.json").write_text('"rows"'), "meta.json"),
    (lambda r: shutil.copy(r / "SynCred-600/ML_NR_000.png", r / "SynCred-600/ML_NR_999.png"),
     "SynCred-600/ML_NR_999.png"),
])
def test_malformed_release_names_the_file(release, tmp_path, edit, where):
    bad = tmp_path / "bad"
    shutil.copytree(release, bad)
    edit(bad)
    with pytest.raises(SourceError) as exc:
        syncred.build(bad, tmp_path / "pack")
    assert where in str(exc.value)


def test_meta_json_in_the_authors_load_metadata_shapes(release, tmp_path):
    """Every shape scripts/evaluate_mllm.py's load_metadata reads (thu-coai/Syncred-Bench 4a0f638):
    a list of rows, {"data": [...]}, {"items": [...]}, one row object; image/file/filename keys
    matched by base name; labels.artifact_type / category and labels.style / style, as names."""
    rel = tmp_path / "rel"
    shutil.copytree(release, rel)
    (rel / "meta.json").unlink()
    (rel / "SynCred-600" / "meta.json").write_text(json.dumps([
        {"image": "ML_NR_000.png", "labels": {"artifact_type": "Assessment Material",
                                               "style": "Fax Copy"}, "lang": "zh",
         "claim": "kept out of the pack", "prompt": {"nested": True}},
        {"image": "/abs/elsewhere/IN_SC_004.png", "category": "platform interface",
         "style": "cv", "language": "English"},
        {"file": "PI_CC_008.png", "labels": {"language": "en"}},
        {"caption": "a row with no image name is skipped"},
        {"image": "not_in_the_release.png", "category": "ML"},
    ]))
    (rel / "FP450" / "meta.json").write_text(json.dumps(
        {"data": [{"filename": "real_5.jpg.png", "category": "AM", "ground_truth": "real"}]}))
    (rel / "FP450" / "sub").mkdir()
    (rel / "FP450" / "sub" / "meta.json").write_text(json.dumps(
        {"image": "real_6.jpg.png", "style": "Screen Photograph"}))  # scope: FP450/sub only
    (rel / "FP450" / "items").mkdir()
    (rel / "FP450" / "items" / "meta.json").write_text(json.dumps(
        {"items": [{"image": "real_7.jpg.png", "style": "SP"}]}))  # real_7 is in FP450, not here
    report = syncred.build(rel, tmp_path / "pack", dev_fraction=0.0)
    load_pack(tmp_path / "pack").validate()
    labels = _by_source(tmp_path / "pack", "test", rel)
    assert labels["ML_NR_000.png"] | {"part": None, "id": None} == {
        "id": None, "part": None, "label": "fake", "form": "AM", "style": "FC", "language": "zh"}
    assert (labels["IN_SC_004.png"]["form"], labels["IN_SC_004.png"]["style"],
            labels["IN_SC_004.png"]["language"]) == ("PI", "CV", "en")
    assert labels["PI_CC_008.png"]["language"] == "en"
    assert labels["real_5.jpg.png"]["form"] == "AM" and labels["real_5.jpg.png"]["label"] == "real"
    assert "style" not in labels["real_6.jpg.png"] and "style" not in labels["real_7.jpg.png"]
    assert any("1 meta.json rows name no image" in n for n in report.notes)
    assert any("3 meta.json rows name images that are not in the release" in n
               for n in report.notes)


def test_scoring_only_pack_without_media(release, tmp_path):
    """Labels and ids only: images listed as absent, rows of meta.json without their image."""
    full = tmp_path / "full"
    syncred.build(release, full, dev_fraction=0.0)
    rel = tmp_path / "rel"
    shutil.copytree(release, rel)
    (rel / "SynCred-600" / "ML_NR_000.png").unlink()      # named by meta.json: stays an item
    (rel / "SynCred-600" / "AM_SC_016.png").unlink()      # named by nothing: gone
    (rel / "meta.json").write_text(json.dumps([
        {"image": "SynCred-600/ML_NR_000.png", "language": "zh"},
        {"image": "FP450/gone_negative.png"},
        {"image": "elsewhere/AD_NR_77.png", "ground_truth": "ai", "language": "en"}]))
    out = tmp_path / "scoring"
    report = syncred.build(rel, out, dev_fraction=0.0, scoring_only=True)
    pack = load_pack(out)
    pack.validate()
    assert pack.scoring_only and not any((out / "media").rglob("*.*"))
    assert "Scoring-only benchmark" in pack.text("description")
    assert report.absent == {"images": 29} and report.not_in_release == 3
    assert "29 media files listed as absent (29 images); 3 of them" in report.absent_summary()
    labels, items = labels_of(out, "test"), items_of(out, "test")
    assert all(it["media"][0].startswith("media/images/") for it in items.values())
    # images that are there keep the ids of the full build
    full_ids = set(labels_of(full, "test"))
    assert len(set(labels) & full_ids) == 26
    absent = {i: lab for i, lab in labels.items() if i not in full_ids}
    assert sorted((lab["label"], lab.get("form"), lab.get("language")) for lab in absent.values()) \
        == [("fake", "AD", "en"), ("fake", "ML", "zh"), ("real", None, None)]
    import hashlib
    want = "sc-" + hashlib.sha256(b"absent:FP450/gone_negative.png").hexdigest()[:16]
    assert absent[want]["label"] == "real"
    records = score_baseline(pack, "test", "all-fake", tmp_path)
    assert records[("detection", "tpr", ())].value == 1.0


def test_scoring_only_row_needs_a_label_when_nothing_else_says(release, tmp_path):
    rel = tmp_path / "rel"
    shutil.copytree(release, rel)
    (rel / "meta.json").write_text(json.dumps([{"image": "misc/photo.png"}]))
    with pytest.raises(SourceError) as exc:
        syncred.build(rel, tmp_path / "pack", scoring_only=True)
    assert "meta.json record 0, field 'label'" in str(exc.value)
