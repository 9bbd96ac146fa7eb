"""LOKI: demo pack, hand-derived metric values, breakdown axes, end-to-end scoring."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from leaderboard.core.baselines import baseline_rows
from leaderboard.core.benchmarks.base import Block, ScoringContext, TaskSpec
from leaderboard.core.benchmarks.loki import Loki
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from leaderboard.demo import loki as demo
from leaderboard.judges.base import Judge, Rating

BENCH = Loki()
HIDDEN = set(Loki.label_fields) | {"part"}


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory) -> Path:
    return demo.generate(tmp_path_factory.mktemp("loki") / "loki", seed=0)


@pytest.fixture(scope="module")
def pack(pack_dir):
    p = load_pack(pack_dir)
    p.validate()
    return p


def _rows(pack_dir: Path, split: str, what: str) -> list[dict]:
    with open(pack_dir / "splits" / split / f"{what}.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".cache" not in p.parts}


def _block(task: str, kind: str, item: dict, truth: dict, pred: dict) -> Block:
    n = len(next(iter(item.values())))
    spec = TaskSpec(task, kind, ("video", "image", "3d", "text", "audio"), "accuracy")
    arr = lambda d: {k: np.asarray(v) for k, v in d.items()}  # noqa: E731
    return Block(spec, np.array([f"r{i}" for i in range(n)]), arr(item), arr(truth), arr(pred))


def _find(records, metric, **slc):
    hits = [r for r in records if r.metric == metric and r.slice == slc]
    assert len(hits) == 1, (metric, slc, hits)
    return hits[0]


def test_pack_is_valid_and_small(pack, pack_dir):
    counts = {s: len(_rows(pack_dir, s, "items")) for s in ("dev", "test")}
    assert 250 <= sum(counts.values()) <= 450
    size = sum(p.stat().st_size for p in pack_dir.rglob("*") if p.is_file())
    assert size < 5_000_000
    assert [t.key for t in pack.tasks] == ["judgment", "multiple_choice", "abnormal_selection",
                                           "explanation"]


def test_generator_is_deterministic(pack_dir, tmp_path):
    again = demo.generate(tmp_path / "again", seed=0)
    assert _digest(again) == _digest(pack_dir)
    other = demo.generate(tmp_path / "other", seed=1)
    assert _digest(other) != _digest(pack_dir)


def test_items_never_reveal_labels(pack_dir):
    for split in ("dev", "test"):
        for row in _rows(pack_dir, split, "items"):
            assert not HIDDEN & set(row), row
            text = json.dumps(row).lower()
            for word in ("fake", "real\"", "generator"):
                assert word not in text.replace("ask_fake", "").replace("ask_real", ""), row
        labels = _rows(pack_dir, split, "labels")
        assert all(("part" in r) == (split == "test") for r in labels)


def test_judgment_pairs_share_media_and_truth(pack_dir):
    items = {r["id"]: r for r in _rows(pack_dir, "test", "items")}
    labels = {r["id"]: r for r in _rows(pack_dir, "test", "labels")}
    for rid, row in items.items():
        if row["task"] == "judgment" and row["phrasing"] == "ask_fake":
            twin = rid.replace("ask_fake", "ask_real")
            assert items[twin]["media"] == row["media"]
            assert labels[twin]["truth"] == labels[rid]["truth"]
            assert labels[twin]["answer"] != labels[rid]["answer"]


def test_judgment_values_by_hand():
    # 4 image rows (subcategory animals) + 2 text rows; truth and answers chosen by hand.
    truth = ["fake", "fake", "real", "real", "fake", "real"]
    phrasing = ["ask_fake", "ask_real", "ask_fake", "ask_real", "ask_fake", "ask_fake"]
    correct_answer = ["yes", "no", "no", "yes", "yes", "no"]
    # right, wrong, right, unparsable, right, wrong
    given = np.array([1, 1, 0, -1, 1, 1], dtype=np.int8)
    block = _block("judgment", "yesno",
                   {"modality": ["image"] * 4 + ["text"] * 2, "phrasing": phrasing,
                    "language": [""] * 4 + ["en", "en"], "length": [""] * 4 + ["short"] * 2},
                   {"answer": correct_answer, "truth": truth,
                    "subcategory": ["animals"] * 4 + ["news"] * 2,
                    "generator": ["flux", "flux", "", "", "gpt-4o", ""],
                    "difficulty": ["easy", "hard", "easy", "hard", "medium", "medium"]},
                   {"answer": given})
    recs = BENCH.score_block(block, ScoringContext())
    assert _find(recs, "accuracy").value == pytest.approx(3 / 6)
    # image: fake acc 1/2, real acc 1/2 -> 0.5 (weight 2); text: fake 1, real 0 -> 0.5 (weight 1)
    assert _find(recs, "balanced_accuracy").value == pytest.approx(0.5)
    # overall: R_fake = 2/3, R_real = 1/3 -> NBI = (1/3 - 2/3) / 1 = -1/3
    assert _find(recs, "nbi").value == pytest.approx(-1 / 3)
    assert _find(recs, "abs_nbi").value == pytest.approx(1 / 3)
    assert _find(recs, "accuracy", modality="image").value == pytest.approx(0.5)
    assert _find(recs, "accuracy", modality="image", phrasing="ask_real").value == 0.0
    assert _find(recs, "fake_recall", modality="image", generator="flux").value == 0.5
    assert _find(recs, "accuracy", modality="text", language="en").value == 0.5
    assert _find(recs, "accuracy", modality="image", difficulty="easy").value == 1.0
    bad = _find(recs, "unparsable")
    assert (bad.value, bad.n) == (pytest.approx(1 / 6), 1)
    acc = _find(recs, "accuracy")
    assert acc.ci_low <= acc.value <= acc.ci_high
    # the paper's Overall and the difficulty table need all four non-audio modalities
    assert not [r for r in recs if "scope" in r.slice or set(r.slice) == {"difficulty"}]


def test_multiple_choice_balances_over_phrasing():
    options = np.empty(4, dtype=object)
    options[:] = [{"A": "The first one.", "B": "The second one."}] * 4
    block = _block("multiple_choice", "choice",
                   {"modality": ["image"] * 4, "phrasing": ["ask_fake"] * 3 + ["ask_real"],
                    "options": options},
                   {"answer": ["A", "B", "A", "B"], "subcategory": ["doc"] * 4},
                   {"answer": np.array(["A", "B", "B", ""])})
    recs = BENCH.score_block(block, ScoringContext())
    # the unparsable row is the authors' random pick between 2 options: 1/2 expected
    assert _find(recs, "accuracy").value == pytest.approx((1 + 1 + 0 + 0.5) / 4)
    # ask_fake acc 2/3, ask_real acc 1/2 -> (2/3 + 1/2) / 2
    assert _find(recs, "balanced_accuracy").value == pytest.approx(7 / 12)
    assert _find(recs, "unparsable").n == 1
    assert not [r for r in recs if r.metric == "nbi"]


class _FixedJudge(Judge):
    name, version = "fixed", "1"

    def rate_explanations(self, items):
        return [Rating.from_scores({"overall": 5, "completeness": 4, "correctness": 3,
                                    "plausibility": 2}, modality=c.modality) for c in items]


def test_explanation_needs_a_judge_and_uses_it():
    ref = {"global": [{"desc": "too saturated"}], "regional": []}
    block = _block("explanation", "explanation", {"modality": ["image", "image"]},
                   {"reference": np.array([ref, ref], dtype=object)},
                   {"response": np.array(["saturation is off", None], dtype=object)})
    ctx = ScoringContext()
    assert BENCH.score_block(block, ctx) == []
    assert ctx.pending[0]["metric"] == "explanation_score"
    recs = BENCH.score_block(block, ScoringContext(judge=_FixedJudge()))
    total = _find(recs, "explanation_score")
    assert (total.value, total.judge) == (pytest.approx(70.0), "fixed@1")
    assert _find(recs, "crit_completeness", modality="image").value == 4.0


def test_extraction_rules():
    assert BENCH.extract("yesno", "Yes, it is generated.", None) == "yes"
    assert BENCH.extract("choice", "I think (B).", {"A": "x", "B": "y"}) == "B"
    assert BENCH.extract("yesno", "Hard to say", None) is None


def _score(pack, split, rows, tmp_path, name):
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return score_predictions(pack, split, path)


@pytest.mark.parametrize("task", ["judgment", "multiple_choice", "abnormal_selection"])
def test_end_to_end_perfect_and_random(pack, pack_dir, tmp_path, task):
    items = {r["id"]: r for r in _rows(pack_dir, "test", "items")}
    labels = [r for r in _rows(pack_dir, "test", "labels") if items[r["id"]]["task"] == task]
    perfect = _score(pack, "test", [{"id": r["id"], "answer": r["answer"]} for r in labels],
                     tmp_path, "perfect")
    recs = perfect.records
    assert _find(recs, "accuracy").value == 1.0
    assert all(r.value == 1.0 for r in recs if r.metric in ("accuracy", "balanced_accuracy"))
    if task == "judgment":
        assert _find(recs, "nbi").value == 0.0
    axes = {k for r in recs for k in r.slice}
    expected = {"modality", "subcategory", "generator"}
    if task != "abnormal_selection":
        expected |= {"scope", "difficulty", "phrasing", "language", "length"}
    assert expected <= axes
    rand = [r for r in baseline_rows(pack, "test", "random", seed=3)
            if items[r["id"]]["task"] == task]
    value = _find(_score(pack, "test", rand, tmp_path, "random").records, "accuracy").value
    chance = 0.25 if task == "abnormal_selection" else 0.5
    assert abs(value - chance) < 0.2


def test_large_scale_counts(tmp_path):
    root = demo.generate(tmp_path / "large", scale="large", seed=0)
    n = sum(len(_rows(root, s, "items")) for s in ("dev", "test"))
    assert 18_000 <= n <= 20_000
    assert not any((root / "media").iterdir())
