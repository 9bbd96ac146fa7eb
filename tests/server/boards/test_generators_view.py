"""Seen / unseen generators and the detectors x generators matrix on a real board (issue 37):
the UniAIDet demo pack with a constructed generators table (half dated 2000, half 2999, one
left undated), real uploads scored inline, every number checked against a hand computation,
and the matrix's numbers against the API's. SQLite and PostgreSQL."""
from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil

import pytest
import yaml

from leaderboard.server.boards.plots import format_value
from tests.server.test_rank_intervals import _teams

API = "/api/v1/boards/uniaidet/detection/test/generators"
PAGE = "/benchmarks/uniaidet/boards/detection/test/generators"
UNDATED = "CSCS"


@pytest.fixture(scope="module")
def gen_pack(tmp_path_factory):
    """The UniAIDet demo pack whose generators table is the test's own."""
    from leaderboard.demo import generate

    src = generate("uniaidet", tmp_path_factory.mktemp("gsrc"), scale="small", seed=0)
    root = tmp_path_factory.mktemp("gpack") / "uniaidet"
    shutil.copytree(src, root)
    labels = [json.loads(line) for line in
              (root / "splits" / "test" / "labels.jsonl").read_text().splitlines() if line]
    present = sorted({r["generator"] for r in labels if r.get("generator")} - {UNDATED})
    old, new = present[: len(present) // 2], present[len(present) // 2:]
    meta = yaml.safe_load((root / "benchmark.yaml").read_text())
    meta["generators"] = ([{"key": g, "name": g, "modality": "image", "date": "2000-01-01"}
                           for g in old]
                          + [{"key": g, "name": g, "modality": "image", "date": "2999-12-31"}
                             for g in new])
    (root / "benchmark.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    return {"root": root, "labels": labels, "old": old, "new": new}


def _preds(labels, wrong) -> bytes:
    rows = []
    for i, r in enumerate(labels):
        fake = (r["label"] == "fake") != wrong(i, r)
        rows.append({"id": r["id"], "label": "fake" if fake else "real",
                     "score": 0.75 if fake else 0.25})
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def _acc(labels, wrong, gens) -> tuple[float, int]:
    """By hand: accuracy on the public part's reals plus the fakes of ``gens``, and n."""
    rows = [(i, r) for i, r in enumerate(labels) if r["part"] == "public"
            and (r["label"] == "real" or r.get("generator") in gens)]
    return sum(not wrong(i, r) for i, r in rows) / len(rows), len(rows)


@pytest.fixture
def scored(app, client, auth, gen_pack):
    from leaderboard.server.services.benchmarks import import_pack

    with app.app_context(), app.extensions["lb_db"].scope() as s:
        import_pack(s, gen_pack["root"], data_dir=app.config["DATA_DIR"],
                    label_keys=app.config["LABEL_KEYS"])
    labels, new = gen_pack["labels"], set(gen_pack["new"])
    rules = {"forgets-new": lambda i, r: r.get("generator") in new,
             "every-third": lambda i, r: i % 3 == 0}
    tokens = _teams(client, auth, 2)
    sids = {}
    for token, (method, rule) in zip(tokens, rules.items()):
        sids[method] = _upload_to(client, token, _preds(labels, rule), method)
    return {"rules": rules, "sids": sids, "tokens": tokens}


def _upload_to(client, token, data: bytes, method: str) -> int:
    form = {"benchmark": "uniaidet", "split": "test", "method_name": method, "is_public": "1",
            "file": (io.BytesIO(data), "p.jsonl")}
    resp = client.post("/api/v1/submissions", data=form, content_type="multipart/form-data",
                       headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202, resp.json
    return resp.json["id"]


def test_seen_unseen_gap_by_hand(client, gen_pack, scored):
    view = client.get(API).json
    public = {r.get("generator") for r in gen_pack["labels"] if r["part"] == "public"}
    assert [g["key"] for g in view["generators"]] == [
        g for g in gen_pack["old"] + gen_pack["new"] + [UNDATED] if g in public]
    assert view["part"] == "public" and view["metric"] == "accuracy"
    assert "unseen by a submission when it became public" in view["rule"]
    labels, old, new = gen_pack["labels"], set(gen_pack["old"]), set(gen_pack["new"])
    rows = {r["method_name"]: r for r in view["rows"]}
    for method, rule in scored["rules"].items():
        r = rows[method]
        seen, n_seen = _acc(labels, rule, old)
        unseen, n_unseen = _acc(labels, rule, new)
        assert r["seen"]["value"] == pytest.approx(seen) and r["seen"]["n"] == n_seen
        assert r["unseen"]["value"] == pytest.approx(unseen) and r["unseen"]["n"] == n_unseen
        assert r["gap"]["value"] == pytest.approx(seen - unseen)
        assert r["seen"]["ci_low"] <= r["seen"]["value"] <= r["seen"]["ci_high"]
        assert sorted(r["unseen_generators"]) == sorted(new & public)
        for c in r["cells"]:
            value, n = _acc(labels, rule, {c["generator"]})
            assert c["n"] == n and c["value"] == pytest.approx(value)
            assert c["unseen"] == (c["generator"] in new)
    assert rows["forgets-new"]["seen"]["value"] == 1.0
    # ranked by the unseen score: every-third (about 2/3 right) beats forgets-new
    by_unseen = client.get(API + "?rank_by=unseen").json
    assert [r["method_name"] for r in by_unseen["rows"]] == ["every-third", "forgets-new"]
    assert [r["unseen_rank"] for r in by_unseen["rows"]] == [1, 2]
    bad = client.get(API + "?rank_by=nope")
    assert bad.status_code == 400 and "rank_by" in bad.json["message"]


def test_csv_and_matrix_numbers_equal_the_api(client, scored):
    view = client.get(API).json
    by_sid = {r["submission_id"]: r for r in view["rows"]}
    got = list(csv.DictReader(io.StringIO(client.get(API + ".csv").get_data(as_text=True))))
    assert len(got) == sum(3 + len(r["cells"]) for r in view["rows"])
    for line in got:
        r = by_sid[int(line["submission_id"])]
        want = (r[line["what"]] if line["what"] != "cell" else
                next(c for c in r["cells"] if c["generator"] == line["generator"]))
        assert float(line["value"]) == pytest.approx(want["value"])
        assert line["n"] == ("" if want["n"] is None else str(want["n"]))
    page = client.get(PAGE)
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert "unseen by a submission when it became" in text
    titles = [html.unescape(t) for t in re.findall(r"<g><title>([^<]+)</title>", text)]
    assert len(titles) == sum(len(r["cells"]) for r in view["rows"])
    for r in view["rows"]:
        for c in r["cells"]:
            head = f"{r['team']['name']} · {r['method_name']} / {c['generator']}:"
            title = next(t for t in titles if t.startswith(head))
            assert format_value(c["value"], "pct") in title and f"n={c['n']}" in title
            assert format_value(c["ci_low"], "pct") in title
            assert ("unseen by this submission" in title) == c["unseen"]
    cells = re.findall(r'data-submission="(\d+)" data-generator="([^"]+)">.*?data-value="([^"]*)"',
                       text, re.S)
    assert len(cells) == len(titles)
    for sid, g, value in cells:
        c = next(c for c in by_sid[int(sid)]["cells"] if c["generator"] == html.unescape(g))
        assert float(value) == pytest.approx(c["value"])
    board = client.get("/benchmarks/uniaidet/boards/detection/test").get_data(as_text=True)
    assert 'id="generators-link"' in board
    shown = re.findall(r'data-gen="(seen|unseen)" data-value="([^"]*)"', board)
    want = [(w, r[w]["value"]) for r in view["rows"] for w in ("seen", "unseen")]
    assert len(shown) == len(want)
    for (w, got), (w2, value) in zip(shown, want):
        assert w == w2 and float(got) == pytest.approx(value)
    api_moved = client.get("/api/v1/boards/uniaidet/detection/test?rank_by=unseen")
    assert api_moved.status_code == 302
    assert api_moved.headers["Location"].endswith("/generators?mode=team&rank_by=unseen")
    moved = client.get("/benchmarks/uniaidet/boards/detection/test?rank_by=unseen")
    assert moved.status_code == 302 and "generators" in moved.headers["Location"]
    assert "rank_by=unseen" in moved.headers["Location"]


def test_cached_view_is_refreshed_after_scoring(client, auth, gen_pack, scored):
    assert len(client.get(API).json["rows"]) == 2
    auth.logout()
    token = auth.member(email="third@example.org", team="Team 3")
    _upload_to(client, token, _preds(gen_pack["labels"], lambda i, r: False), "perfect")
    rows = client.get(API + "?rank_by=unseen").json["rows"]
    assert rows[0]["method_name"] == "perfect" and rows[0]["unseen"]["value"] == 1.0


def test_paged_matrix_from_stored_rows(app, client, scored, monkeypatch):
    from leaderboard.server.boards import generator_rows
    from leaderboard.server.boards import generators as gen_view
    from leaderboard.server.boards.cache import invalidate_boards

    whole = client.get(API + "?rank_by=unseen").json
    assert whole["total"] == 2 and len(whole["rows"]) == 2
    # the scoring job stored every row: a cleared cache rebuilds the view without
    # bootstrapping any row again, and its numbers are the same
    for sid in scored["sids"].values():
        assert generator_rows.path_of(app.config["DATA_DIR"], sid).exists()
    with app.app_context():
        invalidate_boards("uniaidet")
    generator_rows._memo.clear()
    monkeypatch.setattr(gen_view, "row_numbers", lambda *a, **k: pytest.fail("recomputed"))
    assert client.get(API + "?rank_by=unseen").json == whole
    # pages follow the order over every row (rank by unseen), the CSV keeps every row
    pages = [client.get(API + f"?rank_by=unseen&per_page=1&page={p}").json for p in (1, 2)]
    assert [p["rows"] for p in pages] == [whole["rows"][:1], whole["rows"][1:]]
    assert pages[0]["pages"] == 2 and pages[0]["total"] == 2
    text = client.get(PAGE + "?rank_by=unseen&per_page=1&page=2").get_data(as_text=True)
    shown = {int(s) for s in re.findall(r'data-submission="(\d+)" data-generator=', text)}
    assert shown == {whole["rows"][1]["submission_id"]}
    assert "rows 2–2 of 2" in text and 'rel="prev"' in text
    lines = list(csv.DictReader(io.StringIO(client.get(API + ".csv").get_data(as_text=True))))
    assert {int(line["submission_id"]) for line in lines} == set(scored["sids"].values())
    assert client.get(PAGE + "?page=0").status_code == 400
    # a scoring worker with a shared cache warms the matrix page with the boards
    from leaderboard.server.jobs import board_warm

    with app.app_context(), app.extensions["lb_db"].scope() as s:
        paths = board_warm.pages_of(s, scored["sids"]["forgets-new"], "uniaidet")
    assert PAGE in paths
