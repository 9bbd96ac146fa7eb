"""Rank intervals on boards, the per-item outcome store, paired comparisons, and that none of it
leaks a label (issue 14). Real uploads of the SynCred demo pack, scored inline."""
from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

from leaderboard.server.services import outcome_store

BOARD = "/api/v1/boards/syncred/detection/test"


def _labels(demo_packs) -> list[dict]:
    path = demo_packs["syncred"] / "splits" / "test" / "labels.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _preds(labels, *, wrong=(), seed=0, noise=0.0) -> bytes:
    """Right on every item but ``wrong`` (indices); scores rank the fakes first."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, row in enumerate(labels):
        fake = (row["label"] == "fake") != (i in wrong)
        score = (0.75 if fake else 0.25) + float(rng.uniform(-noise, noise))
        rows.append({"id": row["id"], "label": "fake" if fake else "real",
                     "score": round(min(1.0, max(0.0, score)), 6)})
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def _upload(client, token, data: bytes, *, method="m", is_public=True) -> int:
    form = {"benchmark": "syncred", "split": "test", "method_name": method,
            "is_public": "1" if is_public else "0", "file": (io.BytesIO(data), "p.jsonl")}
    resp = client.post("/api/v1/submissions", data=form, content_type="multipart/form-data",
                       headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202, resp.json
    sid = resp.json["id"]
    status = client.get(f"/api/v1/submissions/{sid}",
                        headers={"Authorization": f"Bearer {token}"}).json
    assert status["status"] == "scored", status
    return sid


def _teams(client, auth, n):
    tokens = []
    for i in range(n):
        auth.logout()
        tokens.append(auth.member(email=f"u{i}@example.org", team=f"Team {i}"))
    auth.logout()
    return tokens


@pytest.fixture
def board_subs(app, client, auth, imported, demo_packs):
    """Three teams: two with the same perfect predictions, one with many errors."""
    labels = _labels(demo_packs)
    tokens = _teams(client, auth, 3)
    good = _preds(labels, noise=0.2)
    bad = _preds(labels, wrong=range(0, 200, 3), seed=1, noise=0.2)
    sids = [_upload(client, tokens[0], good, method="good-a"),
            _upload(client, tokens[1], good, method="good-b"),
            _upload(client, tokens[2], bad, method="bad")]
    return {"labels": labels, "tokens": tokens, "sids": sids}


def test_scoring_writes_outcomes_and_rescoring_replaces_them(app, board_subs):
    sid = board_subs["sids"][0]
    data_dir = app.config["DATA_DIR"]
    stored = outcome_store.read(data_dir, sid)
    assert set(stored) == {"public", "private", "all"}
    o = stored["all"]["detection"]
    assert o.metric == "tpr_at_fpr_5" and len(o) == len(board_subs["labels"])
    original = outcome_store.path_of(data_dir, sid).read_bytes()
    # a stale file (say, from an older scoring) is replaced by the rescoring's
    outcome_store.write(data_dir, sid, {"all": {"detection": o.subset(np.arange(len(o)) < 40)}})
    from leaderboard.server.jobs.scoring import score_submission
    from leaderboard.server.models import Submission
    from leaderboard.server.services.scoring_service import request_rescore

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            request_rescore(s, s.get(Submission, sid), deadline_s=600)
        assert score_submission(sid)["status"] == "scored"
    again = outcome_store.read(data_dir, sid)
    assert len(again["all"]["detection"]) == len(o)
    assert np.array_equal(again["all"]["detection"].x, o.x)
    assert outcome_store.path_of(data_dir, sid).read_bytes() == original
    outcome_store.delete(data_dir, sid)
    assert outcome_store.read(data_dir, sid) == {}


def test_invalid_upload_keeps_no_outcomes(app, client, auth, imported):
    token = auth.member()
    form = {"benchmark": "syncred", "split": "test", "method_name": "x",
            "file": (io.BytesIO(b'{"id": "nope"}\n'), "p.jsonl")}
    resp = client.post("/api/v1/submissions", data=form, content_type="multipart/form-data",
                       headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202
    assert not outcome_store.path_of(app.config["DATA_DIR"], resp.json["id"]).exists()


def test_board_rows_carry_rank_intervals(client, board_subs):
    a, b, c = board_subs["sids"]
    body = client.get(BOARD).json
    rows = {r["submission_id"]: r for r in body["rows"]}
    assert body["part"] == "public" and "joint bootstrap" in body["interval_rule"]
    ia, ib, ic = (rows[s]["rank_interval"] for s in (a, b, c))
    assert ia["tied_first"] and ib["tied_first"] and (ia["lo"], ia["hi"]) == (ib["lo"], ib["hi"])
    assert (ia["lo"], ia["hi"]) == (1, 2)
    assert not ic["tied_first"] and (ic["lo"], ic["hi"]) == (3, 3)
    html = client.get("/benchmarks/syncred/boards/detection/test").get_data(as_text=True)
    assert "tied 1st" in html and "Rank intervals." in html and "vs above" in html
    csv = client.get(BOARD + ".csv").get_data(as_text=True).splitlines()
    assert csv[0].endswith('"rank_lo","rank_hi","tied_first","benchmark","family","release"')


def test_intervals_are_cached_with_the_board(app, client, board_subs, monkeypatch):
    from leaderboard.server.boards import intervals
    from leaderboard.server.boards.cache import invalidate_boards

    calls = []
    real = intervals.board_intervals
    monkeypatch.setattr(intervals, "board_intervals", lambda **kw: calls.append(1) or real(**kw))
    with app.app_context():
        invalidate_boards("syncred")
    client.get(BOARD)
    client.get(BOARD)
    client.get(BOARD + "?per_page=2")
    assert len(calls) == 1
    with app.app_context():
        invalidate_boards("syncred")
    client.get(BOARD)
    assert len(calls) == 2


def test_compare_page_and_api(client, board_subs):
    a, b, c = board_subs["sids"]
    body = client.get(f"/api/v1/compare/syncred/test?a={a}&b={c}").json
    assert body["part"] == "public" and body["a"]["submission_id"] == a
    (task,) = body["tasks"]
    overall = task["slices"][0]
    assert overall["slice"] == {} and overall["test"] == "paired bootstrap"
    assert overall["difference"] > 0 and overall["ci_low"] <= overall["difference"]
    same = client.get(f"/api/v1/compare/syncred/test?a={a}&b={b}").json
    assert "refused" in same["tasks"][0]["slices"][0]  # identical: they differ nowhere
    html = client.get(f"/compare/syncred/test?a={a}&b={c}").get_data(as_text=True)
    assert "paired bootstrap" in html and "A − B" in html
    assert client.get("/compare/syncred/test").status_code == 200  # the form
    assert client.get(f"/api/v1/compare/syncred/test?a={a}&b=zz").status_code == 400
    assert client.get(f"/api/v1/compare/syncred/dev?a={a}&b={c}").status_code == 400
    assert client.get(f"/api/v1/compare/syncred/test?a={a}").status_code == 400
    assert client.get(f"/api/v1/compare/syncred/test?a={a}&b=99999").status_code == 404
    assert client.get(f"/api/v1/compare/syncred/test?a={a}&b={10**30}").status_code == 404
    assert client.get(f"/api/v1/compare/syncred/test?a={a}&b=-3").status_code == 404
    assert client.get(f"/compare/syncred/test?a={a}&b=%00").status_code == 400
    assert client.get(f"/api/v1/compare/nope/test?a={a}&b={c}").status_code == 404


def test_private_submissions_compare_only_for_their_team(client, auth, board_subs):
    a = board_subs["sids"][0]
    labels = board_subs["labels"]
    token = board_subs["tokens"][2]
    hidden = _upload(client, token, _preds(labels, wrong=range(1, 200, 4)), is_public=False)
    url = f"/api/v1/compare/syncred/test?a={a}&b={hidden}"
    assert client.get(url).status_code == 404                              # anonymous
    assert client.get(url, headers={"Authorization": f"Bearer {token}"}).status_code == 200
    other = board_subs["tokens"][0]
    assert client.get(url, headers={"Authorization": f"Bearer {other}"}).status_code == 404


def test_no_route_lets_a_team_recover_a_label(app, client, auth, board_subs):
    """Two submissions of one team that differ on a single item: every response about them
    (board HTML / JSON / CSV, compare page and API, submission pages) stays at per-slice
    aggregates, names no item, and the compare refuses the slice."""
    labels = board_subs["labels"]
    token = board_subs["tokens"][1]
    x = _upload(client, token, _preds(labels, wrong=[5, 9]), method="x")
    y = _upload(client, token, _preds(labels, wrong=[5, 9, 17]), method="y")
    headers = {"Authorization": f"Bearer {token}"}
    compare = client.get(f"/api/v1/compare/syncred/test?a={x}&b={y}", headers=headers).json
    for task in compare["tasks"]:
        for s in task["slices"]:
            assert "refused" in s and set(s) <= {"slice", "n", "refused"}
    urls = [BOARD, BOARD + ".csv", BOARD + "?mode=all", "/benchmarks/syncred/boards/detection/test",
            "/benchmarks/syncred/boards/detection/test?mode=all",
            f"/compare/syncred/test?a={x}&b={y}", f"/api/v1/compare/syncred/test?a={x}&b={y}",
            f"/submissions/{x}", f"/submissions/{x}/records.json"]
    ids = {row["id"] for row in labels}
    for url in urls:
        resp = client.get(url, headers=headers)
        assert resp.status_code == 200, url
        text = resp.get_data(as_text=True)
        assert not ids & set(re.findall(r"sc-[0-9a-f]{16}", text)), url
        assert "outcomes" not in text.lower() or url.startswith("/compare"), url
    # the outcome files are not reachable by any path
    for path in (f"/data/outcomes/{x}.npz", f"/outcomes/{x}.npz", f"/static/../outcomes/{x}.npz"):
        assert client.get(path).status_code == 404



def test_private_part_follows_the_reveal(app, client, board_subs):
    from sqlalchemy import select

    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.models import Benchmark

    a, _, c = board_subs["sids"]
    before = client.get(f"/api/v1/compare/syncred/test?a={a}&b={c}").json
    assert before["part"] == "public"
    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            s.scalar(select(Benchmark).where(Benchmark.key == "syncred")).private_revealed = True
        invalidate_boards("syncred")
    body = client.get(BOARD).json
    assert body["part"] == "private"
    assert all(r["rank_interval"] for r in body["rows"])
    after = client.get(f"/api/v1/compare/syncred/test?a={a}&b={c}").json
    assert after["part"] == "private"
    assert after["tasks"][0]["slices"][0]["n"] != before["tasks"][0]["slices"][0]["n"]


def test_modality_boards_of_a_multimodal_task_get_intervals(app, client, auth, demo_packs,
                                                            tmp_path):
    """LOKI judgment: the overall board and each modality's board resample their own items."""
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack
    from leaderboard.server.services.benchmarks import import_pack

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            import_pack(s, demo_packs["loki"], data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
    pack = load_pack(demo_packs["loki"])
    tokens = _teams(client, auth, 2)
    for i, (token, kind) in enumerate(zip(tokens, ("random", "all-fake"))):
        f = tmp_path / f"{kind}.jsonl"
        write_baseline(pack, "test", kind, f, seed=i)
        form = {"benchmark": "loki", "split": "test", "method_name": kind,
                "file": (io.BytesIO(f.read_bytes()), "p.jsonl")}
        resp = client.post("/api/v1/submissions", data=form, content_type="multipart/form-data",
                           headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 202, resp.json
    overall = client.get("/api/v1/boards/loki/judgment/test").json
    assert [r["rank_interval"] is not None for r in overall["rows"]] == [True, True]
    image = client.get("/api/v1/boards/loki/judgment/test?modality=image").json
    assert image["slice_key"] == "modality=image"
    assert all(r["rank_interval"] for r in image["rows"]) and image["interval_rule"]
    other = client.get("/api/v1/boards/loki/judgment/test?modality=image"
                       "&slice=phrasing%3Dask_fake").json
    assert other["slice_key"] == "modality=image;phrasing=ask_fake" and other["rows"]
    assert all(r["rank_interval"] is None for r in other["rows"])  # not an item set we keep
    assert not other["interval_rule"]
