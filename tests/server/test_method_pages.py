"""Method pages (issue 38, item 1): a method's results equal its boards' rows, on the page and
in the JSON; private and hidden submissions never show to outsiders; only the team's members
edit, and what they write is sanitised. SQLite and PostgreSQL (the server fixtures; rows
from the boards tests' factory)."""
import re

from sqlalchemy import select

from leaderboard.server.boards import service as boards
from leaderboard.server.boards.methods import method_results
from leaderboard.server.models import Team
from leaderboard.server.models.methods import Method, slugify
import pytest

from tests.server.boards.conftest import Factory
from tests.server.conftest import AuthActions


@pytest.fixture
def make(session):
    return Factory(session)


def _people(app):
    """Two logged-in clients, each in its own team: (alpha client, beta client)."""
    out = []
    for who in ("alpha", "beta"):
        c = app.test_client()
        auth = AuthActions(c)
        auth.register(email=f"{who}@example.org", display_name=who)
        auth.login(email=f"{who}@example.org")
        assert auth.team(who).status_code == 302
        out.append(c)
    return out


def _case(app, session, make):
    """alpha's "Det A": test .60 then .80 (its best), a hidden .99 and a private .95, dev .70;
    beta's "B-1": test .70; a baseline .50. alpha's "Secret" has private submissions only."""
    alpha_c, beta_c = _people(app)
    a = session.scalar(select(Team).where(Team.name == "alpha"))
    b = session.scalar(select(Team).where(Team.name == "beta"))
    bench = make.benchmark()

    def sub(team, acc, name, **kw):
        return make.submission(bench, team, method_name=name,
                               scores={kw.pop("part", "public"): {"accuracy": (acc, .5, .9),
                                                                  "fpr": 0.1}}, **kw)

    s = {"a1": sub(a, .60, "Det A"), "a2": sub(a, .80, "Det A", paper_url="https://x.org/p"),
         "hid": sub(a, .99, "Det A", hidden=True), "priv": sub(a, .95, "Det A", is_public=False),
         "dev": sub(a, .70, "Det A", split="dev", part="all"), "b1": sub(b, .70, "B-1"),
         "base": sub(None, .50, "Baseline", is_baseline=True, baseline_kind="random"),
         "sec": sub(a, .90, "Secret", is_public=False)}
    session.commit()
    return alpha_c, beta_c, a.id, {k: v.id for k, v in s.items()}


def test_results_equal_the_boards_page_and_json(app, client, session, make):
    alpha_c, beta_c, team_id, ids = _case(app, session, make)
    methods = {m.name: m for m in session.scalars(select(Method))}
    assert set(methods) == {"Det A", "B-1", "Secret"}  # made with the submissions; no baseline
    assert methods["Det A"].slug == "det-a" and methods["Det A"].paper_url == ""
    with app.test_request_context():
        res = method_results(session, team_id=team_id, name="Det A", per_page=50)
    assert [(r["task"]["key"], r["split"], r["submission_id"], r["mode"], r["rank"])
            for r in res] == [("detection", "dev", ids["dev"], "team", 1),
                              ("detection", "test", ids["a2"], "team", 1)]
    for r in res:  # every number is the board's row
        with app.test_request_context():
            b = boards.board(session, benchmark_key="demo", task=r["task"]["key"],
                             split=r["split"], mode=r["mode"], page=1, per_page=50)
        row = next(x for x in b["rows"] if x["submission_id"] == r["submission_id"])
        assert (r["rank"], r["values"], r["rank_interval"], r["ranked"]) == (
            row["rank"], row["values"], row["rank_interval"], b["ranked"])
    test = res[1]
    assert test["values"]["accuracy"] == {"value": .80, "ci_low": .5, "ci_high": .9, "n": 100}
    assert [(h["submission_id"], h["step"]) for h in test["history"]] == [
        (ids["a1"], True), (ids["a2"], True)]  # hidden and private: not on the board
    # the JSON is the page's numbers, for anyone
    body = client.get(f"/api/v1/teams/{team_id}/methods/det-a").get_json()
    assert [(r["submission_id"], r["rank"], r["values"]) for r in body["results"]] == [
        (r["submission_id"], r["rank"], r["values"]) for r in res]
    html = client.get(f"/teams/{team_id}/methods/det-a").get_data(as_text=True)
    cells = re.findall(r'data-submission="(\d+)".*?class="rank" data-value="(\d*)".*?'
                       r'data-metric="accuracy" data-value="([0-9.]*)"', html, re.S)
    assert cells == [(str(r["submission_id"]), str(r["rank"]),
                      str(r["values"]["accuracy"]["value"])) for r in res]
    # outsiders never see the hidden or private submissions, nor the private-only method
    shown = {s["id"] for s in body["submissions"]}
    assert shown == {ids["a1"], ids["a2"], ids["dev"]}
    assert f"#{ids['priv']}<" not in html and f"#{ids['hid']}<" not in html
    assert client.get(f"/teams/{team_id}/methods/secret").status_code == 404
    assert beta_c.get(f"/api/v1/teams/{team_id}/methods/secret").status_code == 404
    listed = [m["name"] for m in client.get(
        f"/api/v1/teams/{team_id}/methods").get_json()["methods"]]
    assert listed == ["Det A"]
    # its team sees them all, marked
    mine = alpha_c.get(f"/api/v1/teams/{team_id}/methods/det-a").get_json()
    assert {s["id"] for s in mine["submissions"]} == shown | {ids["hid"], ids["priv"]}
    assert alpha_c.get(f"/teams/{team_id}/methods/secret").status_code == 200
    sub_html = client.get(f"/submissions/{ids['a2']}").get_data(as_text=True)
    assert 'id="method-link"' in sub_html and f"/teams/{team_id}/methods/det-a" in sub_html
    # the team page lists methods with their best results, not submissions
    team_html = client.get(f"/teams/{team_id}").get_data(as_text=True)
    assert 'data-method="det-a"' in team_html and "Secret" not in team_html
    assert "rank 1" in team_html and "80.0%" in team_html


