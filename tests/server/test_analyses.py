"""VCT²: each generator's Visual AI Index against detectors' mean accuracy, on the benchmark page."""
import pytest

from leaderboard.core.baselines import write_baseline
from leaderboard.core.packs import load_pack
from leaderboard.server.boards.analyses import _pearson, vai_vs_accuracy


def test_pearson_by_hand():
    assert _pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert _pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert _pearson([1, 2], [1, 2]) is None          # fewer than 3 points
    assert _pearson([1, 1, 1], [1, 2, 3]) is None    # no variance


@pytest.fixture
def vct2(app, tmp_path_factory):
    from leaderboard.demo import generate
    from leaderboard.server.services.benchmarks import import_pack

    path = generate("vct2", tmp_path_factory.mktemp("vct2"), scale="small", seed=0)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        import_pack(s, path, data_dir=app.config["DATA_DIR"], label_keys=app.config["LABEL_KEYS"])
    return path


def test_benchmark_page_shows_vai_vs_accuracy(app, client, auth, vct2, tmp_path):
    token = auth.member()
    pack = load_pack(vct2)
    for seed in (1, 2):
        preds = tmp_path / f"r{seed}.jsonl"
        write_baseline(pack, "test", "random", preds, seed=seed)
        with open(preds, "rb") as fh:
            resp = client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                               data={"benchmark": "vct2", "split": "test", "method_name": f"r{seed}",
                                     "file": (fh, "p.jsonl")})
        assert resp.status_code == 202, resp.get_data(as_text=True)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        got = vai_vs_accuracy(s, "vct2", "test", "public")
    assert {g["subset"] for g in got} == {"COCO_AI", "Twitter_AI"}
    coco = next(g for g in got if g["subset"] == "COCO_AI")
    assert coco["submissions"] == 2 and len(coco["generators"]) == 6
    assert coco["pearson"] is not None and -1 <= coco["pearson"] <= 1
    assert all(0 <= r["vai"] <= 1 and 0 <= r["mean_accuracy"] <= 1 for r in coco["generators"])
    page = client.get("/benchmarks/vct2").get_data(as_text=True)
    assert "Visual AI Index vs detectors" in page and "COCO_AI: Pearson r =" in page


def test_home_page_lists_top_teams_per_task(app, client, auth, imported, baseline_files):
    token = auth.member()
    with open(baseline_files["test"], "rb") as fh:
        resp = client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                           data={"benchmark": imported, "split": "test", "method_name": "mine",
                                 "file": (fh, "test.jsonl")})
    assert resp.status_code == 202
    page = client.get("/").get_data(as_text=True)
    assert 'class="leaders"' in page and "1st" in page and "Team Ada" in page
