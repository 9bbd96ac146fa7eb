"""A board's history (issue 38, item 2): steps, team series, ranks then/now, API = SVG."""
import csv
import io
import re
import xml.etree.ElementTree as ET

from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.boards.history import board_history, submission_ranks
from leaderboard.server.models import Submission

SVG = "{http://www.w3.org/2000/svg}"


def _case(make, session):
    """Made in this order (minutes); accuracy is the headline (higher better), fpr breaks ties.

    s1 A .60 | s2 B .55 | s3 C .70 | s4 A .70 (tie with s3 on both: the earlier s3 stays ahead)
    | s5 B .80 hidden | s6 B .90 disqualified | s7 baseline .95 | s8 B .75 | s9 C .99 private.
    Today's board (competing): s8, s3, s4, s1, s2."""
    bench = make.benchmark()
    a, b, c = make.team("alpha"), make.team("beta"), make.team("gamma")

    def sub(team, acc, minutes, **kw):
        return make.submission(bench, team, minutes=minutes,
                               scores={"public": {"accuracy": acc, "fpr": 0.1}}, **kw)

    s = {1: sub(a, 0.60, 1), 2: sub(b, 0.55, 2), 3: sub(c, 0.70, 3), 4: sub(a, 0.70, 4),
         5: sub(b, 0.80, 5, hidden=True), 6: sub(b, 0.90, 6, disqualified_reason="cheated"),
         7: sub(None, 0.95, 7, is_baseline=True, baseline_kind="random"),
         8: sub(b, 0.75, 8), 9: sub(c, 0.99, 9, is_public=False)}
    session.commit()
    return {k: v.id for k, v in s.items()}


def test_steps_teams_and_ranks_follow_the_submissions_order(boards_app, boards_session, make):
    ids = _case(make, boards_session)
    with boards_app.app_context():
        h = board_history(boards_session, benchmark_key="demo", task="detection", split="test")
        assert h["part"] == "public" and h["primary"] == "accuracy"
        assert [(x["submission_id"], x["value"]) for x in h["best"]] == [
            (ids[1], 0.60), (ids[3], 0.70), (ids[8], 0.75)]
        assert [(t["team"]["name"], [(x["submission_id"], x["value"]) for x in t["steps"]])
                for t in h["teams"]] == [
            ("beta", [(ids[2], 0.55), (ids[8], 0.75)]), ("gamma", [(ids[3], 0.70)]),
            ("alpha", [(ids[1], 0.60), (ids[4], 0.70)])]
        shown = {str(ids[k]) for k in (1, 2, 3, 4, 8)}
        assert set(h["ranks"]) == shown  # hidden, disqualified, baseline, private: never
        expect = {1: (1, 1, 4), 2: (2, 2, 5), 3: (1, 3, 2), 4: (2, 4, 3), 8: (1, 5, 1)}
        for k, (then, of_then, now) in expect.items():
            r = submission_ranks(boards_session, benchmark_key="demo", task="detection",
                                 split="test", submission_id=ids[k])
            assert r == {"then": then, "of_then": of_then, "now": now, "of_now": 5}, k
        assert submission_ranks(boards_session, benchmark_key="demo", task="detection",
                                split="test", submission_id=ids[6]) is None
        # cached with the board, and cleared with it
        boards_session.get(Submission, ids[8]).hidden = True
        boards_session.commit()
        invalidate_boards("demo")
        h2 = board_history(boards_session, benchmark_key="demo", task="detection",
                           split="test")
        assert [x["submission_id"] for x in h2["best"]] == [ids[1], ids[3]]
        for k, want in ((8, None), (3, {"then": 1, "of_then": 3, "now": 1, "of_now": 4})):
            assert submission_ranks(boards_session, benchmark_key="demo", task="detection",
                                    split="test", submission_id=ids[k]) == want


def test_api_equals_svg_points_and_csv(boards_client, boards_session, make):
    ids = _case(make, boards_session)
    body = boards_client.get("/api/v1/boards/demo/detection/test/history").get_json()
    assert "ranks" not in body
    api = [("best", x["submission_id"], x["at"], x["value"]) for x in body["best"]]
    api += [("team", x["submission_id"], x["at"], x["value"])
            for t in body["teams"] for x in t["steps"]]
    page = boards_client.get("/benchmarks/demo/boards/detection/test/history")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    svg = ET.fromstring(re.search(r"<svg.*?</svg>", html, re.S).group(0))
    drawn = [(c.get("data-series"), int(c.get("data-submission")), c.get("data-at"),
              float(c.get("data-value"))) for c in svg.iter(f"{SVG}circle")]
    assert drawn == api and len(api) == 3 + 5
    rows = list(csv.DictReader(io.StringIO(boards_client.get(
        "/api/v1/boards/demo/detection/test/history.csv").get_data(as_text=True))))
    assert [(r["series"], int(r["submission_id"]), r["at"], float(r["accuracy"]))
            for r in rows] == api
    # the board links to it; bad arguments are errors, not 500s
    board = boards_client.get("/benchmarks/demo/boards/detection/test").get_data(as_text=True)
    assert 'id="history-link"' in board and "/history" in board
    assert boards_client.get("/api/v1/boards/demo/nope/test/history").status_code == 404
    assert boards_client.get("/benchmarks/demo/boards/detection/nope/history").status_code == 404
    empty = boards_client.get("/api/v1/boards/demo/detection/test/history?modality=image")
    assert empty.status_code == 200 and empty.get_json()["best"] == []
    assert "No ranked submission" in boards_client.get(
        "/benchmarks/demo/boards/detection/test/history?modality=image").get_data(as_text=True)
    assert boards_client.get(
        "/api/v1/boards/demo/detection/test/history?modality=audio").status_code == 400
    # a submission's page: its rank when made and now
    sub = boards_client.get(f"/submissions/{ids[4]}").get_data(as_text=True)
    assert re.search(r'id="history-ranks".*?#2 → #3.*?of 4\).*?of 5\)', sub, re.S)
