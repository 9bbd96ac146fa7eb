import json
from pathlib import Path

import numpy as np
import pytest

from leaderboard.core.benchmarks.base import Block, ScoringContext, TaskSpec
from leaderboard.core.benchmarks.uniaidet import FAMILY_OF, UniAIDet
from leaderboard.core.metrics.masks import encode_mask
from leaderboard.core.packs import load_pack
from leaderboard.demo import uniaidet as demo

TASK = TaskSpec("detection", "detection", ("image",), "accuracy")
TOP = encode_mask(np.array([[True, True], [False, False]]))
LEFT = encode_mask(np.array([[True, False], [True, False]]))


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".cache" not in p.parts}


def by(records):
    return {(r.metric, tuple(sorted(r.slice.items()))): r for r in records}


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory):
    return demo.generate(tmp_path_factory.mktemp("uniaidet") / "pack", seed=0)


def hand_block(score=None):
    truth = {
        "label": np.array(["real", "real", "fake", "fake", "fake", "fake"]),
        "domain": np.array(["photo", "art"] * 3),
        "family": np.array(["", "", "text-to-image", "text-to-image", "inpainting", "inpainting"]),
        "generator": np.array(["", "", "SD-1.5", "SD-1.5", "SD2-Inpaint", "SD2-Inpaint"]),
        "mask": np.array([None, None, None, None, TOP, TOP], dtype=object),
    }
    dec = np.array([0, 1, 1, 0, 1, 1], dtype=bool)
    s = np.full(6, np.nan) if score is None else np.asarray(score, float)
    pred = {"label": dec.astype(np.int8), "score": s, "decision": dec, "has_score": ~np.isnan(s),
            "mask": np.array([None, None, None, None, LEFT, None], dtype=object)}
    item = {"width": np.full(6, 2), "height": np.full(6, 2)}
    return Block(TASK, np.array([f"i{i}" for i in range(6)]), item, truth, pred)


def test_pack_validates_with_every_generator_and_masks(pack_dir):
    pack = load_pack(pack_dir)
    pack.validate()
    gens, partial_without_mask = set(), 0
    for split in pack.splits:
        lab, items = pack.labels(split), pack.items(split)
        fam = lab.decoded("family")
        gens |= set(lab.decoded("generator").tolist()) - {""}
        for i in range(len(items)):
            mask = lab.value("mask", i)
            if fam[i] in ("inpainting", "editing", "deepfake"):
                partial_without_mask += mask is None
                if mask is not None:
                    assert mask["size"] == [int(items.decoded("height")[i]),
                                            int(items.decoded("width")[i])]
            else:
                assert mask is None
    assert gens == set(FAMILY_OF) and partial_without_mask == 0


def test_items_reveal_no_label(pack_dir):
    for split in ("dev", "test"):
        for line in (pack_dir / "splits" / split / "items.jsonl").read_text().splitlines():
            row = json.loads(line)
            assert set(row) == {"id", "task", "modality", "media", "width", "height"}
            assert not any(w in line for w in ("fake", "real", "photo", "art", "SD"))


def test_generator_is_deterministic(pack_dir, tmp_path):
    assert snapshot(demo.generate(tmp_path / "again", seed=0)) == snapshot(pack_dir)


def test_values_by_hand():
    r = by(UniAIDet().score_block(hand_block(), ScoringContext()))
    assert r[("accuracy", ())].value == pytest.approx(4 / 6)
    assert r[("f_acc", ())].value == 0.75 and r[("r_acc", ())].value == 0.5
    assert r[("average_precision", ())].value is None
    assert r[("miou", ())].value == pytest.approx(1 / 6) and r[("miou", ())].n == 2
    assert r[("accuracy", (("domain", "photo"),))].value == 1.0
    assert r[("miou", (("domain", "photo"),))].value == pytest.approx(1 / 3)
    assert r[("accuracy", (("domain", "art"),))].value == pytest.approx(1 / 3)
    assert r[("r_acc", (("domain", "art"),))].value == 0.0
    assert r[("miou", (("domain", "art"),))].value == 0.0
    assert r[("f_acc", (("generator", "SD-1.5"),))].value == 0.5
    assert r[("f_acc", (("domain", "art"), ("generator", "SD-1.5")))].value == 0.0
    assert r[("miou", (("family", "inpainting"),))].value == pytest.approx(1 / 6)
    assert ("miou", (("family", "text-to-image"),)) not in r
    assert r[("art_minus_photo_f_acc", (("generator", "SD-1.5"),))].value == -1.0
    assert r[("art_minus_photo_f_acc", (("generator", "SD2-Inpaint"),))].value == 0.0
    assert r[("art_minus_photo_miou", (("generator", "SD2-Inpaint"),))].value == pytest.approx(-1 / 3)
    assert r[("art_minus_photo_f_acc", (("family", "inpainting"),))].value == 0.0


def test_average_precision_with_scores():
    r = by(UniAIDet().score_block(hand_block([0.1, 0.6, 0.9, 0.4, 0.8, 0.7]), ScoringContext()))
    # ranking: 0.9 F, 0.8 F, 0.7 F, 0.6 R, 0.4 F, 0.1 R -> AP = (1 + 1 + 1 + 0.8) / 4
    assert r[("average_precision", ())].value == pytest.approx(0.95)
    assert r[("average_precision", ())].ci_low is not None


def test_end_to_end_perfect(pack_dir, tmp_path):
    from leaderboard.core.scoring import score_predictions

    pack = load_pack(pack_dir)
    labels, items = pack.labels("test"), pack.items("test")
    y = labels.decoded("label")
    path = tmp_path / "perfect.jsonl"
    with open(path, "w") as fh:
        for i, rid in enumerate(items.ids.tolist()):
            row = {"id": rid, "label": str(y[i]), "score": float(y[i] == "fake")}
            if labels.value("mask", i) is not None:
                row["mask"] = labels.value("mask", i)
            fh.write(json.dumps(row) + "\n")
    r = by(score_predictions(pack, "test", path).records)
    for m in ("accuracy", "f_acc", "r_acc", "average_precision", "miou"):
        assert r[(m, ())].value == 1.0, m
    axes = {tuple(k for k, _ in sl) for _, sl in r}
    assert {("domain",), ("family",), ("generator",), ("domain", "family"),
            ("domain", "generator")} <= axes
