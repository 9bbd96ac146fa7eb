"""Modality boards (issue 21 item 2, issue 25 item 2, issue 33 item 1): one board per
modality x task kind x split; per-task normalisation (chance 0, perfect 1), coverage, ranks and
baselines on a case computed by hand; the rows kept in the scoring transaction equal a rebuild
(PostgreSQL: the SQL rebuild) and an independent reference built from every task board; the
index, page, JSON and CSV show the same numbers."""
from __future__ import annotations

import csv
import io
import random

import pytest
from sqlalchemy import select

from leaderboard.server.boards import modality_ledger
from leaderboard.server.boards import service as boards
from leaderboard.server.boards.normalise import chance_level, normalise
from leaderboard.server.models.standings import ModalityStanding
from leaderboard.server.services import releases

from .conftest import METRICS

SPECS = {**METRICS,
         "tpr_at_fpr_5": {"title": "TPR(5)", "higher_is_better": True, "fmt": "pct",
                          "lower": 0.0, "upper": 1.0},
         "score": {"title": "Score", "higher_is_better": True, "fmt": "num", "lower": 0.0,
                   "upper": 100.0}}
ONE = [{"key": "detection", "kind": "detection", "modalities": ["image"],
        "headline": "accuracy", "title": "Detection", "secondary": []},
       {"key": "judgment", "kind": "yesno", "modalities": ["image"], "headline": "accuracy",
        "title": "Judgment", "secondary": []}]
TWO = [{"key": "det5", "kind": "detection", "modalities": ["image"],
        "headline": "tpr_at_fpr_5", "title": "TPR at 5%", "secondary": []},
       {"key": "mc", "kind": "choice", "modalities": ["image"], "headline": "accuracy",
        "title": "Choice", "secondary": [], "options": 4},
       {"key": "why", "kind": "explanation", "modalities": ["image"], "headline": "score",
        "title": "Why", "secondary": []}]


def _entry(make, bench, team, task, value, *, split="test", **kw):
    metric = {"det5": "tpr_at_fpr_5", "why": "score"}.get(task, "accuracy")
    scores = ({"public": {metric: (value, value - .05, value + .05)}, "private": {metric: value}}
              if split == "test" else {"all": {metric: (value, value - .05, value + .05)}})
    return make.submission(bench, team, split=split, task=task, scores=scores, **kw)


def test_chance_levels_and_normalisation():
    """The chance level of each headline the five benchmarks rank, and the mapping."""
    det = {"kind": "detection"}
    assert chance_level("vct2", det, "mean_accuracy", {})[0] == 0.5
    assert chance_level("syncred", det, "tpr_at_fpr_5", {})[0] == pytest.approx(0.05)
    assert chance_level("loki", {"kind": "yesno"}, "accuracy", {})[0] == 0.5
    assert chance_level("loki", {"kind": "choice", "key": "abnormal_selection"}, "accuracy",
                        {})[0] == 0.25
    assert chance_level("loki", {"kind": "choice", "key": "multiple_choice"}, "accuracy",
                        {})[0] == 0.5
    assert chance_level("tridf", {"kind": "multiselect"}, "mcq_score", {})[0] == 0.0
    assert chance_level("tridf", {"kind": "artifacts"}, "f05", {"lower": 0.0})[0] == 0.0
    col = {"chance": 0.5, "perfect": 1.0}
    assert normalise(0.5, col) == 0.0 and normalise(1.0, col) == 1.0
    assert normalise(0.75, col) == 0.5 and normalise(0.4, col) == pytest.approx(-0.2)
    assert normalise(0.1, {"chance": 0.5, "perfect": 0.0}) == pytest.approx(0.8)  # FPR
    assert normalise(None, col) is None and normalise(float("nan"), col) is None
    assert normalise(-0.25, {"by_magnitude": True, "lower": -1.0, "upper": 1.0}) == 0.75


def _rows(mb):
    return [(r["team"]["name"], r["rank"], r["covered"], r["of"],
             None if r["mean_score"] is None else round(r["mean_score"], 9), r["is_baseline"])
            for r in mb["rows"]]


