"""TriDF pack from the authors' release layout: question files alone, or with the gated data.

The question records, ground-truth CSVs (``2_GT_Final``) and media folder (``1_DATA``) are in the
authors' formats (j1anglin/TriDF at f041a19); real-sample lists are the builder's own format.
The TRIDENT layout and the submission formats are tested in ``tests/conformance``.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from leaderboard.builders import tridf
from leaderboard.builders.common import SourceError
from leaderboard.core.packs import load_pack
from tests.builders.helpers import items_of, labels_of, score_baseline, write_json, write_png

TF_DIR, MC_DIR = "3_Benchmark/benchmark_perception_tf", "3_Benchmark/benchmark_perception_mc"
FAKES = ("img_face_swapping/blendface/0001.png", "img_face_swapping/cscs/0002.png")
COM_FAKE = "img_face_swapping/gpt/0003.png"
REALS = ("img_face_swapping/real_0001.png", "img_face_swapping/real_0002.png")
AUD_FAKE, AUD_REAL = "aud_voice_cloning/xtts/0001.wav", "aud_voice_cloning/real_0001.wav"


def _tfq(path, artifact, gt, *, task="img_face_swapping", modality="img", qtype="artifact",
         location=None):
    return {"sample_path": path, "question": f"<image>\nDoes this picture show {artifact}?",
            "question_type": qtype, "modality": modality, "artifact_type": "quality",
            "artifact": artifact, "location": location, "task": task, "ground_truth": gt}


def make_release(root: Path, *, gated: bool = True) -> Path:
    """The authors' GitHub files; ``gated`` adds 1_DATA media, 2_GT_Final and real lists."""
    write_json(root / TF_DIR / "img_face_swapping_questions.json", [
        _tfq(FAKES[0], "Blurriness", True), _tfq(FAKES[0], "Banding", False),
        _tfq(FAKES[1], "Spatial & Contact Incoherence", True),
        _tfq(FAKES[1], None, False, qtype="location", location="eyes region")])
    write_json(root / TF_DIR / "aud_voice_cloning_questions.json", [
        _tfq(AUD_FAKE, "Hiss", True, task="aud_voice_cloning", modality="aud")])
    # the wording is ours; the builder reads only the "X." option lines (E: its "none" option)
    question = ("<image>\nMark every flaw you see.\n"
                "A. Blurriness\nB. Banding\nC. Noise\nD. Unnatural Gaze or Blinking\n"
                "E. Nothing listed here")
    write_json(root / MC_DIR / "img_face_swapping.json", [
        {"sample_path": FAKES[0], "question": question, "question_type": "artifact",
         "modality": "img", "artifact_type": "quality", "task": "img_face_swapping",
         "options": ["Blurriness", "Banding", "Noise", "Unnatural Gaze or Blinking"],
         "ground_truth": ["A", "D"]},
        {"sample_path": FAKES[1], "question": question, "question_type": "artifact",
         "modality": "img", "artifact_type": "quality", "task": "img_face_swapping",
         "options": ["Blurriness", "Banding", "Noise", "Unnatural Gaze or Blinking"],
         "ground_truth": ["E"]}])
    (root / "README.md").write_text("# TriDF\n")
    (root / "requirements.txt").write_text("numpy\n")
    (root / "3_Benchmark/inference").mkdir(parents=True)
    (root / "3_Benchmark/inference/cal_score.py").write_text("# the authors' code\n")
    if not gated:
        return root
    for k, p in enumerate(FAKES + (COM_FAKE,) + REALS):
        write_png(root / "1_DATA" / p, seed=100 + k)
    for k, p in enumerate((AUD_FAKE, AUD_REAL)):
        (root / "1_DATA" / p).parent.mkdir(parents=True, exist_ok=True)
        (root / "1_DATA" / p).write_bytes(b"RIFF" + bytes([k]) * 40)
    gt = root / "2_GT_Final"
    gt.mkdir()
    (gt / "img_face_swapping.csv").write_text(
        "sample_path,Blurriness,Banding,Unnatural Gaze or Blinking,Spatial & Contact Incoherence\n"
        f"{FAKES[0]},True,[ ],x,0\n"
        f"{FAKES[1]},False,[],NULL,True\n")
    # the commercial file: replaces FAKES[1]'s row, adds COM_FAKE; its extra column is not counted
    (gt / "img_face_swapping_com.csv").write_text(
        "sample_path,Blurriness,Banding,Notes\n"
        f"{FAKES[1]},True,False,checked\n"
        f"{COM_FAKE},none,True,checked\n")
    (gt / "aud_voice_cloning.csv").write_text(
        "question_id,sample_path,Hiss,Buzz,Unnatural Prosody\n" f"7,{AUD_FAKE},1,False,\n")
    (root / "samples").mkdir()
    (root / "samples/img_face_swapping_real.txt").write_text("\n".join(REALS) + "\n")
    (root / "samples/aud_voice_cloning_real.txt").write_text(AUD_REAL + "\n")
    return root


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return make_release(tmp_path_factory.mktemp("tridf") / "TriDF")


