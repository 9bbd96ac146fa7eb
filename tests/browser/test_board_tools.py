"""Board tools in Chromium at 1280 and 390 px (issue 38 item 3): on the SynCred dev board (the
fixture's random and all-fake baselines), the reader searches and re-sorts with the form (no
script needed), the state is in the URL, reloading it shows the same rows, and the JSON API
with the same query string answers the same rows; the page passes axe-core and does not
scroll sideways."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import BENCHMARK, SPLIT, assert_accessible, assert_no_sideways_scroll

pytestmark = pytest.mark.browser

BOARD = f"/benchmarks/{BENCHMARK}/boards/detection/{SPLIT}"
API = f"/api/v1/boards/{BENCHMARK}/detection/{SPLIT}"


def _shown(page) -> list[tuple[str, str]]:
    """(rank, method) of each row of the board table as shown."""
    return [(r.locator("td[data-label='Rank']").get_attribute("data-value"),
             r.locator("td[data-label='Method'] a").first.inner_text())
            for r in page.locator("table.board tbody tr").all()]


@pytest.mark.parametrize("live", ["inline"], indirect=True)
@pytest.mark.parametrize("width", [1280, 390])
def test_filter_with_the_form_and_reload(live, page, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(live.url + BOARD)
    full = _shown(page)
    assert {m for _, m in full} >= {"random", "all-fake"} or len(full) == 2, full
    # search for one baseline and sort by the board's primary, ascending, with the form
    page.fill("input[name='q']", "random")
    page.select_option("select[name='dir']", "asc")
    page.locator("form.filter button[type='submit']").click()
    expect(page).to_have_url(re.compile(r"[?&]q=random"))
    expect(page.locator("#board-filtered")).to_contain_text("not renumbered")
    rows = _shown(page)
    assert rows and all("random" in m.lower() for _, m in rows), rows
    ranks = dict((m, r) for r, m in full)
    assert all(ranks[m] == r for r, m in rows)  # the board's own ranks
    assert_accessible(page, f"filtered board at {width}px")
    assert_no_sideways_scroll(page, f"filtered board at {width}px")
    # the URL is the state: a reload shows the same rows and the same form
    url = page.url
    page.reload()
    assert page.url == url and _shown(page) == rows
    expect(page.locator("input[name='q']")).to_have_value("random")
    expect(page.locator("select[name='dir']")).to_have_value("asc")
    # the API takes the same query string and answers the same rows
    body = page.request.get(live.url + API + "?" + url.split("?", 1)[1]).json()
    assert [(str(r["rank"]) if r["rank"] is not None else "", r["method_name"])
            for r in body["rows"]] == rows
    # hide the baselines: nothing is left, and the page says so
    page.select_option("select[name='baselines']", "0")
    page.fill("input[name='q']", "")
    page.locator("form.filter button[type='submit']").click()
    expect(page).to_have_url(re.compile(r"[?&]baselines=0"))
    expect(page.locator("#board-filtered")).to_contain_text("No row of this board matches")
    assert_no_sideways_scroll(page, f"board without baselines at {width}px")
