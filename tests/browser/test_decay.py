"""The decay plot and a submission's history across releases in Chromium (issue 37, 4b/4c), at
1280 and 390 px, on the demo's own two UniAIDet releases (`leaderboard.server.demo_seed.seed`:
release 2 adds Qwen-Image, its baselines are re-runs of release 1's, scored by the real scoring
job): the plot's points and the tables equal the API's numbers, nothing is wider than the
viewport, and axe-core finds no WCAG A/AA violation."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import assert_accessible, assert_no_sideways_scroll

pytestmark = pytest.mark.browser

WIDTHS = (1280, 390)
API = "/api/v1/boards/uniaidet/detection/test/decay"


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_decay_plot_and_submission_history(live, page, screenshots):
    from leaderboard.server.demo_seed import seed

    with live.app.app_context():
        seed(live.app, only=("uniaidet",), echo=lambda *a, **k: None)
    base = live.url
    view = page.request.get(f"{base}{API}").json()
    assert [r["release"] for r in view["releases"]] == [1, 2]
    assert len(view["lines"]) == 2 and all(len(ln["points"]) == 2 for ln in view["lines"])
    api = [(ln["key"], p["release"], p["submission_id"], p["value"])
           for ln in view["lines"] for p in ln["points"]]

    # the benchmark page: the plot, whose points are the API's, and its table
    page.goto(f"{base}/benchmarks/uniaidet")
    expect(page.locator("#decay svg.decay-plot")).to_be_visible()
    points = page.locator("#decay svg .point")
    drawn = [(points.nth(i).get_attribute("data-line"),
              int(points.nth(i).get_attribute("data-release")),
              int(points.nth(i).get_attribute("data-submission")),
              float(points.nth(i).get_attribute("data-value"))) for i in range(points.count())]
    assert drawn == api
    for key, release, sid, value in api:
        cell = page.locator(f'#decay tr[data-line="{key}"] td[data-release="{release}"]')
        assert int(cell.get_attribute("data-submission")) == sid
        assert float(cell.get_attribute("data-value")) == pytest.approx(value)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(screenshots / f"decay-benchmark-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, f"benchmark page with the decay plot at {width}px")
        assert_accessible(page, f"benchmark page with the decay plot at {width}px")

    # the decay page, reached from the benchmark page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.locator("#decay a", has_text="Decay page").first.click()
    expect(page.locator("h1")).to_contain_text("Across releases")
    assert page.locator("svg.decay-plot .point").count() == len(api)

    # a release 2 baseline's page: its history across releases equals the API's
    rerun = next(p for ln in view["lines"] for p in ln["points"] if p["rerun_of_id"])
    hist = page.request.get(
        f"{base}/api/v1/submissions/{rerun['submission_id']}/releases").json()
    points = hist["tasks"][0]["points"]
    assert [p["release"] for p in points] == [1, 2]
    assert points[0]["submission_id"] == rerun["rerun_of_id"]
    page.goto(f"{base}/submissions/{rerun['submission_id']}")
    table = page.locator("#across-releases table.release-history")
    expect(table).to_be_visible()
    for p in points:
        row = table.locator(f'tr[data-release="{p["release"]}"]')
        assert int(row.get_attribute("data-submission")) == p["submission_id"]
        assert float(row.get_attribute("data-value")) == pytest.approx(p["value"])
        expect(row.locator('td[data-label="n"]')).to_have_text(str(p["n"]))
    # and its row of the generators matrix, Qwen-Image (added by release 2) among the columns
    expect(page.locator("#across-releases figure.submission-matrix svg")).to_be_visible()
    expect(page.locator("#across-releases figure.submission-matrix svg")).to_contain_text(
        "Qwen-Image")
    # every breakdown open: their tables must fit too (one block per slice at 390 px)
    page.evaluate("() => document.querySelectorAll('details.breakdown')"
                  ".forEach(d => d.open = true)")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(screenshots / f"decay-submission-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, f"submission page across releases at {width}px")
        assert_accessible(page, f"submission page across releases at {width}px")
