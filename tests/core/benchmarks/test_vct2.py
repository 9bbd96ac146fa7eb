import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from leaderboard.core.benchmarks.base import Block, ScoringContext, TaskSpec
from leaderboard.core.benchmarks.vct2 import SUBSET_GENERATORS, Vct2
from leaderboard.core.packs import load_pack
from leaderboard.demo import vct2 as demo
from leaderboard.features.vai import FEATURES, prepare_vai

TASK = TaskSpec("detection", "detection", ("image",), "mean_accuracy")


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".cache" not in p.parts}


def by(records):
    return {(r.metric, tuple(sorted(r.slice.items()))): r for r in records}


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory):
    return demo.generate(tmp_path_factory.mktemp("vct2") / "pack", seed=0)


def hand_block(vai=None, score=None):
    subset = np.array(["COCO_AI"] * 6 + ["Twitter_AI"] * 4)
    gen = np.array(["", "", "SD 2.1", "SD 2.1", "SDXL", "SDXL", "", "", "SD 2.1", "SD 2.1"])
    label = np.where(gen == "", "real", "fake")
    dec = np.array([0, 1, 1, 1, 1, 0, 0, 0, 0, 0], dtype=bool)
    s = np.full(10, np.nan) if score is None else np.asarray(score, float)
    v = np.full(10, np.nan) if vai is None else np.asarray(vai, float)
    truth = {"label": label, "subset": subset, "generator": gen, "vai": v}
    pred = {"label": dec.astype(np.int8), "score": s, "decision": dec, "has_score": ~np.isnan(s)}
    return Block(TASK, np.array([f"i{i}" for i in range(10)]), {}, truth, pred)


def test_pack_validates_pairs_and_vai(pack_dir):
    pack = load_pack(pack_dir)
    pack.validate()
    meta = yaml.safe_load((pack_dir / "benchmark.yaml").read_text())
    assert set(meta["vai"]["subsets"]) == {"COCO_AI", "Twitter_AI"}
    assert meta["vai"]["features"] == list(FEATURES)
    groups: dict[tuple, list] = {}
    for split in pack.splits:
        lab = pack.labels(split)
        for i in range(len(lab)):
            key = (lab.decoded("subset")[i], int(lab.decoded("pair")[i]))
            groups.setdefault(key, []).append((split, lab.decoded("label")[i],
                                               lab.decoded("generator")[i], lab.decoded("vai")[i]))
    assert len(groups) == 24 + 20
    vai_real, vai_fake = [], []
    for (subset, _), rows in groups.items():
        assert len({r[0] for r in rows}) == 1  # a caption's images share the split
        assert sorted(r[2] for r in rows) == sorted(("", *SUBSET_GENERATORS[subset]))
        vai_real += [r[3] for r in rows if r[1] == "real"]
        vai_fake += [r[3] for r in rows if r[1] == "fake"]
    assert np.mean(vai_real) > np.mean(vai_fake)


def test_items_reveal_no_label(pack_dir):
    for split in ("dev", "test"):
        text = (pack_dir / "splits" / split / "items.jsonl").read_text()
        for line in text.splitlines():
            assert set(json.loads(line)) == {"id", "task", "modality", "media"}
        assert not any(w in text for w in ("fake", "real", "COCO", "caption", "vai"))


def test_generator_is_deterministic(pack_dir, tmp_path):
    assert snapshot(demo.generate(tmp_path / "again", seed=0)) == snapshot(pack_dir)


