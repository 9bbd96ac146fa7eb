"""VCT² against the authors' code, pinned: the values of ``data/vct2_authors.json`` come from
running Hasnat79/VCT_2 (commit befabc3) outside this repository, through
``conformance/check.py --only vct2 --json``:

* the seven Visual AI Index features of ``vai_scripts/feature_extraction_agid.py``
  (``calculate_texture_complexity``, ``calculate_color_distribution_consistency``,
  ``calculate_object_coherence``, ``calculate_contextual_relevance``,
  ``calculate_image_smoothness``, ``calculate_image_sharpness``, ``calculate_image_contrast``) on
  images read with ``cv2.imread``, here the fixture's images (the runner adds real ones);
* per subset x generator: ``calculate_metrics(y_true, y_pred, 0.5)`` of
  ``detection_scripts/universal_fake_detect_validate_sd35_new.py`` (accuracy, precision, recall,
  f.Acc, r.Acc; precision 0 with no predicted fake) and ``sklearn.metrics.
  average_precision_score`` (what that script's ``validate`` calls); the means of those cells.

Fixture: `tests/conformance/vct2_fixture.py` (tables in the authors' Hugging Face shape).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard.builders import vct2 as builder
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from leaderboard.features.vai import FEATURES, features_from_files
from tests.conformance.vct2_fixture import CASES, cells, item_id, scores, write_release

PINNED = json.loads((Path(__file__).parent / "data" / "vct2_authors.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    root = tmp_path_factory.mktemp("vct2-conformance")
    builder.build(write_release(root / "release"), root / "pack", dev_fraction=0.0)
    return load_pack(root / "pack")


def test_vai_features_match_the_authors_functions(tmp_path):
    rows = [r for r in PINNED["rows"] if r["case"] == "vai features"]
    by_name = {f"fixture:{s}_{r}_{c}.png": data for s, r, c, _, data in cells()}
    assert len(rows) == 7 * 9  # every 9th image of the fixture
    for r in rows:
        path = tmp_path / r["slice"]["image"].removeprefix("fixture:")
        if not path.exists():
            path.write_bytes(by_name[r["slice"]["image"]])
        ours = dict(zip(FEATURES, features_from_files([path])[0]))
        assert ours[r["metric"].removeprefix("vai.")] == pytest.approx(r["authors"], abs=1e-9), r


@pytest.mark.parametrize("case", CASES)
def test_detection_metrics_match_calculate_metrics(pack, case, tmp_path):
    preds = tmp_path / "preds.jsonl"
    with open(preds, "w", encoding="utf-8") as fh:
        for (_, _, _, _, data), (s, label) in zip(cells(), scores(case)):
            fh.write(json.dumps({"id": item_id(data), "score": s,
                                 **({"label": label} if label else {})}) + "\n")
    recs = {(r.metric, tuple(sorted(r.slice.items()))): r.value
            for r in score_predictions(pack, "test", preds, n_resamples=20).parts["all"]}
    rows = [r for r in PINNED["rows"] if r["case"] == case]
    assert len(rows) == 11 * 6 + 3 * 3
    for r in rows:
        ours = recs[(r["metric"], tuple(sorted(r["slice"].items())))]
        assert ours == pytest.approx(r["authors"], abs=1e-9), r
    if case == "all_real":  # no predicted fake anywhere: precision 0, the means defined
        assert recs[("mean_precision", ())] == 0.0
    if case == "all_half":  # scores only, all exactly 0.5: real by their rule (score > 0.5)
        assert recs[("mean_recall", ())] == 0.0 == recs[("mean_precision", ())]
        assert recs[("mean_accuracy", ())] == 0.5