def test_question_files_alone_build_tfq_and_mcq(tmp_path):
    root = make_release(tmp_path / "TriDF", gated=False)
    report = tridf.build(root, tmp_path / "pack", dev_fraction=0.0)
    pack = load_pack(tmp_path / "pack")
    pack.validate()
    assert report.tasks == {"tfq": 5, "mcq": 2}
    notes = "\n".join(report.notes)
    assert "oeq_a, oeq_b: skipped" in notes and "2_GT_Final" in notes
    assert "3 of 3 samples have no media file" in notes
    items, labels = items_of(tmp_path / "pack", "test"), labels_of(tmp_path / "pack", "test")
    # the authors' question ids (make_question_id: <file stem>-<index>), no media listed
    assert labels["img_face_swapping_questions-0"]["answer"] == "yes"
    assert labels["img_face_swapping_questions-1"]["answer"] == "no"
    assert labels["img_face_swapping_questions-0"]["deepfake_task"] == "img_face_swapping"
    assert items["aud_voice_cloning_questions-0"]["modality"] == "audio"
    assert items["img_face_swapping-0"]["options"] == {
        "A": "Blurriness", "B": "Banding", "C": "Noise", "D": "Unnatural Gaze or Blinking",
        "E": "None of the options are correct"}
    assert labels["img_face_swapping-0"]["answer"] == ["A", "D"]
    assert labels["img_face_swapping-0"]["artifacts"] == ["blurriness", "unnatural_gaze"]
    assert all("media" not in it for it in items.values())
    assert pack.meta.extras["question_files"] == [
        "aud_voice_cloning_questions.json", "img_face_swapping.json",
        "img_face_swapping_questions.json"]


def test_gated_release_builds_open_items_as_cal_score_reads_them(release, tmp_path):
    out = tmp_path / "pack"
    report = tridf.build(release, out, dev_fraction=0.0)
    pack = load_pack(out)
    pack.validate()
    assert report.tasks == {"tfq": 5, "mcq": 2, "oeq_a": 4, "oeq_b": 7}
    assert any("['Notes'] are not artifacts" in n for n in report.notes)
    items, labels = items_of(out, "test"), labels_of(out, "test")
    oeq_a = {i: lab for i, lab in labels.items() if i.startswith("oeq_a/")}
    # parse_bool_truth: "True", "x" and "1" are true; "[ ]", "[]", "0", "NULL", "" are not; the
    # _com row replaces the base row, and a column the _com file lacks reads false
    assert sorted(tuple(lab["artifacts"]) for lab in oeq_a.values()) == [
        ("banding",), ("blurriness",), ("blurriness", "unnatural_gaze"), ("hiss",)]
    columns = {tuple(lab["artifact_columns"]) for lab in oeq_a.values()}
    assert columns == {("blurriness", "banding", "unnatural_gaze", "spatial_incoherence"),
                       ("hiss", "buzz", "unnatural_prosody")}
    oeq_b = [lab for i, lab in labels.items() if i.startswith("oeq_b/")]
    assert sorted(lab["label"] for lab in oeq_b) == ["fake"] * 4 + ["real"] * 3
    assert all(lab["artifacts"] == [] for lab in oeq_b if lab["label"] == "real")
    assert all(len(it["media"]) == 1 for it in items.values())
    assert not any("fake" in m or "real" in m for it in items.values() for m in it["media"])
    records = score_baseline(pack, "test", "all-fake", tmp_path)
    assert records[("tfq", "accuracy", ())].value == pytest.approx(3 / 5)
    assert records[("oeq_b", "accuracy", ())].value == pytest.approx(4 / 7)


