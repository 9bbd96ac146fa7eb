"""`leaderboard.core.error_analysis` on demo packs: decisions by each benchmark's own threshold,
confusion counts, the order of the most confident errors, calibration only with full scores."""
import json

import numpy as np
import pytest

from leaderboard.core.benchmarks.base import Block, TaskSpec
from leaderboard.core.error_analysis import analyse, detection_decisions, detection_rule
from leaderboard.core.metrics.calibration import expected_calibration_error
from leaderboard.core.packs import load_pack
from leaderboard.core.predictions import validate_predictions


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    from leaderboard.demo import generate

    out = tmp_path_factory.mktemp("ea-packs")
    return {"syncred": load_pack(generate("syncred", out, scale="small", seed=0))}


def _labels(pack):
    with open(pack.labels_path("dev"), encoding="utf-8") as fh:
        return {r["id"]: r["label"] for r in map(json.loads, fh)}


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_tie_at_the_threshold_follows_the_benchmark(packs, tmp_path):
    pack = packs["syncred"]
    labels = _labels(pack)
    f = _write(tmp_path / "p.jsonl", [{"id": i, "score": 0.5} for i in labels])
    (a,) = analyse(pack, "dev", validate_predictions(pack, "dev", f))
    n_fake = sum(v == "fake" for v in labels.values())
    # SynCred: score >= 0.5 is fake, so every row is called fake
    assert a["confusion"]["matrix"] == [[n_fake, 0], [len(labels) - n_fake, 0]]
    assert "\u2265 0.5" in a["decision_rule"]
    # VCT²: the authors' score > 0.5, so a tie is real; a submitted label wins over the score
    block = Block(TaskSpec("detection", "detection", ("image",), "mean_accuracy"),
                  np.array(["a", "b", "c"]), {}, {},
                  {"label": np.array([-1, -1, 1], np.int8), "score": np.array([0.5, 0.6, 0.1]),
                   "decision": np.array([True, True, True])})
    assert detection_decisions("vct2", block).tolist() == [False, True, True]
    assert detection_decisions("syncred", block).tolist() == [True, True, True]
    assert "> 0.5" in detection_rule("vct2")


def test_errors_most_confident_first_and_calibration(packs, tmp_path):
    pack = packs["syncred"]
    labels = _labels(pack)
    ids = sorted(labels)
    rng = np.random.default_rng(7)
    score = rng.random(len(ids)).round(4)
    f = _write(tmp_path / "p.jsonl", [{"id": i, "score": float(s)} for i, s in zip(ids, score)])
    (a,) = analyse(pack, "dev", validate_predictions(pack, "dev", f), max_errors=5)
    y = np.array([labels[i] == "fake" for i in ids])
    wrong = y != (score >= 0.5)
    assert a["errors_total"] == int(wrong.sum()) and len(a["errors"]) == 5
    confidence = np.where(y, 1 - score, score)[wrong]
    assert [e["confidence"] for e in a["errors"]] == pytest.approx(
        sorted(confidence, reverse=True)[:5])
    assert all(e["media"] and e["media"][0].startswith("media/") for e in a["errors"])
    assert a["calibration"]["ece"] == pytest.approx(expected_calibration_error(y, score))
    assert a["errors_by_confidence"]


def test_labels_only_rows_have_no_calibration(packs, tmp_path):
    pack = packs["syncred"]
    labels = _labels(pack)
    f = _write(tmp_path / "p.jsonl", [{"id": i, "label": "fake"} for i in labels])
    (a,) = analyse(pack, "dev", validate_predictions(pack, "dev", f))
    assert a["calibration"] is None and "needs a score on every row" in a["calibration_note"]
    assert a["confusion"]["matrix"][1][0] == sum(v == "real" for v in labels.values())
    assert not a["errors_by_confidence"] and all(e["score"] is None for e in a["errors"])
