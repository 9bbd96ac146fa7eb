"""TriDF pack from question files, artifact CSVs and sample lists; the challenge ZIP."""
from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import orjson
import pytest

from leaderboard.builders import tridf
from leaderboard.builders.common import SourceError
from leaderboard.core.errors import PredictionError
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from leaderboard.core.tridf_zip import zip_to_rows
from tests.builders.helpers import items_of, labels_of, score_baseline, write_json, write_png

IMG_FAKES = ("data/img/face_swapping/fake/0001.png", "data/img/face_swapping/fake/0002.png")
IMG_REALS = ("data/img/face_swapping/real/0001.png", "data/img/face_swapping/real/0002.png")
AUD_FAKE, AUD_REAL = "data/aud/voice_cloning/fake/a1.wav", "data/aud/voice_cloning/real/r1.wav"


def _wav(path: Path, k: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"RIFF" + bytes([k]) * 40)


def make_release(root: Path, *, challenge: bool = False) -> Path:
    for k, p in enumerate(IMG_FAKES + IMG_REALS):
        write_png(root / p, seed=100 + k)
    _wav(root / AUD_FAKE, 1)
    _wav(root / AUD_REAL, 2)
    sid = {p: f"s_{k:04x}" for k, p in enumerate(IMG_FAKES + IMG_REALS + (AUD_FAKE, AUD_REAL))}
    if challenge:  # the challenge release: hashed sample ids in JSON lists
        write_json(root / "samples/img/face_swapping/fake.json",
                   [{"sample_path": p, "sample_id": sid[p]} for p in IMG_FAKES])
        write_json(root / "samples/img/face_swapping/real.json",
                   [{"sample_path": p, "sample_id": sid[p]} for p in IMG_REALS])
    else:
        (root / "samples/img/face_swapping").mkdir(parents=True)
        (root / "samples/img/face_swapping/fake.txt").write_text("\n".join(IMG_FAKES) + "\n")
        (root / "samples/img/face_swapping/real.txt").write_text("\n".join(IMG_REALS) + "\n")
    (root / "samples/aud").mkdir(parents=True)
    (root / "samples/aud/voice_cloning_fake.txt").write_text(AUD_FAKE + "\n")
    (root / "samples/aud/voice_cloning_real.txt").write_text(AUD_REAL + "\n")
    (root / "artifacts/img").mkdir(parents=True)
    id_col = "sample_id," if challenge else ""
    cells = [f"{sid[IMG_FAKES[0]]}," if challenge else "", f"{sid[IMG_FAKES[1]]}," if challenge
             else ""]
    (root / "artifacts/img/face_swapping.csv").write_text(
        f"sample_path,{id_col}generator,Blurriness,blockiness,Unnatural Gaze or Blinking,"
        "Spatial Incoherence\n"
        f"{IMG_FAKES[0]},{cells[0]}blendface,True,,x,0\n"
        f"{IMG_FAKES[1]},{cells[1]}cscs,none,[],NULL,yes\n")
    (root / "artifacts/aud").mkdir(parents=True)
    (root / "artifacts/aud/voice_cloning.csv").write_text(
        "sample_path,hiss,buzz,unnatural_prosody\n" + f"{AUD_FAKE},1,False,\n")
    tfq = []
    for k, (path, art, gt) in enumerate([(IMG_FAKES[0], "Blurriness", True),
                                         (IMG_FAKES[0], "Banding", False),
                                         (IMG_FAKES[1], "spatial_incoherence", True)]):
        rec = {"sample_path": path, "question": f"Do you observe {art} in this image?",
               "question_type": "artifact", "modality": "img", "artifact_type": "",
               "artifact": art, "location": None, "task": "face_swapping", "ground_truth": gt}
        if challenge:
            rec["question_id"] = f"qtf_{k:03d}"
        tfq.append(rec)
    tfq.append({"sample_path": IMG_FAKES[1], "question": "Is there any artifact in the eyes?",
                "question_type": "location", "modality": "img", "artifact_type": None,
                "artifact": None, "location": "eyes", "task": "face_swapping",
                "ground_truth": False, **({"question_id": "qtf_loc"} if challenge else {})})
    write_json(root / "questions/tfq_img.json", tfq)
    mcq = [{"sample_path": IMG_FAKES[0], "task": "face_swapping", "modality": "img",
            "question": "Which artifacts appear? E. None of the options are correct",
            "options": ["A. Blurriness", "B. Banding", "C. Noise", "D. Unnatural Gaze or Blinking"],
            "ground_truth": ["A", "D"], "target_artifact": "quality"},
           {"sample_path": IMG_FAKES[1], "task": "face_swapping", "modality": "img",
            "question": "Which artifacts appear? E. None of the options are correct",
            "options": ["Blurriness", "Banding", "Noise", "Flicker"],
            "ground_truth": ["E"], "target_artifact": "quality"}]
    if challenge:
        for k, r in enumerate(mcq):
            r["question_id"] = f"qmc_{k:03d}"
    write_json(root / "questions/mcq_img.json", mcq)
    aud = {"sample_path": AUD_FAKE, "question": "Do you hear hiss?", "question_type": "artifact",
           "modality": "aud", "artifact_type": "quality", "artifact": "Hiss",
           "task": "voice_cloning", "ground_truth": True}
    if challenge:
        aud["question_id"] = "qtf_aud"
    (root / "questions/tfq_aud.jsonl").write_text(json.dumps(aud) + "\n")
    return root


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return make_release(tmp_path_factory.mktemp("tridf") / "TriDF")


