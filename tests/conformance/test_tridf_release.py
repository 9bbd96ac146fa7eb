"""TriDF end to end on the authors' file formats: build, their inference outputs in, their numbers out.

The fixture (`tests.conformance.tridf_fixture`) holds hand-made question files and ground truth in
the authors' formats (``benchmark_perception_tf|mc``, ``2_GT_Final``; no content of theirs). The
PINNED numbers were derived by running the authors' scorers (j1anglin/TriDF at
f041a19c4b292f83233a72b48e3241b4867c7ad7) on exactly these files and predictions, outside this
repository:
``score_perception_original.score`` (TFQ and MCQ "accuracy" and "invalid_predictions", overall,
``by_modality`` and, one run per modality's question files, ``by_question_type``),
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

PINNED_TFQ = {"all": 0.19230769230769232, "audio": 0.2222222222222222,
              "image": 0.21739130434782608, "video": 0.15}
PINNED_MCQ = {"all": 0.030952380952380964, "audio": -0.04999999999999999,
              "image": 0.14583333333333334, "video": -0.07142857142857141}
PINNED_TYPE_B_ACCURACY = 0.4
#: (task, modality or "all") -> (macro_cover, macro_chair, hal_rate, macro_f_beta)
PINNED_OEQ = {
    ("oeq_a", "all"): (0.36666666666666664, 0.7055555555555556, 0.9333333333333333,
                       0.2931528166822285),
    ("oeq_a", "audio"): (0.41666666666666663, 0.7083333333333334, 1.0, 0.3055555555555556),
    ("oeq_a", "image"): (0.3055555555555555, 0.75, 1.0, 0.2579365079365079),
    ("oeq_a", "video"): (0.4, 0.65, 0.8, 0.32549019607843144),
    ("oeq_b", "all"): (0.2611111111111111, 0.8444444444444446, 0.9333333333333333,
                       0.13767806267806268),
    ("oeq_b", "audio"): (0.41666666666666663, 0.875, 1.0, 0.1388888888888889),
    ("oeq_b", "image"): (0.16666666666666666, 0.9166666666666666, 1.0, 0.08333333333333333),
    ("oeq_b", "video"): (0.25, 0.7333333333333334, 0.8, 0.20192307692307693),
}


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return fx.make_release(tmp_path_factory.mktemp("tridf") / "release")


@pytest.fixture(scope="module")
def pack(release, tmp_path_factory):
    out = tmp_path_factory.mktemp("pack") / "pack"
    report = tridf.build(release, out, dev_fraction=0.0)
    assert report.tasks == {"tfq": 52, "mcq": 35, "oeq_a": 18, "oeq_b": 25}
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


#: the authors' ``score`` on the same records with every 4th response blanked ("" or "  \n"):
#: (accuracy, invalid_predictions) overall, ``by_modality``, and ``by_question_type`` of one run
#: per modality's question files ("<modality>/<question type>")
PINNED_BLANKED = {
    "tfq": {"all": (0.15384615384615385, 37), "audio": (0.1111111111111111, 6),
            "image": (0.17391304347826086, 16), "video": (0.15, 15),
            "audio/artifact": (0.1111111111111111, 6), "image/artifact": (0.13333333333333333, 11),
            "image/location": (0.25, 5), "video/artifact": (0.07692307692307693, 10),
            "video/location": (0.2857142857142857, 5)},
    "mcq": {"all": (0.06666666666666667, 9), "audio": (-0.033333333333333326, 2),
            "image": (0.21875, 4), "video": (-0.07142857142857141, 3),
            "audio/artifact": (-0.033333333333333326, 2), "image/artifact": (0.03125, 2),
            "image/location": (0.40625, 2), "video/artifact": (-0.2857142857142857, 1),
            "video/location": (0.14285714285714285, 2)},
}


def test_invalid_predictions_and_question_types_as_the_authors_count_them(release, pack,
                                                                          tmp_path):
    """Their ``invalid_predictions`` is ours under that name (MCQ: empty answers only); our
    ``no_letter_read`` also counts the non-empty answers without a letter, which they score 0
    as valid. Per question type: their ``by_question_type`` per modality."""
    rows = _perception(release)
    for k, r in enumerate(rows):
        if k % 4 == 0:
            r["response"] = "  \n" if k % 8 == 0 else ""
    result = score_predictions(pack, "test", _jsonl(tmp_path / "p.jsonl", rows), n_resamples=10)
    recs = {(r.task, r.metric, tuple(sorted(r.slice.items()))): r for r in result.parts["all"]}
    for task, pinned in PINNED_BLANKED.items():
        metric = "accuracy" if task == "tfq" else "mcq_score"
        for where, (value, invalid) in pinned.items():
            modality, _, qtype = where.partition("/")
            slc = () if modality == "all" else (("modality", modality),) + (
                (("question_type", qtype),) if qtype else ())
            assert recs[task, metric, slc].value == pytest.approx(value, abs=1e-12), where
            assert recs[task, "invalid_predictions", slc].n == invalid, (task, where)
    mcq_invalid = recs["mcq", "invalid_predictions", ()]
    no_letter = recs["mcq", "no_letter_read", ()]
    assert no_letter.n > mcq_invalid.n == 9 and mcq_invalid.value == pytest.approx(9 / 35)


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