def test_values_by_hand():
    ctx = ScoringContext()
    r = by(Vct2().score_block(hand_block(), ctx))
    coco_sd = (("generator", "SD 2.1"), ("subset", "COCO_AI"))
    assert r[("accuracy", coco_sd)].value == 0.75
    assert r[("precision", coco_sd)].value == pytest.approx(2 / 3)
    assert r[("recall", coco_sd)].value == 1.0 and r[("f_acc", coco_sd)].value == 1.0
    assert r[("r_acc", coco_sd)].value == 0.5 and r[("accuracy", coco_sd)].n == 4
    coco_xl = (("generator", "SDXL"), ("subset", "COCO_AI"))
    assert r[("accuracy", coco_xl)].value == 0.5 and r[("precision", coco_xl)].value == 0.5
    tw = (("generator", "SD 2.1"), ("subset", "Twitter_AI"))
    assert r[("accuracy", tw)].value == 0.5 and r[("recall", tw)].value == 0.0
    # nothing called fake: precision 0 as sklearn's precision_score (zero_division default) and the
    # authors' calculate_metrics give it, so the subset's and the overall means stay defined
    assert r[("precision", tw)].value == 0.0 and r[("precision", tw)].metric_version == "3"
    assert r[("precision", tw)].ci_low == 0.0 == r[("precision", tw)].ci_high
    assert r[("mean_precision", (("subset", "Twitter_AI"),))].value == 0.0
    assert r[("mean_precision", ())].value == pytest.approx((2 / 3 + 0.5 + 0.0) / 3)
    assert r[("mean_accuracy", (("subset", "COCO_AI"),))].value == 0.625
    assert r[("mean_accuracy", ())].value == pytest.approx((0.75 + 0.5 + 0.5) / 3)
    head = r[("mean_accuracy", ())]
    assert head.ci_low <= head.value <= head.ci_high
    assert r[("average_precision", coco_sd)].value is None
    assert not any(m.startswith("vai") for m, _ in r)
    assert any("Visual AI Index" in n for n in ctx.notes)


def test_vai_records_by_hand():
    vai = [0.9, 0.8, 0.2, 0.4, 0.6, 0.6, 0.7, 0.7, 0.1, 0.1]
    extras = {"vai": {"features": list(FEATURES), "subsets": {"COCO_AI": {
        "features": list(FEATURES), "weights": list(range(12))}}}}
    r = by(Vct2().score_block(hand_block(vai), ScoringContext(extras=extras)))
    assert r[("vai_mean", (("generator", "real"), ("subset", "COCO_AI")))].value == pytest.approx(0.85)
    assert r[("vai_mean", (("generator", "SD 2.1"), ("subset", "COCO_AI")))].value == pytest.approx(0.3)
    # two generators: VAI (0.3, 0.6) against accuracy (0.75, 0.5) -> rho = -1
    assert r[("vai_accuracy_pearson", (("subset", "COCO_AI"),))].value == pytest.approx(-1.0)
    assert ("vai_accuracy_pearson", (("subset", "Twitter_AI"),)) not in r  # one generator
    assert r[("vai_weight", (("feature", FEATURES[3]), ("subset", "COCO_AI")))].value == 3.0


def test_average_precision_per_cell_from_one_sort():
    from leaderboard.core.metrics.ranking import average_precision

    score = [0.2, 0.7, 0.9, 0.6, 0.65, 0.1, 0.5, 0.3, 0.4, 0.8]
    b = hand_block(score=score)
    r = by(Vct2().score_block(b, ScoringContext()))
    s = np.array(score)
    for subset, gen, rows in (("COCO_AI", "SD 2.1", [0, 1, 2, 3]), ("COCO_AI", "SDXL", [0, 1, 4, 5]),
                              ("Twitter_AI", "SD 2.1", [6, 7, 8, 9])):
        want = average_precision(y_true=b.truth["label"][rows] == "fake", y_score=s[rows])
        got = r[("average_precision", (("generator", gen), ("subset", subset)))].value
        assert got == pytest.approx(want)


def test_prepare_recomputes_the_stored_vai(pack_dir, tmp_path):
    pack = load_pack(pack_dir)
    out = prepare_vai(pack, tmp_path / "prep")
    assert json.loads((tmp_path / "prep" / "vai.json").read_text())["features"] == list(FEATURES)
    for split in pack.splits:
        lab, items = pack.labels(split), pack.items(split)
        stored = lab.decoded("vai")
        got = np.array([out["items"][i] for i in items.ids.tolist()])
        np.testing.assert_allclose(got, stored, atol=1e-4)


