"""TriDF end to end on the authors' file formats: build, their inference outputs in, their numbers out.

The fixture (`tests.conformance.tridf_fixture`) holds excerpts of the authors' question files and
ground truth in their ``2_GT_Final`` format. The PINNED numbers were derived by running the
authors' scorers (j1anglin/TriDF at f041a19c4b292f83233a72b48e3241b4867c7ad7) on exactly these
files and predictions, outside this repository:
``score_perception_original.score`` (TFQ and MCQ "accuracy", overall and ``by_modality``),
``eval_accuracy.evaluate_file`` (type B, strict) and ``cal_score.CoverCalculator`` with
``build_combined_summary`` (macro_cover, macro_chair, hal_rate, macro_f_beta; the eval CSVs in
``convert_mapping_result_to_eval_csv.py``'s format, detection_prediction from ``get_prediction``).
"""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from leaderboard.builders import tridf
from leaderboard.core.errors import PredictionError
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from tests.conformance import tridf_fixture as fx

PINNED_TFQ = {"all": 0.23809523809523808, "audio": 0.14285714285714285,
              "image": 0.35714285714285715, "video": 0.21428571428571427}
PINNED_MCQ = {"all": 0.009803921568627456, "audio": -0.027777777777777773,
              "image": 0.04761904761904762, "video": -0.01190476190476191}
PINNED_TYPE_B_ACCURACY = 0.40625
#: (task, modality or "all") -> (macro_cover, macro_chair, hal_rate, macro_f_beta)
PINNED_OEQ = {
    ("oeq_a", "all"): (0.5185185185185186, 0.6490740740740741, 0.8333333333333334,
                       0.3435224333057151),
    ("oeq_a", "audio"): (0.6, 0.6, 0.8, 0.4222222222222222),
    ("oeq_a", "image"): (0.5277777777777778, 0.5444444444444445, 0.6666666666666666,
                         0.38986013986013984),
    ("oeq_a", "video"): (0.4523809523809524, 0.7738095238095238, 1.0, 0.2475902641758458),
    ("oeq_b", "all"): (0.32870370370370366, 0.8101851851851852, 0.8888888888888888,
                       0.1575727513227513),
    ("oeq_b", "audio"): (0.6, 0.7, 0.8, 0.3111111111111111),
    ("oeq_b", "image"): (0.2638888888888889, 0.7916666666666666, 0.8333333333333334,
                         0.09837962962962964),
    ("oeq_b", "video"): (0.19047619047619047, 0.9047619047619049, 1.0, 0.09863945578231291),
}


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return fx.make_release(tmp_path_factory.mktemp("tridf") / "release")


@pytest.fixture(scope="module")
def pack(release, tmp_path_factory):
    out = tmp_path_factory.mktemp("pack") / "pack"
    report = tridf.build(release, out, dev_fraction=0.0)
    assert report.tasks == {"tfq": 42, "mcq": 34, "oeq_a": 23, "oeq_b": 32}
    p = load_pack(out)
    p.validate()
    return p


def _records(result) -> dict:
    return {(r.task, r.metric, r.slice.get("modality", "all")): r.value
            for r in result.parts["all"] if set(r.slice) <= {"modality"}}


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _perception(release) -> list[dict]:
    return fx.perception_records(release, fx.TF_DIR) + fx.perception_records(release, fx.MC_DIR)


def test_inference_outputs_score_as_the_authors_score_them(release, pack, tmp_path):
    rows = _perception(release) + fx.oeq_predictions(release)
    got = _records(score_predictions(pack, "test", _jsonl(tmp_path / "p.jsonl", rows),
                                     n_resamples=10))
    for m, want in PINNED_TFQ.items():
        assert got["tfq", "accuracy", m] == pytest.approx(want, abs=1e-12)
    for m, want in PINNED_MCQ.items():
        assert got["mcq", "mcq_score", m] == pytest.approx(want, abs=1e-12)
    assert got["oeq_b", "accuracy", "all"] == pytest.approx(PINNED_TYPE_B_ACCURACY, abs=1e-12)
    for (task, m), want in PINNED_OEQ.items():
        ours = tuple(got[task, metric, m] for metric in ("cover", "chair", "hal", "f05"))
        assert ours == pytest.approx(want, abs=1e-12), (task, m)


def test_a_zip_of_the_output_folder_is_the_same_submission(release, pack, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for folder, bench in ((fx.TF_DIR, "perception_tf"), (fx.MC_DIR, "perception_mc")):
            by_file: dict[str, list[str]] = {}
            for r in fx.perception_records(release, folder):
                by_file.setdefault(Path(r["question_file"]).stem, []).append(json.dumps(r))
            for stem, lines in by_file.items():
                zf.writestr(f"runs/{bench}/m/{stem}.jsonl", "\n".join(lines) + "\n")
    path = tmp_path / "outputs.zip"
    path.write_bytes(buf.getvalue())
    got = _records(score_predictions(pack, "test", path, n_resamples=10))
    assert got["tfq", "accuracy", "all"] == pytest.approx(PINNED_TFQ["all"], abs=1e-12)
    assert got["mcq", "mcq_score", "all"] == pytest.approx(PINNED_MCQ["all"], abs=1e-12)


def _error(pack, tmp_path, rows) -> str:
    with pytest.raises(PredictionError) as exc:
        score_predictions(pack, "test", _jsonl(tmp_path / "bad.jsonl", rows), n_resamples=10)
    return str(exc.value)


def test_records_that_cannot_be_aligned_are_errors_naming_why(release, pack, tmp_path):
    good = fx.perception_records(release, fx.TF_DIR)
    combined = {**good[0], "question_file": "/x/all_questions_combined.json"}
    text = _error(pack, tmp_path, [combined] + good[1:])
    assert "line 1, field 'question_file': question_file 'all_questions_combined.json' is not " \
           "one of this pack's question files" in text
    keyless = {"model_id": "m", "response": "yes", "sample": {}}
    text = _error(pack, tmp_path, good + [keyless])
    assert f"line {len(good) + 1}" in text and "cannot tell which question" in text
    beyond = {**good[0], "question_index": 999}
    assert "which is not in this TriDF pack" in _error(pack, tmp_path, good + [beyond])
    assert "duplicate id" in _error(pack, tmp_path, good + [good[3]])


def test_another_splits_questions_are_skipped(release, tmp_path):
    out = tmp_path / "pack"
    tridf.build(release, out, dev_fraction=0.5, seed=3)
    p = load_pack(out)
    rows = _perception(release)
    result = score_predictions(p, "test", _jsonl(tmp_path / "p.jsonl", rows), n_resamples=10)
    assert {c["task"] for c in result.covered} == {"tfq", "mcq"}
