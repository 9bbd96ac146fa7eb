"""Modality boards (issue 21 item 2, issue 25 item 2): the rule on a constructed case, the rows
kept in the scoring transaction equal a rebuild and an independent reference built from every
task board, and the page, JSON and CSV show n, CIs and the rule."""
from __future__ import annotations

import csv
import io
import random

from sqlalchemy import select

from leaderboard.server.boards import modality_ledger
from leaderboard.server.boards import service as boards
from leaderboard.server.models import Benchmark
from leaderboard.server.models.standings import ModalityStanding

FPR_TASKS = [{"key": "spot", "kind": "detection", "modalities": ["image"], "headline": "fpr",
              "title": "Spot", "secondary": []}]


def _three(make):
    """Three benchmarks: five image columns (two tasks each on "one" and "two"; "three"'s
    headline is FPR, lower is better)."""
    return (make.benchmark("one"), make.benchmark("two"),
            make.benchmark("three", tasks=FPR_TASKS))


def _enter(make, bench, team, task, value, *, slice_key=None):
    if slice_key is None:
        slice_key = "modality=image" if task == "detection" else ""
    metric = "fpr" if task == "spot" else "accuracy"
    v = 1 - value if metric == "fpr" else value  # ``value``: quality, 1 = best
    return make.submission(bench, team, task=task, slice_key=slice_key,
                           scores={"public": {metric: (v, max(0, v - .05), min(1, v + .05))},
                                   "private": {metric: v}})


COLUMNS = [("one", "detection"), ("one", "judgment"), ("three", "spot"), ("two", "detection"),
           ("two", "judgment")]


def test_a_team_with_many_random_entries_does_not_rank_first(boards_app, boards_session,
                                                                make):
    one, two, three = _three(make)
    by_key = {"one": one, "two": two, "three": three}
    strong, mid, spray, few = (make.team(n) for n in ("strong", "mid", "spray", "few"))
    rng = random.Random(5)
    for key, task in COLUMNS:
        _enter(make, by_key[key], strong, task, 0.9)
        _enter(make, by_key[key], mid, task, 0.6)
    for key, task in COLUMNS[:4]:  # five entries over four tasks, random quality
        _enter(make, by_key[key], spray, task, rng.random())
    _enter(make, two, spray, "judgment", 0.99)
    _enter(make, one, spray, "judgment", 0.2)  # a second entry there; the best represents it
    for key, task in COLUMNS[:2]:
        _enter(make, by_key[key], few, task, 0.99)
    make.submission(two, None, task="judgment", is_baseline=True, baseline_kind="random",
                    scores={"public": {"accuracy": 0.5}})
    boards_session.commit()
    with boards_app.app_context():
        mb = boards.modality_board(boards_session, "image")
    assert [c["key"] for c in mb["columns"]] == [f"{b}/{t}" for b, t in COLUMNS]
    got = [(r["team"]["name"], r["rank"], r["covered"]) for r in mb["rows"]]
    # spray has a result on all five tasks (its two judgment entries count once): ranked,
    # by its mean, not by how many entries it has
    spray_row = next(r for r in mb["rows"] if r["team"]["name"] == "spray")
    assert got[0] == ("strong", 1, 5) and got[-1] == ("few", None, 2)
    assert spray_row["rank"] in (2, 3) and spray_row["covered"] == 5
    strong_row = mb["rows"][0]
    assert abs(strong_row["mean_score"] - 0.9) < 1e-9  # FPR 0.1 normalises to 0.9
    cell = strong_row["cells"]["three/spot"]
    assert abs(cell["value"] - 0.1) < 1e-9 and cell["n"] == 100 and cell["ci_low"] is not None
    assert mb["ranked"] == 3 and mb["total"] == 4
    assert mb["baselines"][0]["kind"] == "random"
    assert "every task" in mb["rule"]


def test_ties_share_a_rank_and_pages_keep_it(boards_app, boards_session, make):
    one = make.benchmark("one", tasks=[{"key": "judgment", "kind": "yesno",
                                        "modalities": ["image"], "headline": "accuracy",
                                        "title": "Judgment", "secondary": []}])
    for i, v in enumerate([0.7, 0.9, 0.9, 0.9, 0.5]):
        _enter(make, one, make.team(f"t{i}"), "judgment", v)
    boards_session.commit()
    with boards_app.app_context():
        whole = boards.modality_board(boards_session, "image")
        pages = [boards.modality_board(boards_session, "image", page=p, per_page=2)
                 for p in (1, 2, 3)]
        exported = list(boards.modality_rows(boards_session, "image", chunk=2))
    assert [r["rank"] for r in whole["rows"]] == [1, 1, 1, 4, 5]
    assert [r["rank"] for p in pages for r in p["rows"]] == [1, 1, 1, 4, 5]
    assert [r["rank"] for r in exported] == [1, 1, 1, 4, 5]