def test_questions_of_a_sample_share_its_split(release, tmp_path):
    out = tmp_path / "pack"
    tridf.build(release, out, dev_fraction=0.5, seed=7)
    load_pack(out).validate()
    split_of: dict[str, set] = {}
    for split in ("dev", "test"):
        for it in items_of(out, split).values():
            split_of.setdefault(it["media"][0], set()).add(split)
    assert all(len(s) == 1 for s in split_of.values())


def test_combined_file_beside_the_task_files_is_not_counted_twice(tmp_path):
    root = make_release(tmp_path / "TriDF", gated=False)
    tf = root / TF_DIR
    combined = [rec for f in sorted(tf.glob("*.json")) for rec in
                __import__("json").loads(f.read_text())]
    write_json(tf / "all_questions_combined.json", combined)
    report = tridf.build(root, tmp_path / "pack", dev_fraction=0.0)
    assert report.tasks["tfq"] == 5
    assert any("all_questions_combined.json: skipped" in n for n in report.notes)
    alone = tmp_path / "alone"
    write_json(alone / "all_questions_combined.json", combined)
    assert tridf.build(alone, tmp_path / "pack2", dev_fraction=0.0).tasks == {"tfq": 5}


def test_without_real_lists_type_b_is_skipped_with_a_note(release, tmp_path):
    root = tmp_path / "r"
    shutil.copytree(release, root)
    shutil.rmtree(root / "samples")
    report = tridf.build(root, tmp_path / "pack", dev_fraction=0.0)
    assert report.tasks["oeq_a"] == 4 and "oeq_b" not in report.tasks
    assert any("oeq_b: skipped, no real samples" in n for n in report.notes)


@pytest.mark.parametrize("edit, where", [
    (lambda r: (r / "2_GT_Final/aud_voice_cloning.csv").write_text(
        "sample_path,hiss,Buzz\n" + AUD_FAKE + ",1,1\n"),
     "2_GT_Final/aud_voice_cloning.csv, line 1: column 'hiss' is not spelled as the authors'"),
    (lambda r: write_json(r / TF_DIR / "img_face_swapping_questions.json", [
        _tfq(FAKES[0], "Blurriness", "maybe")]),
     f"{TF_DIR}/img_face_swapping_questions.json record 0, field 'ground_truth'"),
    (lambda r: write_json(r / TF_DIR / "img_face_swapping_questions.json", [
        {**_tfq(FAKES[0], "Blurriness", True), "question_id": "q1"}] * 2),
     f"{TF_DIR}/img_face_swapping_questions.json record 1, field 'question_id'"),
    (lambda r: (r / "samples/aud_voice_cloning_real.txt").write_text("aud_voice_cloning/x.wav\n"),
     "samples/aud_voice_cloning_real.txt line 1, field 'sample_path': media file"),
    (lambda r: (r / "2_GT_Final/aud_voice_cloning.csv").write_text(
        "sample_path,Hiss\n" + FAKES[0] + ",1\n"),
     "is also annotated for task 'aud_voice_cloning'"),
])
def test_malformed_release_names_file_and_record(release, tmp_path, edit, where):
    bad = tmp_path / "bad"
    shutil.copytree(release, bad)
    edit(bad)
    with pytest.raises(SourceError) as exc:
        tridf.build(bad, tmp_path / "pack")
    assert where in str(exc.value)
    assert not (tmp_path / "pack").exists()


def test_json_sample_lists_carry_the_authors_sample_ids(release, tmp_path):
    root = tmp_path / "r"
    shutil.copytree(release, root)
    (root / "samples/aud_voice_cloning_real.txt").unlink()
    write_json(root / "samples/aud_voice_cloning_real.json",
               [{"sample_path": AUD_REAL, "sample_id": "s_0a1b"}])
    tridf.build(root, tmp_path / "pack", dev_fraction=0.0)
    labels = labels_of(tmp_path / "pack", "test")
    assert labels["oeq_b/s_0a1b"]["label"] == "real"
