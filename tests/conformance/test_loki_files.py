"""LOKI's own files in, the authors' numbers out.

``fixtures/loki/data_json`` holds small question files in the exact format of the authors'
released ``data_json/`` (opendatalab/LOKI at commit 251b4f6): the same files, field names and
order, ``question_type`` patterns (``3D_tf_3D_real_ask_real``, ``3D_tf_point_real_ask_fake``,
``video_tf_video_fake_ask_real_OpenAI_Sora``, ...), 3D renders marked ``image-text``, duplicated
and missing ids, ``image/open_ended_vqa.json`` in UTF-16 with a byte-order mark, and no media, as
in their repository; the question texts and media names are ours. ``fixtures/loki/responses`` holds free-text answers in the
authors' submission format (``{"model", "responses"}``, what ``run.py --predict_only`` writes),
and ``fixtures/loki/expected.json`` the numbers the authors' code gives on them (see its
``derived_by``): per-row ``Loki.parse_response`` + ``Loki.metric`` and ``Loki.aggregate_results``.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from leaderboard.builders import loki as builder
from leaderboard.builders.common import SourceError
from leaderboard.cli import main as cli
from leaderboard.core.errors import PredictionError
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions

FIXTURES = Path(__file__).parent / "fixtures" / "loki"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())["files"]
#: authors' file -> (our task, modality)
BLOCKS = {"3D/true_or_false.json": ("judgment", "3d"),
          "3D/point_true_or_false.json": ("point_cloud_judgment", "3d"),
          "3D/multi_choice.json": ("multiple_choice", "3d"),
          "image/true_or_false.json": ("judgment", "image"),
          "image/multi_choice.json": ("multiple_choice", "image"),
          "video/true_or_false.json": ("judgment", "video"),
          "video/multi_choice.json": ("multiple_choice", "video")}
#: the authors' type key -> our subcategory, where they differ ("OpenAI_Sora" ends in "Sora")
SUBCATEGORY = {"Sora": "OpenAI_Sora"}


def _records(authors_file: str) -> list:
    raw = (FIXTURES / "data_json" / authors_file).read_bytes()
    return json.loads(raw.decode("utf-16" if raw[:2] == b"\xff\xfe" else "utf-8"))


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("loki") / "LOKI"
    shutil.copytree(FIXTURES / "data_json", root / "data_json")
    return root


@pytest.fixture(scope="module")
def whole(release, tmp_path_factory):
    """Every item in dev, so the authors' whole-file numbers are ours on one split."""
    out = tmp_path_factory.mktemp("pack") / "loki"
    builder.build(release, out, dev_fraction=1.0)
    return load_pack(out)


