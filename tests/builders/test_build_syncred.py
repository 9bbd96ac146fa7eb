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
    (lambda r: (r / "meta.json").write_text('{"nope.png": {"language": "en"}}'),
     "meta.json entry 'nope.png'"),
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
