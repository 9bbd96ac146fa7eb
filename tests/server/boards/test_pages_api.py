"""Public pages and the read API render from the standings service."""
import csv
import io
import xml.etree.ElementTree as ET

from leaderboard.server.services import curves

EVIL = '<img src=x onerror=alert(1)>'


def _seed(make, session):
    bench = make.benchmark(description="# Title\n\n<script>alert(1)</script> **bold**")
    alpha, evil = make.team("alpha"), make.team("=HYPERLINK(\"x\")" + EVIL)
    a = make.submission(bench, alpha, method_name="detector-a",
                        scores={"public": {"accuracy": (0.9, 0.85, 0.95), "fpr": 0.1},
                                "private": {"accuracy": 0.123456}, "all": {"accuracy": 0.5}})
    for gen in ("sdxl", "dalle3"):
        for dom in ("photo", "art"):
            make.score(a, part="public", task="detection", metric="f_acc", value=0.7,
                       slice_key=f"domain={dom};generator={gen}")
    for m, v in (("image", 0.8), ("video", 0.6)):
        make.score(a, part="public", task="detection", metric="accuracy", value=v,
                   ci_low=v - 0.05, ci_high=v + 0.05, slice_key=f"modality={m}")
    curves.store_curves(session, a, [
        {"part": "public", "task": "detection", "slice": {}, "kind": "roc",
         "x": [0, 0.1, 1], "y": [0, 0.7, 1]},
        {"part": "public", "task": "detection", "slice": {}, "kind": "pr",
         "x": [0, 0.5, 1], "y": [1, 0.8, 0.5]}])
    e = make.submission(bench, evil, method_name="-" + EVIL,
                        scores={"public": {"accuracy": None, "fpr": 0.2}})
    session.commit()
    return bench, a, e


def test_home_benchmark_board_modality_pages_render(boards_client, boards_session, make):
    _seed(make, boards_session)
    home = boards_client.get("/")
    assert home.status_code == 200 and b"DEMO bench" in home.data and b"/modalities/image" in home.data
    page = boards_client.get("/benchmarks/demo")
    assert page.status_code == 200
    assert b"<h2>Title</h2>" in page.data and page.data.count(b"<h1") == 1 and b"<strong>bold</strong>" in page.data
    assert b"<script>alert" not in page.data          # nh3 removed the pack's script
    assert EVIL.encode() not in page.data               # team names are escaped
    assert b"detector-a" in page.data and b"js/sort.js" in page.data
    video = boards_client.get("/benchmarks/demo?modality=video").get_data(as_text=True)
    assert "Detection &middot; test &middot; video" in video and "Judgment &middot;" not in video
    board = boards_client.get("/benchmarks/demo/boards/detection/test?modality=image")
    assert board.status_code == 200 and b"80.0%" in board.data and b"Ranking rule" in board.data
    assert b"12.3%" not in board.data                   # private part hidden before reveal
    assert boards_client.get("/benchmarks/demo/boards/detection/test?mode=all").status_code == 200
    assert boards_client.get("/modalities/image").status_code == 200
    assert boards_client.get("/benchmarks/demo/boards/detection/nope").status_code == 404
    assert boards_client.get("/modalities/smell").status_code == 404


def test_submission_page_plots_records_and_parts(boards_client, boards_session, make):
    _bench, a, _e = _seed(make, boards_session)
    resp = boards_client.get(f"/submissions/{a.id}")
    assert resp.status_code == 200
    html = resp.get_data(as_text=True)
    svgs = [html[i:html.index("</svg>", i) + 6] for i in range(len(html))
            if html.startswith("<svg", i)]
    kinds = {ET.fromstring(s).get("aria-label").split(": ")[-1].split(" by")[0] for s in svgs}
    assert {"ROC curve", "Precision-recall curve", "f.Acc", "Accuracy"} <= kinds
    assert "[85.0%, 95.0%]" in html and "12.3%" not in html
    rec = boards_client.get(f"/submissions/{a.id}/records.json")
    assert rec.status_code == 200 and "attachment" in rec.headers["Content-Disposition"]
    parts = {r["part"] for r in rec.get_json()["records"]}
    assert parts == {"public"}


def test_private_submission_is_not_found(boards_client, boards_session, make):
    bench = make.benchmark()
    s = make.submission(bench, make.team(), is_public=False,
                        scores={"public": {"accuracy": 0.5}})
    boards_session.commit()
    assert boards_client.get(f"/submissions/{s.id}").status_code == 404
    assert boards_client.get(f"/submissions/{s.id}/records.json").status_code == 404