def _submit(pack, split, docs, tmp_path, name="sub.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return score_predictions(pack, split, path, n_resamples=10)


def _find(records, metric, **slc):
    hits = [r for r in records if r.metric == metric and r.slice == slc]
    assert len(hits) == 1, (metric, slc)
    return hits[0]


def test_the_whole_release_builds_in_one_call(release, tmp_path):
    out = tmp_path / "pack"
    result = CliRunner().invoke(cli, ["build-pack", "loki", "--from", str(release),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "no media_data/ folder" in result.output
    pack = load_pack(out)
    pack.validate()
    tasks = {t.key: set(t.modalities) for t in pack.tasks}
    assert tasks == {"judgment": {"3d", "image", "video"}, "point_cloud_judgment": {"3d"},
                     "multiple_choice": {"3d", "image", "video"}, "explanation": {"image"}}
    assert pack.meta.extras["sources"] == {f: len(_records(f)) for f in
                                           [*BLOCKS, "image/open_ended_vqa.json"]}
    rows = [json.loads(line) for s in ("dev", "test")
            for line in (out / "splits" / s / "items.jsonl").read_text().splitlines()]
    labels = {json.loads(line)["id"]: json.loads(line) for s in ("dev", "test")
              for line in (out / "splits" / s / "labels.jsonl").read_text().splitlines()}
    # the 3D renders' multiple choice says modality "image-text"; the authors' folder says 3D
    mc3d = [r for r in rows if r["id"].startswith("loki/3D/multi_choice/")]
    assert len(mc3d) == 10 and {r["modality"] for r in mc3d} == {"3d"}
    assert not any("media" in r for r in rows)
    real = labels["loki/3D/true_or_false/0"]    # 3D_tf_3D_real_ask_real: no subcategory
    assert (real["truth"], real["authors_type"], real["source"], real["source_index"]) == \
        ("real", "real", "3D/true_or_false.json", 0) and "subcategory" not in real
    # file and index are hidden: the authors' order groups items by truth
    assert not any("source" in r or "source_index" in r for r in rows)


def test_a_combined_file_is_not_counted_twice(release, tmp_path):
    copy = tmp_path / "LOKI"
    shutil.copytree(release, copy)
    everything = [r for f in BLOCKS for r in _records(f)]
    (copy / "data_json" / "all_questions_combined.json").write_text(json.dumps(everything))
    report = builder.build(copy, tmp_path / "pack")
    plain = builder.build(release, tmp_path / "plain")
    assert report.tasks == plain.tasks
    assert any("all_questions_combined.json: skipped" in n for n in report.notes)
    # a combined file with a question of its own is neither skipped nor doubled: refused
    (copy / "data_json" / "all_questions_combined.json").write_text(json.dumps(
        everything + [{**everything[0], "question": "Something else?"}]))
    with pytest.raises(SourceError, match="no per-task file has"):
        builder.build(copy, tmp_path / "pack")


@pytest.mark.parametrize("split", ["dev", "test"])
def test_perfect_answers_in_the_authors_format_score_100(release, tmp_path, split):
    out = tmp_path / "pack"
    builder.build(release, out, dev_fraction=0.5, seed=2)
    pack = load_pack(out)
    docs = [{"model": "oracle", "source": f, "responses": [r["answer"] for r in _records(f)]}
            for f in BLOCKS]
    result = _submit(pack, split, docs, tmp_path)
    records = result.parts["all"]
    assert {(c["task"], c["modality"]) for c in result.covered} == set(BLOCKS.values())
    for task, modality in BLOCKS.values():
        for metric in ("accuracy", "balanced_accuracy"):
            hits = [r for r in records if (r.task, r.metric) == (task, metric)
                    and r.slice == {"modality": modality}]
            assert [r.value for r in hits] == [1.0], (task, modality, metric)
    assert all(r.n == 0 for r in records if r.metric == "unparsable")


def test_the_authors_numbers_on_adversarial_answers(whole, tmp_path):
    for authors_file, want in EXPECTED.items():
        task, modality = BLOCKS[authors_file]
        doc = json.loads((FIXTURES / "responses" / authors_file.replace("/", "_")).read_text())
        doc["source"] = authors_file
        records = [r for r in _submit(whole, "dev", [doc], tmp_path).parts["all"]
                   if r.task == task]
        where = {"modality": modality}
        assert _find(records, "accuracy", **where).value == pytest.approx(want["accuracy"],
                                                                           abs=1e-12)
        assert _find(records, "balanced_accuracy", **where).value == \
            pytest.approx(want["total_accuracy"], abs=1e-12)
        for key, value in want["per_type"].items():
            sub = SUBCATEGORY.get(key, key)
            got = _find(records, "balanced_accuracy", modality=modality, subcategory=sub)
            assert got.value == pytest.approx(value, abs=1e-12), (authors_file, key)
        assert _find(records, "unparsable", **where).n == want["unparsable"]


def test_the_authors_file_without_source_is_aligned_by_its_length(whole, tmp_path):
    doc = json.loads((FIXTURES / "responses" / "image_true_or_false.json").read_text())
    result = _submit(whole, "dev", [doc], tmp_path)   # exactly as run.py wrote it
    assert "image/true_or_false.json" in result.notes[0]
    acc = _find(result.parts["all"], "accuracy", modality="image")
    assert acc.value == pytest.approx(EXPECTED["image/true_or_false.json"]["accuracy"])


@pytest.mark.parametrize("doc, message", [
    ({"model": "m", "responses": ["Yes"] * 14}, "fit several authors' files"),
    ({"model": "m", "source": "image/true_or_false.json", "responses": ["Yes"] * 21},
     "image/true_or_false.json has 22 records; this document has 21 responses"),
    ({"model": "m", "source": "image/tf.json", "responses": ["Yes"] * 22},
     "unknown authors' file 'image/tf.json'"),
    ({"model": "m", "responses": ["Yes"] * 5}, "no authors' file of this pack has 5 records"),
])
def test_a_list_that_cannot_be_aligned_is_refused(whole, tmp_path, doc, message):
    with pytest.raises(PredictionError) as exc:
        _submit(whole, "dev", [doc], tmp_path)
    assert message in exc.value.problems.items[0].message