def test_only_members_edit_and_text_is_sanitised(app, client, session,
                                                 make):
    alpha_c, beta_c, team_id, _ids = _case(app, session, make)
    url = f"/teams/{team_id}/methods/det-a/edit"
    api = f"/api/v1/teams/{team_id}/methods/det-a"
    assert client.get(url).status_code == 302  # anonymous: log in first
    assert client.post(url, data={"params": "1"}).status_code == 302
    assert client.patch(api, json={"params": "1"}).status_code == 401
    assert beta_c.get(url).status_code == 403
    assert beta_c.post(url, data={"params": "1"}).status_code == 403
    token = AuthActions(beta_c).token()
    assert beta_c.patch(api, json={"params": "1"},
                        headers={"Authorization": f"Bearer {token}"}).status_code == 403
    bad = alpha_c.post(url, data={"paper_url": "javascript:alert(1)", "description": "x"})
    assert bad.status_code == 400 and "http(s) link" in bad.get_data(as_text=True)
    ok = alpha_c.post(url, data={
        "description": "Fine **bold** <script>alert(1)</script><img src=x onerror=alert(2)>",
        "paper_url": "https://arxiv.org/abs/1", "code_url": "", "params": "86M <b>",
        "training_data": "FF++", "input_resolution": "224x224", "licence": "MIT",
        "affiliation": "Uni <i>X</i>"})
    assert ok.status_code == 303
    html = client.get(f"/teams/{team_id}/methods/det-a").get_data(as_text=True)
    assert "<strong>bold</strong>" in html and "<script>alert" not in html
    assert "onerror" not in html and "86M &lt;b&gt;" in html and "Uni &lt;i&gt;X&lt;/i&gt;" in html
    body = client.get(api).get_json()["method"]
    assert (body["params"], body["licence"], body["team"]["affiliation"]) == (
        "86M <b>", "MIT", "Uni <i>X</i>")
    token = AuthActions(alpha_c).token()
    # a method another team cannot see is not acknowledged to it, even to edit
    secret = f"/api/v1/teams/{team_id}/methods/secret"
    assert beta_c.post(f"/teams/{team_id}/methods/secret/edit",
                       data={"params": "1"}).status_code == 404
    assert beta_c.patch(secret, json={"params": "1"}, headers={
        "Authorization": f"Bearer {AuthActions(beta_c).token()}"}).status_code == 404
    r = alpha_c.patch(api, json={"licence": "Apache-2.0"},
                      headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200 and r.get_json()["licence"] == "Apache-2.0"


def test_new_submissions_find_or_make_their_method(session, make):
    bench = make.benchmark()
    team = make.team("t")
    for name in ("My Net", "my-net", "My Net", "Ünï"):
        make.submission(bench, team, method_name=name)
    session.commit()
    got = sorted((m.name, m.slug) for m in session.scalars(
        select(Method).where(Method.team_id == team.id)))
    assert got == [("My Net", "my-net"), ("my-net", "my-net-2"), ("Ünï", "uni")]
    assert slugify("!!!") == "method"