def test_a_constructed_case_by_hand(boards_app, boards_client, boards_session, make):
    one = make.benchmark("one", tasks=ONE, metrics=SPECS)
    two = make.benchmark("two", tasks=TWO, metrics=SPECS)
    alpha, beta, gamma, delta = (make.team(n) for n in ("alpha", "beta", "gamma", "delta"))
    # detection, test: alpha (0.9 - .5)/.5 = 0.8 and (0.62 - .05)/.95 = 0.6 -> 0.7
    _entry(make, one, alpha, "detection", 0.9)
    _entry(make, two, alpha, "det5", 0.62)
    # beta: 0.5 and 0.2 -> 0.35; a worse second entry does not represent it
    _entry(make, one, beta, "detection", 0.75)
    _entry(make, one, beta, "detection", 0.6)
    _entry(make, two, beta, "det5", 0.24)
    # gamma: one task of two (0.9): listed below the ranked teams, unranked
    _entry(make, one, gamma, "detection", 0.95)
    # delta: dev results only -> only on the dev board: 0.6 and 0.4 -> 0.5
    _entry(make, one, delta, "detection", 0.8, split="dev")
    _entry(make, two, delta, "det5", 0.43, split="dev")
    # baselines: random at chance on both (0.0); all-fake on one task (0.1)
    for bench, task, v in ((one, "detection", 0.5), (two, "det5", 0.05)):
        _entry(make, bench, None, task, v, is_baseline=True, baseline_kind="random")
    _entry(make, one, None, "detection", 0.55, is_baseline=True, baseline_kind="all-fake")
    # question answering: alpha (0.7 - .5)/.5 = 0.4, (0.55 - .25)/.75 = 0.4 -> 0.4;
    # beta below chance: -0.2 and 0.0 -> -0.1 (not floored)
    _entry(make, one, alpha, "judgment", 0.7)
    _entry(make, two, alpha, "mc", 0.55)
    _entry(make, one, beta, "judgment", 0.4)
    _entry(make, two, beta, "mc", 0.25)
    # explanation: no closed-form chance: the worst value 0 -> 62/100
    _entry(make, two, alpha, "why", 62.0)
    boards_session.commit()
    with boards_app.app_context():
        det = boards.modality_board(boards_session, "image", "detection")
        dev = boards.modality_board(boards_session, "image", "detection", split="dev")
        qa = boards.modality_board(boards_session, "image", "qa")
        why = boards.modality_board(boards_session, "image", "explanation", split="test")
        index = boards.modality_index(boards_session)
        paged = [boards.modality_board(boards_session, "image", "detection", page=p,
                                       per_page=1) for p in (1, 2, 3)]
    assert det["split"] == "test" and det["splits"] == ["test", "dev"]
    assert [(c["key"], c["chance"]) for c in det["columns"]] == [("one/detection", 0.5),
                                                                 ("two/det5", 0.05)]
    assert _rows(det) == [("alpha", 1, 2, 2, 0.7, False), ("beta", 2, 2, 2, 0.35, False),
                          ("Baseline: random", None, 2, 2, 0.0, True),
                          ("gamma", None, 1, 2, 0.9, False),
                          ("Baseline: all-fake", None, 1, 2, 0.1, True)]
    assert det["total"] == 3 and det["ranked"] == 2
    assert det["rows"][0]["n"] == 200 and det["rows"][0]["cells"]["two/det5"]["value"] == 0.62
    assert _rows(dev) == [("delta", 1, 2, 2, 0.5, False)]
    assert _rows(qa) == [("alpha", 1, 2, 2, 0.4, False), ("beta", 2, 2, 2, -0.1, False)]
    assert [c["chance"] for c in qa["columns"]] == [0.5, 0.25]
    assert _rows(why) == [("alpha", 1, 1, 1, 0.62, False)]
    # pages hold team rows; a baseline comes with the team row below it, never ranked
    assert [[(r["team"]["name"], r["rank"]) for r in p["rows"]] for p in paged] == [
        [("alpha", 1)], [("beta", 2)],
        [("Baseline: random", None), ("gamma", None), ("Baseline: all-fake", None)]]
    image = next(m for m in index if m["modality"] == "image")
    assert [k["kind"] for k in image["boards"]] == ["detection", "qa", "explanation"]
    splits = {s["split"]: s for s in image["boards"][0]["splits"]}
    assert splits["test"]["leader"]["team"] == "alpha" and splits["test"]["ranked"] == 2
    assert splits["dev"]["leader"]["team"] == "delta"
    assert abs(splits["test"]["leader"]["mean_score"] - 0.7) < 1e-9

    # the web page, JSON and CSV show the same rows; the index and home page the same leader
    html = boards_client.get("/modalities/image/detection?split=dev").get_data(as_text=True)
    assert "delta" in html and "0.500" in html and "alpha" not in html
    html = boards_client.get("/modalities/image/detection").get_data(as_text=True)
    assert "2 of 3 teams have a result on all 2 tasks" in html
    assert "1 of 2" in html and "chance 50.0%" in html and "chance 5.0%" in html
    assert 'href="/modalities"' in html and "Ranking rule." in html
    for page in ("/modalities", "/", "/modalities/image"):
        text = boards_client.get(page).get_data(as_text=True)
        assert "alpha" in text and "0.700" in text and "delta" in text, page
    body = boards_client.get("/api/v1/modalities/image/qa").get_json()
    assert [r["mean_score"] for r in body["rows"]] == pytest.approx([0.4, -0.1])
    resp = boards_client.get("/api/v1/modalities/image/detection.csv?split=test")
    rows = list(csv.DictReader(io.StringIO(resp.get_data(as_text=True))))
    assert [(r["rank"], r["team"], r["baseline"], r["tasks_covered"]) for r in rows] == [
        ("1", "alpha", "", "2"), ("2", "beta", "", "2"), ("", "Baseline: random", "random", "2"),
        ("", "gamma", "", "1"), ("", "Baseline: all-fake", "all-fake", "1")]
    assert float(rows[0]["mean_score"]) == pytest.approx(0.7)
    assert float(rows[0]["two/det5_normalised"]) == pytest.approx(0.6)
    listing = boards_client.get("/api/v1/modalities").get_json()["modalities"]
    assert listing[0]["boards"][0]["url"] == "/api/v1/modalities/image/detection"
    assert boards_client.get("/modalities/image/smell").status_code == 404
    assert boards_client.get("/api/v1/modalities/image/qa?split=nope").status_code == 400