def test_end_to_end_perfect(pack_dir, tmp_path):
    from leaderboard.core.scoring import score_predictions

    pack = load_pack(pack_dir)
    y = pack.labels("test").decoded("label")
    path = tmp_path / "perfect.jsonl"
    with open(path, "w") as fh:
        for rid, lab in zip(pack.items("test").ids.tolist(), y.tolist()):
            fh.write(json.dumps({"id": rid, "score": 0.9 if lab == "fake" else 0.1}) + "\n")
    r = by(score_predictions(pack, "test", path).records)
    assert r[("mean_accuracy", ())].value == 1.0
    assert all(rec.value == 1.0 for (m, _), rec in r.items() if m == "average_precision")
    assert {("subset",), ("generator", "subset"), ("feature", "subset")} <= {
        tuple(k for k, _ in sl) for _, sl in r}


def test_a_tie_at_one_half_without_a_label_is_real(pack_dir, tmp_path):
    """The authors' ``calculate_metrics`` calls a row fake when ``y_pred > 0.5``: a team that
    submits scores only, all exactly 0.5, has called nothing fake (recall 0, precision 0), and a
    submitted label still decides its row."""
    from leaderboard.core.scoring import score_predictions

    pack = load_pack(pack_dir)
    ids = pack.items("test").ids.tolist()
    y = pack.labels("test").decoded("label").tolist()
    ties = tmp_path / "ties.jsonl"
    ties.write_text("".join(json.dumps({"id": i, "score": 0.5}) + "\n" for i in ids))
    res = score_predictions(pack, "test", ties, n_resamples=20)
    r = by(res.records)
    assert r[("mean_recall", ())].value == 0.0 and r[("mean_precision", ())].value == 0.0
    # every cell: its reals right, its fakes wrong; one real per fake (pairs by caption)
    assert r[("mean_accuracy", ())].value == 0.5
    for (metric, sl), rec in r.items():
        if metric in ("r_acc",):
            assert rec.value == 1.0, sl
        if metric in ("accuracy", "recall", "precision", "mean_accuracy", "r_acc"):
            assert rec.metric_version == ("3" if metric == "precision" else "2")
    assert r[("average_precision", next(sl for m, sl in r if m == "average_precision"))
             ].metric_version == "1"  # AP reads scores, not decisions: unchanged
    # just above 0.5 is fake; a label given beside a 0.5 score decides its row
    above = tmp_path / "above.jsonl"
    above.write_text("".join(json.dumps({"id": i, "score": 0.5000001}) + "\n" for i in ids))
    assert by(score_predictions(pack, "test", above, n_resamples=20).records)[
        ("mean_recall", ())].value == 1.0
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text("".join(json.dumps({"id": i, "score": 0.5, "label": lab}) + "\n"
                                for i, lab in zip(ids, y)))
    assert by(score_predictions(pack, "test", labelled, n_resamples=20).records)[
        ("mean_accuracy", ())].value == 1.0


def test_per_item_outcomes_follow_the_same_rule(pack_dir, tmp_path):
    """The rank intervals' per-item outcomes recompute the headline with the authors' rule too."""
    from leaderboard.core.outcomes import point_value
    from leaderboard.core.scoring import score_predictions

    pack = load_pack(pack_dir)
    ids = pack.items("test").ids.tolist()
    ties = tmp_path / "ties.jsonl"
    ties.write_text("".join(json.dumps({"id": i, "score": (0.5, 0.9)[k % 2]}) + "\n"
                            for k, i in enumerate(ids)))
    res = score_predictions(pack, "test", ties, n_resamples=20)
    outcome = res.outcomes["all"]["detection"]
    assert outcome.metric_version == "2"
    assert point_value(outcome) == pytest.approx(by(res.records)[("mean_accuracy", ())].value)