def _reference(session, modality):
    """The rule applied to every column's board built from the score rows (no standings)."""
    cols = []
    for bench in session.scalars(select(Benchmark).order_by(Benchmark.key)):
        info = boards._info_of(bench)
        split = boards.board_split(info)
        for t in info["tasks"]:
            if modality in t["modalities"]:
                b = boards.compute_board_full(session, info, t, split, modality=modality,
                                              wanted={}, mode="team")
                spec = info["metrics"][t["headline"]]
                cols.append((f"{info['key']}/{t['key']}", t["headline"], spec, b["rows"]))
    table: dict = {}
    for key, metric, spec, rows in cols:
        for r in rows:
            if r["is_baseline"]:
                continue
            grp = (f"t:{r['team']['id']}" if r["team"]["id"] is not None
                   else f"s:{r['submission_id']}")
            v = r["values"][metric]["value"]
            table.setdefault(grp, {})[key] = (r["submission_id"], v,
                                              modality_ledger.normalise(v, spec))
    out = {}
    for grp, cells in table.items():
        scores = [n for _s, _v, n in cells.values() if n is not None]
        out[grp] = (len(scores), len(scores) == len(cols),
                    round(sum(scores) / len(scores), 12) if scores else None,
                    sorted((k, s, v) for k, (s, v, _n) in cells.items()))
    return out


def _stored(session):
    return {r.grp: (r.covered, r.ranked,
                    round(r.mean_score, 12) if r.mean_score is not None else None,
                    sorted((k, c[0], c[1]) for k, c in r.cells_json.items()))
            for r in session.scalars(select(ModalityStanding))}


def test_kept_rows_equal_a_rebuild_and_the_reference(boards_app, boards_session, make):
    s = boards_session
    rng = random.Random(21)
    one, two, three = _three(make)
    by_key = {"one": one, "two": two, "three": three}
    teams = [make.team() for _ in range(5)]
    subs = []

    def check():
        s.commit()
        kept = _stored(s)
        assert kept == _reference(s, "image")
        modality_ledger.rebuild_all(s)
        s.flush()
        assert _stored(s) == kept
        s.rollback()

    with boards_app.app_context():
        for i in range(16):
            key, task = COLUMNS[i % 5]
            team = teams[i % 5] if i % 7 else None
            subs.append(_enter(make, by_key[key], team, task, rng.random()))
        check()
        subs[3].hidden = True
        check()
        subs[4].team_id = teams[0].id
        check()
        subs[5].disqualified_reason = "copied"
        check()
        three.private_revealed = True
        check()
        four = make.benchmark("four", tasks=FPR_TASKS)  # a new column nobody has entered
        check()
        entry = _enter(make, four, teams[1], "spot", 0.5)
        check()
        s.delete(entry)
        s.flush()
        s.delete(four)  # its column leaves the board
        check()


def test_page_json_and_csv_show_n_ci_and_rule(boards_app, boards_client, boards_session, make):
    one, two, three = _three(make)
    team = make.team("alpha")
    for bench, task in ((one, "detection"), (one, "judgment"), (two, "detection"),
                        (two, "judgment"), (three, "spot")):
        _enter(make, bench, team, task, 0.8)
    _enter(make, one, make.team("beta=1+1"), "judgment", 0.7)
    boards_session.commit()
    html = boards_client.get("/modalities/image").get_data(as_text=True)
    assert "n=100" in html and "[75.0%, 85.0%]" in html.replace("\u2009", " ")
    assert 'class="crumbs' in html and "/api/v1/modalities/image.csv" in html
    assert "Ranking rule." in html and "every task" in html and "1/5" in html
    body = boards_client.get("/api/v1/modalities/image").get_json()
    assert body["rows"][0]["rank"] == 1 and body["rows"][1]["rank"] is None
    assert body["rows"][0]["cells"]["one/judgment"]["n"] == 100
    resp = boards_client.get("/api/v1/modalities/image.csv")
    assert resp.status_code == 200 and resp.mimetype == "text/csv"
    rows = list(csv.reader(io.StringIO(resp.get_data(as_text=True))))
    assert rows[0][:5] == ["rank", "team", "tasks_covered", "tasks", "mean_score"]
    assert rows[1][:4] == ["1", "alpha", "5", "5"] and rows[2][0] == ""
    assert boards_client.get("/api/v1/modalities/sound.csv").status_code == 404
