"""The history page in Chromium (issue 38, item 2), at 1280 and 390 px: a constructed board (the
boards tests' factory, on the live app's database) whose step plot's points equal the API's, no
sideways scroll, and no WCAG A/AA violation that axe-core finds."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.server.boards.conftest import Factory

from .conftest import assert_accessible, assert_no_sideways_scroll

pytestmark = pytest.mark.browser

WIDTHS = (1280, 390)


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_history_page(live, page, screenshots):
    from leaderboard.server.boards.cache import invalidate_boards

    with live.app.app_context():
        db = live.app.extensions["lb_db"]
        with db.scope() as s:
            make = Factory(s)
            bench = make.benchmark("histdemo")
            teams = [make.team(n) for n in ("Ada Labs", "Bea Lab", "Cy Group")]
            for i, acc in enumerate((0.6, 0.55, 0.7, 0.7, 0.75, 0.5)):
                make.submission(bench, teams[i % 3], minutes=i * 60,
                                scores={"public": {"accuracy": acc, "fpr": 0.1}})
        invalidate_boards("histdemo")
    base = live.url
    api = page.request.get(f"{base}/api/v1/boards/histdemo/detection/test/history").json()
    assert [x["value"] for x in api["best"]] == [0.6, 0.7, 0.75]
    page.goto(f"{base}/benchmarks/histdemo/boards/detection/test")
    page.locator("#history-link a").click()
    expect(page.locator("h1")).to_contain_text("Over time")
    expect(page.locator("#history-plot svg")).to_be_visible()
    drawn = page.locator("#history-plot circle.step-best").evaluate_all(
        "cs => cs.map(c => [+c.dataset.submission, +c.dataset.value])")
    assert drawn == [[x["submission_id"], x["value"]] for x in api["best"]]
    assert page.locator("#history-best tbody tr").count() == len(api["best"])
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(screenshots / f"history-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, f"history page at {width}px")
        assert_accessible(page, f"history page at {width}px")
    # a submission's page says where it stood when made and now
    last = api["best"][-1]["submission_id"]
    page.goto(f"{base}/submissions/{last}")
    expect(page.locator("#history-ranks")).to_contain_text("#1 → #1")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        assert_no_sideways_scroll(page, f"submission page at {width}px")
        assert_accessible(page, f"submission page at {width}px")
