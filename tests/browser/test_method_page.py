"""A method's page in Chromium (issue 38, item 1), at 1280 and 390 px: reached from its team's
page, every result's rank, value, CI and n equal the row its board link opens; no sideways
scroll, and no WCAG A/AA violation that axe-core finds. The edit form at both widths too."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.server.boards.conftest import Factory

from .conftest import assert_accessible, assert_no_sideways_scroll

pytestmark = pytest.mark.browser

WIDTHS = (1280, 390)
PASSWORD = "correct horse battery"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_method_page_equals_its_boards(live, page, screenshots):
    from sqlalchemy import select

    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.models import Team, User
    from leaderboard.server.services import accounts

    with live.app.app_context():
        db = live.app.extensions["lb_db"]
        with db.scope() as s:
            make = Factory(s)
            bench = make.benchmark("methdemo")
            ada, bea = make.team("Ada Labs"), make.team("Bea Lab")
            ada.affiliation = "University of Examples, a long affiliation name to wrap"
            user = accounts.register(s, email="ada@example.org", display_name="ada",
                                     password=PASSWORD)
            user.team_id = ada.id
            name = "Ada's detector with a rather long method name"
            for i, (team, acc, split) in enumerate(((ada, 0.61, "test"), (bea, 0.7, "test"),
                                                    (ada, 0.74, "test"), (bea, 0.5, "dev"),
                                                    (ada, 0.66, "dev"))):
                make.submission(bench, team, minutes=i * 60, split=split,
                                method_name=name if team is ada else "Bea net",
                                code_url="https://example.org/code" if team is ada else "",
                                scores={"public" if split == "test" else "all": {
                                    "accuracy": (acc, acc - 0.04, acc + 0.04), "fpr": 0.1}})
            team_id = ada.id
        invalidate_boards("methdemo")
    base = live.url
    page.goto(f"{base}/teams/{team_id}")
    page.locator("#team-methods a", has_text="Ada's detector").first.click()
    expect(page.locator("h1")).to_contain_text("Ada's detector")
    rows = page.locator("#method-results tbody tr")
    assert rows.count() == 2  # detection on dev and on test
    shown = []
    for i in range(rows.count()):
        r = rows.nth(i)
        shown.append({"sid": r.get_attribute("data-submission"),
                      "rank": r.locator("td.rank").get_attribute("data-value"),
                      "value": r.locator("td.value").get_attribute("data-value"),
                      "cell": _norm(r.locator("td.value").inner_text()),
                      "board": r.locator("a.board-link").get_attribute("href")})
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(screenshots / f"method-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, f"method page at {width}px")
        assert_accessible(page, f"method page at {width}px")
    api = page.request.get(f"{base}/api/v1/teams/{team_id}/methods/"
                           + page.url.rsplit("/", 1)[1]).json()
    assert [(str(r["submission_id"]), str(r["rank"]), repr(r["values"]["accuracy"]["value"]))
            for r in api["results"]] == [(x["sid"], x["rank"], x["value"]) for x in shown]
    for x in shown:  # the board the link opens has the same numbers in that row
        page.goto(base + x["board"])
        row = page.locator(f"table.board tbody tr:has(a[href$='/submissions/{x['sid']}'])")
        expect(row).to_have_count(1)
        assert row.locator("td[data-label='Rank']").get_attribute("data-value") == x["rank"]
        cell = row.locator("td.num").first
        assert cell.get_attribute("data-value") == x["value"]
        assert _norm(cell.inner_text()) in x["cell"]  # value [CI] n=..
    # the team page, and the edit form for the team's member
    page.goto(f"{base}/teams/{team_id}")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(screenshots / f"team-methods-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, f"team page at {width}px")
    page.goto(f"{base}/login")
    page.fill("input[name=email]", "ada@example.org")
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")
    page.goto(f"{base}/teams/{team_id}")
    page.locator("#team-methods a", has_text="Ada's detector").first.click()
    page.locator("#method-edit").click()
    page.fill("#f-licence", "MIT")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(screenshots / f"method-edit-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, f"method edit form at {width}px")
        assert_accessible(page, f"method edit form at {width}px")
    page.locator("#method-form button[type=submit]").click()
    expect(page.locator(".model-card")).to_contain_text("MIT")
    with live.app.app_context(), live.app.extensions["lb_db"].scope() as s:
        assert s.scalar(select(Team.affiliation).where(Team.id == team_id)).startswith("Univ")
        assert s.scalar(select(User.team_id).where(User.email == "ada@example.org")) == team_id
