"""Decay across releases (issue 37, 4b and 4c): lines, points, order, API = SVG = CSV, and a
submission's history across releases, on a case whose numbers are written out by hand."""
import csv
import io
import re
import xml.etree.ElementTree as ET
from datetime import timedelta

from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.boards.decay import decay_view
from leaderboard.server.models import Submission
from tests.server.boards.conftest import T0

SVG = "{http://www.w3.org/2000/svg}"


def _release(make, number):
    b = make.benchmark("demo" if number == 1 else f"demo-v{number}")
    b.family, b.release, b.released_at = "demo", number, T0 + timedelta(days=30 * number)
    make.session.flush()
    return b


def _case(make, session):
    """Three releases of "demo"; accuracy is the headline (higher better). Made in this order:

    v1: a1 A detA .80 [.75, .85] | b1 B detB .70 | b1x B detB .65 (same line, not its best)
        | c1 C detC .60 | r1 baseline random .50 | d1 D .99 hidden
    v2: a2 re-run of a1 .72 [.66, .78] | b2 re-run of b1 .68 | c2 C detC submitted anew .75
        | r2 re-run of r1 .49 | e2 E .95 disqualified
    v3: a3 re-run of a1 .60 | b3 re-run of b1 .90 hidden | c3 C detC .65

    Lines (latest release's board order, then the others by their latest release's order):
    C (v3 #1), A (v3 #2), B (v2, after C and A), baseline (v2, last)."""
    v = {n: _release(make, n) for n in (1, 2, 3)}
    a, b, c, d, e = (make.team(x) for x in ("alpha", "beta", "gamma", "delta", "eps"))
    minute = iter(range(1, 100))

    def sub(release, team, method, acc, **kw):
        return make.submission(v[release], team, method_name=method, minutes=next(minute),
                               scores={"public": {"accuracy": acc, "fpr": 0.1}}, **kw)

    s = {"a1": sub(1, a, "detA", (0.80, 0.75, 0.85)), "b1": sub(1, b, "detB", 0.70),
         "b1x": sub(1, b, "detB", 0.65), "c1": sub(1, c, "detC", 0.60),
         "r1": sub(1, None, "Baseline: random", 0.50, is_baseline=True, baseline_kind="random"),
         "d1": sub(1, d, "detD", 0.99, hidden=True)}
    s |= {"a2": sub(2, a, "detA", (0.72, 0.66, 0.78), rerun_of_id=s["a1"].id),
          "b2": sub(2, b, "detB", 0.68, rerun_of_id=s["b1"].id),
          "c2": sub(2, c, "detC", 0.75),
          "r2": sub(2, None, "Baseline: random", 0.49, is_baseline=True, baseline_kind="random",
                    rerun_of_id=s["r1"].id),
          "e2": sub(2, e, "detE", 0.95, disqualified_reason="broke the rules")}
    s |= {"a3": sub(3, a, "detA", 0.60, rerun_of_id=s["a1"].id),
          "b3": sub(3, b, "detB", 0.90, rerun_of_id=s["b1"].id, hidden=True),
          "c3": sub(3, c, "detC", 0.65)}
    session.commit()
    return {k: x.id for k, x in s.items()}


def _points(line):
    return [(p["release"], p["submission_id"], p["rerun_of_id"], p["value"], p["rank"], p["of"])
            for p in line["points"]]


def test_lines_points_and_order_by_hand(boards_app, boards_session, make):
    ids = _case(make, boards_session)
    with boards_app.app_context():
        for key in ("demo", "demo-v2", "demo-v3"):  # any release names the family
            view = decay_view(boards_session, benchmark_key=key, task="detection",
                              split="test")
            assert view["family"] == "demo" and view["metric"] == "accuracy"
        assert [(r["release"], r["key"], r["public_key"], r["released_at"][:10], r["part"])
                for r in view["releases"]] == [
            (1, "demo", "demo-v1", "2026-03-31", "public"),
            (2, "demo-v2", "demo-v2", "2026-04-30", "public"),
            (3, "demo-v3", "demo-v3", "2026-05-30", "public")]
        lines = view["lines"]
        assert [ln["label"] for ln in lines] == [
            "gamma · detC", "alpha · detA", "beta · detB",
            "Baseline (random) · Baseline: random"]
        gamma, alpha, beta, base = lines
        assert _points(gamma) == [(1, ids["c1"], None, 0.60, 4, 4), (2, ids["c2"], None, 0.75, 1, 3),
                                  (3, ids["c3"], None, 0.65, 1, 2)]
        assert _points(alpha) == [(1, ids["a1"], None, 0.80, 1, 4),
                                  (2, ids["a2"], ids["a1"], 0.72, 2, 3),
                                  (3, ids["a3"], ids["a1"], 0.60, 2, 2)]
        assert (alpha["points"][0]["ci_low"], alpha["points"][0]["ci_high"]) == (0.75, 0.85)
        assert (alpha["points"][1]["ci_low"], alpha["points"][1]["ci_high"]) == (0.66, 0.78)
        assert alpha["original_id"] == ids["a1"] and alpha["points"][0]["n"] == 100
        # b1x is on the line but not its best; b3 is hidden: no v3 point
        assert _points(beta) == [(1, ids["b1"], None, 0.70, 2, 4),
                                 (2, ids["b2"], ids["b1"], 0.68, 3, 3)]
        assert base["is_baseline"] and _points(base) == [
            (1, ids["r1"], None, 0.50, None, 4), (2, ids["r2"], ids["r1"], 0.49, None, 3)]
        drawn = {p["submission_id"] for ln in lines for p in ln["points"]}
        assert not drawn & {ids["d1"], ids["e2"], ids["b3"], ids["b1x"]}
        # cached across the family, cleared by any release's invalidation
        boards_session.get(Submission, ids["a3"]).hidden = True
        boards_session.commit()
        invalidate_boards("demo-v3")
        again = decay_view(boards_session, benchmark_key="demo", task="detection", split="test")
        assert [ln["label"] for ln in again["lines"]][:2] == ["gamma · detC", "alpha · detA"]
        assert [p["release"] for p in again["lines"][1]["points"]] == [1, 2]