def test_builds_questions_and_open_items(release, tmp_path):
    out = tmp_path / "pack"
    report = tridf.build(release, out, dev_fraction=0.0)
    pack = load_pack(out)
    pack.validate()
    assert report.tasks == {"tfq": 5, "mcq": 2, "oeq_a": 3, "oeq_b": 6}
    items, labels = items_of(out, "test"), labels_of(out, "test")
    assert items["tfq_img-1"]["artifact"] == "banding"
    assert items["tfq_img-1"]["artifact_type"] == "quality"  # from the taxonomy when blank
    assert labels["tfq_img-1"]["answer"] == "no" and labels["tfq_img-0"]["answer"] == "yes"
    assert labels["tfq_img-0"]["generator"] == "blendface"
    assert labels["tfq_img-0"]["deepfake_task"] == "face_swapping"
    assert items["tfq_aud-0"]["modality"] == "audio"
    assert items["mcq_img-0"]["options"] == {"A": "Blurriness", "B": "Banding", "C": "Noise",
                                             "D": "Unnatural Gaze or Blinking",
                                             "E": "None of the options are correct"}
    assert labels["mcq_img-0"]["answer"] == ["A", "D"]
    assert labels["mcq_img-0"]["artifacts"] == ["blurriness", "unnatural_gaze"]
    assert labels["mcq_img-1"]["answer"] == ["E"] and labels["mcq_img-1"]["artifacts"] == []
    oeq_a = {lab["artifacts"].__str__() for i, lab in labels.items() if i.startswith("oeq_a/")}
    # CSV truthiness: "True", "x", "yes", "1" are true; "", "0", "none", "[]", "NULL", "False" not
    assert oeq_a == {"['blurriness', 'unnatural_gaze']", "['spatial_incoherence']", "['hiss']"}
    oeq_b = [lab for i, lab in labels.items() if i.startswith("oeq_b/")]
    assert sorted(lab["label"] for lab in oeq_b) == ["fake"] * 3 + ["real"] * 3
    assert all(lab["artifacts"] == [] for lab in oeq_b if lab["label"] == "real")
    assert not any("fake" in m or "real" in m for it in items.values() for m in it["media"])
    records = score_baseline(pack, "test", "all-fake", tmp_path)
    assert records[("tfq", "accuracy", ())].value == pytest.approx(3 / 5)
    assert records[("tfq", "accuracy", (("modality", "audio"),))].value == 1.0
    assert records[("oeq_b", "accuracy", ())].value == pytest.approx(0.5)
    assert ("mcq", "mcq_score", (("modality", "image"),)) in records


def test_questions_of_a_sample_share_its_split(release, tmp_path):
    out = tmp_path / "pack"
    tridf.build(release, out, dev_fraction=0.5, seed=7)
    load_pack(out).validate()
    split_of: dict[str, set] = {}
    for split in ("dev", "test"):
        for it in items_of(out, split).values():
            split_of.setdefault(it["media"][0], set()).add(split)
    assert all(len(s) == 1 for s in split_of.values())


