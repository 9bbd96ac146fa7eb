"""TriDF: demo pack, hand-derived metric values, judge handling, composite, end-to-end scoring."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from leaderboard.core.baselines import baseline_rows
from leaderboard.core.benchmarks.base import Block, ScoringContext, TaskSpec
from leaderboard.core.benchmarks.tridf import TriDF
from leaderboard.core.packs import load_pack
from leaderboard.core.records import MetricRecord
from leaderboard.core.scoring import score_predictions
from leaderboard.core.taxonomy import ARTIFACT_KEYS
from leaderboard.demo import tridf as demo
from leaderboard.judges.base import Judge

BENCH = TriDF()
HIDDEN = set(TriDF.label_fields) | {"part"}
K = len(ARTIFACT_KEYS)


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory) -> Path:
    return demo.generate(tmp_path_factory.mktemp("tridf") / "tridf", seed=0)


@pytest.fixture(scope="module")
def pack(pack_dir):
    p = load_pack(pack_dir)
    p.validate()
    return p


def _rows(root: Path, split: str, what: str) -> list[dict]:
    with open(root / "splits" / split / f"{what}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".cache" not in p.parts}


def _block(task: str, kind: str, item: dict, truth: dict, pred: dict, letters: str = "") -> Block:
    n = len(next(iter(item.values())))
    spec = TaskSpec(task, kind, ("image", "video", "audio"), "accuracy")
    arr = lambda d: {k: np.asarray(v) for k, v in d.items()}  # noqa: E731
    return Block(spec, np.array([f"r{i}" for i in range(n)]), arr(item), arr(truth), arr(pred),
                 letters)


def _find(records, metric, **slc):
    hits = [r for r in records if r.metric == metric and r.slice == slc]
    assert len(hits) == 1, (metric, slc, hits)
    return hits[0]


def _arts(*keys) -> np.ndarray:
    row = np.zeros(K, dtype=bool)
    for k in keys:
        row[ARTIFACT_KEYS.index(k)] = True
    return row


def test_pack_is_valid_small_and_deterministic(pack, pack_dir, tmp_path):
    n = sum(len(_rows(pack_dir, s, "items")) for s in ("dev", "test"))
    assert 300 <= n <= 450
    assert sum(p.stat().st_size for p in pack_dir.rglob("*") if p.is_file()) < 5_000_000
    assert _digest(demo.generate(tmp_path / "again", seed=0)) == _digest(pack_dir)


def test_items_never_reveal_labels(pack_dir):
    for split in ("dev", "test"):
        for row in _rows(pack_dir, split, "items"):
            assert not HIDDEN & set(row), row
            if row["task"] == "oeq_b":  # the only task mixing real and fake samples
                assert "fake" not in json.dumps(row).lower(), row
    labels = [r for s in ("dev", "test") for r in _rows(pack_dir, s, "labels")]
    tasks = {r["deepfake_task"] for r in labels}
    assert len(tasks) == 14  # 16 tasks, face swapping and id-preserving generation in 2 modalities
    mcq = [r["answer"] for r in labels if isinstance(r.get("answer"), list)]
    assert ["E"] in mcq and any(len(a) > 1 for a in mcq)


def test_tfq_values_by_hand():
    block = _block("tfq", "yesno",
                   {"modality": ["image"] * 4, "question_type": ["artifact"] * 2 + ["location"] * 2,
                    "artifact_type": ["quality", "semantic", "", "quality"],
                    "artifact": ["blurriness", "anatomical_inconsistency", "", "noise"],
                    "location": ["", "", "nose", "hair"]},
                   {"answer": np.array(["yes", "no", "yes", "no"], dtype=object),
                    "deepfake_task": ["face_swapping"] * 4, "generator": ["a", "a", "b", "b"]},
                   {"answer": np.array([1, 1, -1, 0], dtype=np.int8)})
    recs = BENCH.score_block(block, ScoringContext())
    assert _find(recs, "accuracy").value == 0.5
    assert _find(recs, "accuracy", modality="image", category="quality").value == 1.0
    assert _find(recs, "accuracy", modality="image", category="semantic").value == 0.0
    assert _find(recs, "accuracy", modality="image", category="location").value == 0.5
    assert _find(recs, "accuracy", modality="image", generator="b").value == 0.5
    assert _find(recs, "accuracy", modality="image", artifact="noise").value == 1.0
    assert _find(recs, "accuracy", modality="image", location="nose").value == 0.0
    assert _find(recs, "accuracy", modality="image", question_type="location").value == 0.5
    invalid = _find(recs, "invalid_predictions")  # normalize_tf_answer read nothing: one row
    assert (invalid.n, invalid.value) == (1, 0.25)
    assert _find(recs, "invalid_predictions", modality="image", question_type="location").n == 1
    assert _find(recs, "invalid_predictions", modality="image",
                 deepfake_task="face_swapping").n == 1
    assert not [r for r in recs if r.metric in ("unparsable", "no_letter_read")]


def test_mcq_values_by_hand():
    # M = 5 options; row 1: C = {A, B}, S = {A, C} -> 1/2 - 1/3; row 2: C = {E}, S = {A, B} -> -2/4
    correct = np.array([["A", "B"], ["E"]], dtype=object)
    selected = np.array([[1, 0, 1, 0, 0], [1, 1, 0, 0, 0]], dtype=bool)
    block = _block("mcq", "multiselect",
                   {"modality": ["video", "video"], "question_type": ["artifact", "location"],
                    "artifact_type": ["semantic", ""]},
                   {"answer": correct, "artifacts": np.stack([_arts("flicker"), _arts()]),
                    "deepfake_task": ["lip_syncing"] * 2, "generator": ["dinet"] * 2},
                   {"selected": selected, "answered": np.array([True, True])}, "ABCDE")
    recs = BENCH.score_block(block, ScoringContext())
    assert _find(recs, "mcq_score").value == pytest.approx((1 / 6 - 0.5) / 2)
    assert _find(recs, "mcq_score_clamped").value == pytest.approx(1 / 12)
    assert _find(recs, "mcq_score", modality="video", category="location").value == -0.5
    assert _find(recs, "mcq_score", modality="video", artifact="flicker").value == \
        pytest.approx(1 / 6)


def test_mcq_invalid_predictions_are_the_authors_no_letter_read_is_ours(pack, tmp_path):
    """The authors' ``invalid_predictions`` counts only empty answers (their ``normalize_mc_answer``
    returns None); a non-empty answer with no letter ("**B**, **D**", "AB", "Options A and C,
    maybe") is valid for them and scores 0. Ours, ``no_letter_read``, counts both."""
    items = [r for r in _rows(pack.root, "test", "items") if r["task"] == "mcq"]
    texts = ["", "   \n", "**B**, **D**", "AB", "Options A and C, maybe", "A, C", "None"]
    path = tmp_path / "mcq.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for k, it in enumerate(items):
            row = {"id": it["id"]}
            if k == len(texts):
                row["answer"] = ["A"]  # structured: never invalid
            else:
                row["response"] = texts[k % len(texts)]
            fh.write(json.dumps(row) + "\n")
    n = len(items)
    empty = sum(1 for k in range(n) if k != len(texts) and k % len(texts) < 2)
    no_letter = empty + sum(1 for k in range(n) if k != len(texts) and 2 <= k % len(texts) <= 4)
    recs = [r for r in score_predictions(pack, "test", path, n_resamples=10).records
            if r.task == "mcq"]
    invalid, ours = _find(recs, "invalid_predictions"), _find(recs, "no_letter_read")
    assert (invalid.n, ours.n) == (empty, no_letter) and empty < no_letter
    assert invalid.value == pytest.approx(empty / n) and ours.value == pytest.approx(no_letter / n)
    assert not [r for r in recs if r.metric == "unparsable"]
    by_type = [r for r in recs if r.metric == "invalid_predictions" and "question_type" in r.slice]
    assert by_type and sum(r.n for r in by_type) == empty


class _MapJudge(Judge):
    name, version = "map", "2"

    def map_artifacts(self, responses, *, candidates=None):
        return [frozenset(k for k in ARTIFACT_KEYS if k in r) for r in responses]


def _oeq_b_block(**pred) -> Block:
    truth = np.stack([_arts("blurriness", "noise"), _arts("flicker"), _arts()])
    return _block("oeq_b", "artifacts", {"modality": ["video"] * 3},
                  {"artifacts": truth, "label": ["fake", "fake", "real"],
                   "deepfake_task": ["talking_head"] * 3, "generator": ["hallo2"] * 3}, pred)


def test_oeq_b_self_mapped_by_hand():
    predicted = np.stack([_arts("blurriness", "hiss"), _arts("flicker"), _arts("noise")])
    block = _oeq_b_block(artifacts=predicted, self_mapped=np.ones(3, bool),
                         label=np.array([1, 0, 0], dtype=np.int8),
                         response=np.array([None] * 3, dtype=object))
    recs = BENCH.score_block(block, ScoringContext())
    # row 1: Cover 1/2, CHAIR 1/2; row 2 is a fake called authentic: Cover 1, CHAIR 1; row 3 real.
    assert _find(recs, "accuracy").value == pytest.approx(2 / 3)
    cover, chair = _find(recs, "cover"), _find(recs, "chair")
    assert (cover.value, chair.value, cover.judge) == (0.75, 0.75, "self-mapped")
    assert _find(recs, "hal").value == 1.0
    assert _find(recs, "f05").value == pytest.approx(0.25)  # (0.5 + 0) / 2
    assert _find(recs, "cover", modality="video", artifact="noise").value == 0.0
    assert _find(recs, "cover", modality="video", artifact_type="quality").n == 2
    # the TRIDENT kit: no CHAIR penalty for the fake called authentic (row 2: CHAIR 0, F0.5 1)
    assert _find(recs, "trident_chair").value == pytest.approx(0.25)
    assert _find(recs, "trident_hal").value == 0.5
    assert _find(recs, "trident_f05").value == pytest.approx(0.75)
    assert _find(recs, "trident_accuracy").value == pytest.approx(2 / 3)


def test_only_artifacts_of_the_ground_truth_csv_count():
    # cal_score.py counts only artifacts that are columns of the sample's ground-truth CSV:
    # "hiss" is not a column here, so R = {blurriness} and CHAIR = 0 (27 columns: CHAIR 1/2)
    predicted = np.stack([_arts("blurriness", "hiss"), _arts("flicker"), _arts("noise")])
    columns = np.stack([_arts("blurriness", "noise", "flicker")] * 3)
    block = _oeq_b_block(artifacts=predicted, self_mapped=np.ones(3, bool),
                         label=np.array([1, 1, 0], dtype=np.int8))
    block.truth["artifact_columns"] = columns
    recs = BENCH.score_block(block, ScoringContext())
    assert _find(recs, "chair").value == 0.0 and _find(recs, "cover").value == 0.75


def test_oeq_needs_judge_for_responses_and_reads_the_verdict():
    responses = np.array(["Likely Manipulated\nblurriness, noise", "Likely Authentic",
                          "I cannot tell"], dtype=object)
    block = _oeq_b_block(artifacts=np.zeros((3, K), bool), self_mapped=np.zeros(3, bool),
                         label=np.full(3, -1, np.int8), response=responses)
    ctx = ScoringContext()
    recs = BENCH.score_block(block, ctx)
    assert {p["metric"] for p in ctx.pending} == {"cover", "chair", "hal", "f05"}
    assert _find(recs, "accuracy").value == pytest.approx(1 / 3)
    assert _find(recs, "unparsable").n == 1
    recs = BENCH.score_block(block, ScoringContext(judge=_MapJudge()))
    f05 = _find(recs, "f05")
    assert (f05.value, f05.judge) == (0.5, "map@2")


def test_composite_needs_all_four_tasks():
    def rec(task, metric, value, judge=None):
        return MetricRecord(task, metric, {"modality": "image"}, value, n=10, judge=judge)
    # the TRIDENT kit's inputs (compute_tcs_from_tasks), not the TriDF paper's columns
    records = [rec("tfq", "trident_accuracy", 0.7), rec("mcq", "trident_mcq_score", 0.5),
               rec("oeq_a", "f05", 0.5, "self-mapped"),
               rec("oeq_b", "trident_f05", 0.3, "self-mapped"),
               rec("oeq_b", "trident_accuracy", 0.8),
               rec("tfq", "accuracy", 0.0), rec("oeq_b", "f05", 0.0, "self-mapped")]
    out = BENCH.composite(records, ScoringContext())
    assert _find(out, "tcs", modality="image").value == pytest.approx(62.0)
    assert _find(out, "s_hal", modality="image").judge == "self-mapped"
    assert BENCH.composite(records[1:], ScoringContext()) == []


def _score(pack, rows, tmp_path, name):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return score_predictions(pack, "test", path)


def test_end_to_end_perfect_and_random(pack, pack_dir, tmp_path):
    items = {r["id"]: r for r in _rows(pack_dir, "test", "items")}
    perfect = []
    for lab in _rows(pack_dir, "test", "labels"):
        task = items[lab["id"]]["task"]
        row = {"id": lab["id"]}
        if task.startswith("oeq"):
            row["artifacts"] = lab["artifacts"]
            row.update({"label": lab["label"]} if task == "oeq_b" else {})
        else:
            row["answer"] = lab["answer"]
        perfect.append(row)
    recs = _score(pack, perfect, tmp_path, "perfect").records
    best = ("accuracy", "mcq_score", "f05", "cover")
    assert all(r.value == 1.0 for r in recs if r.metric in best)
    assert all(r.value == 0.0 for r in recs if r.metric in ("chair", "hal"))
    for m in ("image", "video", "audio"):
        assert _find(recs, "tcs", modality=m).value == pytest.approx(100.0)
    axes = {k for r in recs for k in r.slice}
    assert {"modality", "category", "artifact_type", "deepfake_task", "generator", "artifact",
            "location"} <= axes
    rand = _score(pack, list(baseline_rows(pack, "test", "random", seed=0)), tmp_path, "rand")
    by = {(r.task, r.metric): r.value for r in rand.records if r.slice == {}}
    assert abs(by["tfq", "accuracy"] - 0.5) < 0.15
    assert abs(by["mcq", "mcq_score"]) < 0.2
    assert by["oeq_a", "f05"] < 0.3
    assert abs(by["oeq_b", "accuracy"] - 0.5) < 0.2


def test_large_scale_counts(tmp_path):
    root = demo.generate(tmp_path / "large", scale="large", seed=0)
    counts: dict[str, int] = {}
    for s in ("dev", "test"):
        for r in _rows(root, s, "items"):
            counts[r["task"]] = counts.get(r["task"], 0) + 1
    assert 22_000 <= counts["tfq"] <= 25_000 and 23_000 <= counts["mcq"] <= 26_000
    assert 27_000 <= counts["oeq_a"] + counts["oeq_b"] <= 31_000