def test_api_svg_csv_pages_and_submission_history(boards_client, boards_session, make):
    ids = _case(make, boards_session)
    body = boards_client.get("/api/v1/boards/demo-v2/detection/test/decay").get_json()
    api = [(ln["key"], p["release"], p["submission_id"], p["value"])
           for ln in body["lines"] for p in ln["points"]]
    assert len(api) == 3 + 3 + 2 + 2
    page = boards_client.get("/benchmarks/demo/boards/detection/test/decay")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    svg = ET.fromstring(re.search(r"<svg.*?</svg>", html, re.S).group(0))
    drawn = [(el.get("data-line"), int(el.get("data-release")), int(el.get("data-submission")),
              float(el.get("data-value")))
             for el in svg.iter() if el.get("class") == "point"]
    assert drawn == api
    assert [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "release"] == [
        "v1", "v2", "v3"]
    rows = list(csv.DictReader(io.StringIO(boards_client.get(
        "/api/v1/boards/demo/detection/test/decay.csv").get_data(as_text=True))))
    assert [(int(r["release"]), int(r["submission_id"]), float(r["accuracy"])) for r in rows] \
        == [x[1:] for x in api]
    assert rows[4]["rerun_of_id"] == str(ids["a1"]) and rows[4]["ci_low"] == "0.66"
    # the benchmark page shows the plot (the family has three releases)
    bench = boards_client.get("/benchmarks/demo").get_data(as_text=True)
    assert 'id="decay"' in bench and 'class="decay-plot"' in bench
    # bad arguments: 404, not 500
    assert boards_client.get("/api/v1/boards/nope/detection/test/decay").status_code == 404
    assert boards_client.get("/api/v1/boards/demo/nope/test/decay").status_code == 404
    assert boards_client.get("/api/v1/boards/demo/detection/nope/decay").status_code == 404
    assert boards_client.get("/benchmarks/demo/boards/detection/nope/decay").status_code == 404
    # a submission's history across releases: the original and its re-runs
    hist = boards_client.get(f"/api/v1/submissions/{ids['a2']}/releases").get_json()
    det = next(t for t in hist["tasks"] if t["task"] == "detection")
    assert [(p["release"], p["submission_id"], p["value"], p["rank"], p["of"])
            for p in det["points"]] == [(1, ids["a1"], 0.80, 1, 4), (2, ids["a2"], 0.72, 2, 3),
                                        (3, ids["a3"], 0.60, 2, 2)]
    assert (det["points"][1]["ci_low"], det["points"][1]["ci_high"]) == (0.66, 0.78)
    sub = boards_client.get(f"/submissions/{ids['a2']}").get_data(as_text=True)
    table = re.search(r'<table class="board stack release-history" data-task="detection">'
                      r".*?</table>", sub, re.S).group(0)
    shown = [(int(r), int(s)) for r, s in re.findall(
        r'<tr data-release="(\d+)" data-submission="(\d+)"', table)]
    assert shown == [(1, ids["a1"]), (2, ids["a2"]), (3, ids["a3"])]
    assert "72.0%" in table and "[66.0%, 78.0%]" in table and "#2 of 3" in table
    # a hidden re-run is nobody's point; a private submission's history is not served
    assert [p["submission_id"] for p in boards_client.get(
        f"/api/v1/submissions/{ids['b1']}/releases").get_json()["tasks"][0]["points"]] == [
        ids["b1"], ids["b2"]]
    assert boards_client.get(f"/api/v1/submissions/{ids['d1']}/releases").status_code == 404