def test_team_page(boards_client, boards_session, make):
    _bench, a, _e = _seed(make, boards_session)
    resp = boards_client.get(f"/teams/{a.team_id}")
    assert resp.status_code == 200 and b"detector-a" in resp.data
    assert boards_client.get("/teams/999999").status_code == 404


def test_api_board_pagination_and_errors(boards_client, boards_session, make):
    bench = make.benchmark()
    for i in range(7):
        make.submission(bench, make.team(), scores={"public": {"accuracy": i / 10}})
    boards_session.commit()
    body = boards_client.get("/api/v1/boards/demo/detection/test?per_page=3&page=3").get_json()
    assert (body["total"], body["pages"], body["page"], len(body["rows"])) == (7, 3, 3, 1)
    assert body["rows"][0]["rank"] == 7 and body["part"] == "public"
    bad = boards_client.get("/api/v1/boards/demo/detection/test?per_page=0")
    assert bad.status_code == 400 and set(bad.get_json()) >= {"error", "message"}
    missing = boards_client.get("/api/v1/boards/demo/nope/test")
    assert missing.status_code == 404 and "'nope'" in missing.get_json()["message"]
    assert boards_client.get("/api/v1/benchmarks").get_json()["benchmarks"][0]["key"] == "demo"
    one = boards_client.get("/api/v1/benchmarks/demo").get_json()
    assert {b["split"] for b in one["boards"]} == {"dev", "test"}
    assert boards_client.get("/api/v1/modalities/image").status_code == 200


def test_api_csv_is_formula_safe(boards_client, boards_session, make):
    _seed(make, boards_session)
    resp = boards_client.get("/api/v1/boards/demo/detection/test.csv")
    assert resp.status_code == 200 and resp.mimetype == "text/csv"
    rows = list(csv.reader(io.StringIO(resp.get_data(as_text=True))))
    assert rows[0][:3] == ["rank", "team", "method"]
    names = {r[1] for r in rows[1:]} | {r[2] for r in rows[1:]}
    assert "'=HYPERLINK(\"x\")" + EVIL in names and "'-" + EVIL in names
    # n/a ranks last and is an empty cell, never 0
    assert rows[-1][0] == "2" and rows[-1][7] == ""


def test_openapi_describes_every_api_route(boards_app, boards_client):
    doc = boards_client.get("/api/v1/openapi.json").get_json()
    assert doc["openapi"].startswith("3.1")
    from leaderboard.server.web.api.openapi import openapi_path
    for rule in boards_app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/"):
            continue
        path, _ = openapi_path(rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            op = doc["paths"][path][method.lower()]
            assert op["summary"] and op["responses"]
    assert "post" in doc["paths"]["/api/v1/submissions"]
    params = doc["paths"]["/api/v1/submissions/{submission_id}"]["get"]["parameters"]
    assert params[0]["schema"] == {"type": "integer"}


def test_board_page_pagination_links_keep_filters(boards_client, boards_session, make):
    bench = make.benchmark()
    for i in range(5):
        make.submission(bench, make.team(), scores={"public": {"accuracy": i / 10}})
    boards_session.commit()
    html = boards_client.get("/benchmarks/demo/boards/detection/test?per_page=2&page=2"
                             "&mode=all&junk=%3Cx%3E").get_data(as_text=True)
    assert "page 2 of 3" in html
    assert "mode=all" in html and "per_page=2" in html and "page=3" in html
    assert "junk" not in html


def test_submission_page_draws_curves_kept_in_scoring_notes(boards_client, boards_session,
                                                             make):
    bench = make.benchmark()
    sub = make.submission(bench, make.team(), scores={"public": {"accuracy": 0.5}})
    sub.notes_json = {"curves": [
        {"part": "public", "task": "detection", "slice": {}, "kind": "roc",
         "x": [0, 0.5, 1], "y": [0, 0.9, 1]},
        {"part": "private", "task": "detection", "slice": {}, "kind": "pr",
         "x": [0, 1], "y": [1, 0.5]},
        {"part": "public", "task": "detection", "slice": {}, "kind": "pr",
         "x": [0, 7], "y": [1, 0.5]}]}
    boards_session.commit()
    html = boards_client.get(f"/submissions/{sub.id}").get_data(as_text=True)
    assert "detection: ROC curve" in html
    assert "Precision-recall" not in html  # private part hidden; corrupt curve skipped