def test_ties_share_a_rank_and_pages_keep_it(boards_app, boards_session, make):
    one = make.benchmark("one", tasks=ONE[:1], metrics=SPECS)
    for i, v in enumerate([0.7, 0.9, 0.9, 0.9, 0.5]):
        _entry(make, one, make.team(f"t{i}"), "detection", v)
    boards_session.commit()
    with boards_app.app_context():
        whole = boards.modality_board(boards_session, "image", "detection")
        pages = [boards.modality_board(boards_session, "image", "detection", page=p,
                                       per_page=2) for p in (1, 2, 3)]
        exported = list(boards.modality_rows(boards_session, "image", "detection", "test",
                                             chunk=2))
    assert [r["rank"] for r in whole["rows"]] == [1, 1, 1, 4, 5]
    assert [r["rank"] for p in pages for r in p["rows"]] == [1, 1, 1, 4, 5]
    assert [r["rank"] for r in exported] == [1, 1, 1, 4, 5]


def _reference(session, key):
    """The rule applied to every column's board built from the score rows (no standings)."""
    modality, kind, split = key
    cols = []
    # the latest release of each benchmark only (issue 37)
    for bench in sorted(releases.latest_releases(session), key=lambda b: b.key):
        info = boards._info_of(bench)
        if split not in info["splits"]:
            continue
        for t in info["tasks"]:
            if modality in t["modalities"] and modality_ledger.board_kind(t) == kind:
                b = boards.compute_board_full(session, info, t, split, modality=modality,
                                              wanted={}, mode="team")
                spec = info["metrics"][t["headline"]]
                chance, _ = chance_level(info["family"], t, t["headline"], spec)
                col = {"chance": chance, "perfect": modality_ledger.perfect_value(spec)}
                cols.append((f"{info['key']}/{t['key']}", t["headline"], col, b["rows"]))
    table: dict = {}
    for ckey, metric, col, rows in cols:
        for r in rows:
            if r["is_baseline"]:
                continue
            grp = (f"t:{r['team']['id']}" if r["team"]["id"] is not None
                   else f"s:{r['submission_id']}")
            v = r["values"][metric]["value"]
            table.setdefault(grp, {})[ckey] = (r["submission_id"], v, normalise(v, col))
    out = {}
    for grp, cells in table.items():
        scores = [n for _s, _v, n in cells.values() if n is not None]
        out[grp] = (len(scores), len(scores) == len(cols),
                    round(sum(scores) / len(scores), 12) if scores else None,
                    sorted((k, s, v) for k, (s, v, _n) in cells.items()))
    return out


def _stored(session, key):
    mb = next(b for b in session.scalars(select(modality_ledger.ModalityBoard))
              if (b.modality, b.kind, b.split) == key)
    return {r.grp: (r.covered, r.ranked,
                    round(r.mean_score, 12) if r.mean_score is not None else None,
                    sorted((k, c[0], c[1]) for k, c in r.cells_json.items()))
            for r in session.scalars(select(ModalityStanding).where(
                ModalityStanding.board_id == mb.id, ModalityStanding.is_baseline.is_(False)))}


