import json

import pytest

from leaderboard.core.baselines import write_baseline
from leaderboard.core.errors import PredictionError
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from tests.core.toy import perfect_rows, write_rows


@pytest.fixture
def pack(toy_pack):
    return load_pack(toy_pack)


def value(records, task, metric, slice_=None):
    hits = [r for r in records if r.task == task and r.metric == metric
            and r.slice == (slice_ or {})]
    assert len(hits) == 1, hits
    return hits[0].value


def test_perfect_dev_scores_one(pack, tmp_path):
    res = score_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", perfect_rows()))
    assert list(res.parts) == ["all"]
    for task in ("detect", "ask", "pick", "arts"):
        assert value(res.records, task, "accuracy") == 1.0
    assert value(res.records, "detect", "accuracy", {"modality": "video"}) == 1.0
    kinds = {(c["task"], c["kind"], tuple(c["slice"].items())) for c in res.curves}
    assert kinds == {("detect", k, s) for k in ("roc", "pr")
                     for s in ((), (("modality", "image"),), (("modality", "video"),))}


def test_test_split_scores_each_part(pack, tmp_path):
    res = score_predictions(pack, "test", write_rows(tmp_path / "p.jsonl",
                                                     perfect_rows("test")))
    assert list(res.parts) == ["public", "private", "all"]
    assert value(res.parts["public"], "detect", "n_rows") == 10
    assert value(res.parts["private"], "detect", "n_rows") == 10
    assert value(res.parts["all"], "detect", "n_rows") == 20
    # the "arts" rows are all private, the "ask" rows all public
    assert not [r for r in res.parts["public"] if r.task == "arts"]
    assert not [r for r in res.parts["private"] if r.task == "ask"]


def test_partial_modality_coverage_drops_overall(pack, tmp_path):
    items = pack.items("dev")
    video = {str(i) for i, m in zip(items.ids, items.decoded("modality")) if m == "video"}
    rows = [r for r in perfect_rows() if r["id"] not in video]
    res = score_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", rows))
    detect = [r for r in res.records if r.task == "detect"]
    assert detect and all("modality" in r.slice for r in detect)
    assert value(res.records, "ask", "accuracy") == 1.0  # single-modality task stays complete


def test_invalid_file_raises_prediction_error(pack, tmp_path):
    with pytest.raises(PredictionError):
        score_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", ["{"]))


@pytest.mark.parametrize("kind", ["random", "all-fake", "all-real"])
def test_baselines_validate_and_score(pack, tmp_path, kind):
    out = tmp_path / f"{kind}.jsonl.gz"
    assert write_baseline(pack, "dev", kind, out, seed=3) == len(pack.items("dev"))
    res = score_predictions(pack, "dev", out)
    assert len(res.covered) == 5
    if kind == "all-fake":
        assert value(res.records, "detect", "accuracy") == 0.5


def test_records_are_json_clean(pack, tmp_path):
    res = score_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", perfect_rows()))
    json.dumps(res.as_dict(), allow_nan=False)


def test_declared_modality_without_items_does_not_hide_the_overall(tmp_path):
    import yaml

    from tests.core.toy import write_toy_pack
    root = write_toy_pack(tmp_path / "toy")
    meta = yaml.safe_load((root / "benchmark.yaml").read_text())
    meta["modalities"].append("audio")
    meta["tasks"][1]["modalities"].append("audio")  # "ask" declares audio; no audio items exist
    (root / "benchmark.yaml").write_text(yaml.safe_dump(meta))
    pack = load_pack(root)
    res = score_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", perfect_rows()))
    assert value(res.records, "ask", "accuracy") == 1.0