def _zip(rows: dict[str, list[dict]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, lines in rows.items():
            zf.writestr(f"submission/{name}", "".join(
                (ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines))
    return buf.getvalue()


def test_challenge_ids_and_zip_submission(tmp_path):
    release = make_release(tmp_path / "TriDF", challenge=True)
    out = tmp_path / "pack"
    tridf.build(release, out, dev_fraction=0.0)
    pack = load_pack(out)
    pack.validate()
    items = items_of(out, "test")
    assert {"qtf_000", "qtf_loc", "qtf_aud", "qmc_001", "oeq_a/s_0000", "oeq_b/s_0003"} <= \
        set(items)
    samples = [i.split("/", 1)[1] for i in items if i.startswith("oeq_b/")]
    data = _zip({
        "tfq.jsonl": [{"question_id": q, "response": "True"} for q in items if
                      q.startswith("qtf_")],
        "mcq.jsonl": [{"question_id": q, "response": "A, D"} for q in items if
                      q.startswith("qmc_")],
        "typea_oeq.jsonl": [{"sample_id": s, "response": "Blurriness."} for s in samples
                            if f"oeq_a/{s}" in items],
        "typeb_oeq.jsonl": [{"sample_id": s, "response": "Likely Manipulated\nBlurriness."}
                            for s in samples]})
    rows = list(zip_to_rows(io.BytesIO(data), pack, "test"))
    assert len(rows) == len(items)
    preds = tmp_path / "preds.jsonl"
    preds.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    result = score_predictions(pack, "test", preds, n_resamples=20)
    got = {(r.task, r.metric, tuple(r.slice.items())): r.value for r in result.parts["all"]}
    assert got[("tfq", "accuracy", ())] == pytest.approx(3 / 5)
    assert got[("oeq_b", "accuracy", ())] == pytest.approx(0.5)
    # the ZIP itself is accepted as a submission file (the validator detects it by magic bytes)
    zpath = tmp_path / "challenge.zip"
    zpath.write_bytes(data)
    direct = score_predictions(pack, "test", zpath, n_resamples=20)
    assert {(r.task, r.metric, tuple(r.slice.items())): r.value
            for r in direct.parts["all"]} == got
    bad = _zip({"mcq.jsonl": [{"question_id": "qmc_000", "response": "A"}, "{not json",
                              {"question_id": "qmc_999", "response": "B"},
                              {"question_id": "qmc_001", "response": 3}],
                "extra.jsonl": ["{}"]})
    with pytest.raises(PredictionError) as exc:
        list(zip_to_rows(io.BytesIO(bad), pack, "test"))
    assert "submission/extra.jsonl: unknown member" in str(exc.value)
    with pytest.raises(PredictionError) as exc:
        list(zip_to_rows(io.BytesIO(_zip({"mcq.jsonl": [
            "{not json", {"question_id": "qmc_999", "response": "B"},
            {"question_id": "qmc_001", "response": 3}]})), pack, "test"))
    text = str(exc.value)
    assert "submission/mcq.jsonl, line 1: not valid JSON" in text
    assert "submission/mcq.jsonl, line 2, field 'question_id'" in text
    assert "submission/mcq.jsonl, line 3, field 'response'" in text
    with pytest.raises(PredictionError, match="not a readable ZIP"):
        list(zip_to_rows(io.BytesIO(b"PK\x03\x04garbage"), pack, "test"))


@pytest.mark.parametrize("edit, where", [
    (lambda r: (r / "artifacts/aud/voice_cloning.csv").write_text(
        "sample_path,hiss,sparkles\n" + AUD_FAKE + ",1,1\n"),
     "artifacts/aud/voice_cloning.csv, line 1"),
    (lambda r: write_json(r / "questions/tfq_img.json", [
        {"sample_path": IMG_FAKES[0], "question": "?", "question_type": "artifact",
         "modality": "img", "artifact": "Blurriness", "ground_truth": "maybe"}]),
     "questions/tfq_img.json record 0, field 'ground_truth'"),
    (lambda r: write_json(r / "questions/tfq_img.json", [
        {"sample_path": IMG_FAKES[0], "question": "?", "question_type": "artifact",
         "modality": "img", "artifact": "Blurriness", "ground_truth": True,
         "question_id": "qtf_1"}] * 2),
     "questions/tfq_img.json record 1, field 'question_id'"),
    (lambda r: (r / "artifacts/aud/voice_cloning.csv").write_text("sample_path,hiss\n"),
     "samples/aud/voice_cloning_fake.txt line 1, field 'sample_path'"),
    (lambda r: (r / "samples/aud/voice_cloning_real.txt").write_text("data/aud/nope.wav\n"),
     "samples/aud/voice_cloning_real.txt line 1, field 'sample_path'"),
])
def test_malformed_release_names_file_and_record(release, tmp_path, edit, where):
    bad = tmp_path / "bad"
    shutil.copytree(release, bad)
    edit(bad)
    with pytest.raises(SourceError) as exc:
        tridf.build(bad, tmp_path / "pack")
    assert where in str(exc.value)
    assert not (tmp_path / "pack").exists()