KEYS = [("image", "detection", "test"), ("image", "detection", "dev"), ("image", "qa", "test")]


def test_kept_rows_equal_a_rebuild_and_the_reference(boards_app, boards_session, make):
    s = boards_session
    rng = random.Random(21)
    one = make.benchmark("one", tasks=ONE, metrics=SPECS)
    two = make.benchmark("two", tasks=TWO, metrics=SPECS)
    columns = [(one, "detection"), (one, "judgment"), (two, "det5"), (two, "mc")]
    teams = [make.team() for _ in range(5)]
    subs = []

    def check():
        s.commit()
        kept = {k: _stored(s, k) for k in KEYS}
        assert kept == {k: _reference(s, k) for k in KEYS}
        modality_ledger.rebuild_all(s)  # PostgreSQL: the SQL rebuild
        s.flush()
        assert {k: _stored(s, k) for k in KEYS} == kept
        s.rollback()

    with boards_app.app_context():
        for i in range(20):
            bench, task = columns[i % 4]
            team = teams[i % 5] if i % 7 else None
            subs.append(_entry(make, bench, team, task, rng.random(),
                               split="dev" if i % 3 == 0 else "test"))
        check()
        subs[4].hidden = True
        check()
        subs[5].team_id = teams[0].id
        check()
        subs[7].disqualified_reason = "copied"
        check()
        two.private_revealed = True
        check()
        three = make.benchmark("three", tasks=ONE[:1], metrics=SPECS)  # a new, empty column
        check()
        entry = _entry(make, three, teams[1], "detection", 0.75)
        check()
        s.delete(entry)
        s.flush()
        s.delete(three)  # its column leaves the boards
        check()


def test_mean_interval_and_rank_intervals_from_the_items(boards_app, boards_session, make):
    """The mean's 95% interval resamples each task's stored per-item outcomes: a team right on
    every item has [1, 1]; a team right on 60% of each task's items has an interval around its
    mean (0.2) of about +-2 x sqrt(.24 / 100) / .5 / sqrt(2) = +-0.14; the first is significantly
    better in every resample, so its rank interval is exactly 1. A row with a cell without
    outcomes shows its mean without an interval."""
    import numpy as np

    from leaderboard.core.outcomes import Outcome
    from leaderboard.server.services import outcome_store

    one = make.benchmark("one", tasks=ONE[:1], metrics=SPECS)
    three = make.benchmark("three", tasks=ONE[:1], metrics=SPECS)
    directory = boards_app.config["DATA_DIR"]
    n = 100  # items per task, as the factory's score rows say

    def enter(team, right, *, kind=None, outcomes=True):
        for bench in (one, three):
            x = (np.arange(n) < right).astype(np.float32)
            sub = _entry(make, bench, team, "detection", float(x.mean()),
                         is_baseline=kind is not None, baseline_kind=kind)
            if outcomes:
                o = Outcome(task="detection", metric="accuracy", model="mean", x=x,
                            strata=np.zeros(n), modality=np.zeros(n), modalities=("image",))
                outcome_store.write(directory, sub.id, {"public": {"detection": o}})

    enter(make.team("strong"), n)
    enter(make.team("weak"), 60)
    enter(make.team("blind"), 80, outcomes=False)
    enter(None, 50, kind="random")
    boards_session.commit()
    with boards_app.app_context():
        rows = {r["team"]["name"]: r for r in
                boards.modality_board(boards_session, "image", "detection")["rows"]}
    strong, weak = rows["strong"], rows["weak"]
    assert strong["mean_ci"] == [1.0, 1.0] and strong["n"] == 2 * n
    assert weak["mean_score"] == pytest.approx(0.2)
    lo, hi = weak["mean_ci"]
    assert 0.0 < lo < 0.2 < hi < 0.4 and hi - lo > 0.15
    assert (strong["rank_interval"]["lo"], strong["rank_interval"]["hi"]) == (1, 1)
    # "blind" (rank 2, no outcomes) is not resampled: weak's interval cannot rule out rank 2
    assert (weak["rank"], weak["rank_interval"]["lo"], weak["rank_interval"]["hi"]) == (3, 2, 3)
    assert rows["blind"]["mean_ci"] is None and rows["blind"]["rank"] == 2
    base = rows["Baseline: random"]
    assert base["mean_score"] == pytest.approx(0.0) and base["mean_ci"][0] < 0 < base["mean_ci"][1]
