"""The release picker in Chromium (issue 37, item 1), at 1280 and 390 px: SynCred's release 2
imported beside the live app's release 1; the family's page shows release 2 marked latest,
the picker's dates and item counts equal the API's, a click goes to release 1's page (which
says it is not the latest) and its board, no sideways scroll, no WCAG A/AA violation."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.server.releases_util import next_release

from .conftest import assert_accessible, assert_no_sideways_scroll

pytestmark = pytest.mark.browser

WIDTHS = (1280, 390)


def _check(page, what: str, screenshots) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(screenshots / f"releases-{what}-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, f"{what} at {width}px")
        assert_accessible(page, f"{what} at {width}px")


def _picked(page) -> dict:
    """{release: (text of its date and counts, current, latest)} as the picker shows them."""
    out = {}
    for li in page.locator("#release-picker li.release").all():
        n = int(li.get_attribute("data-release"))
        link = li.locator("a")
        out[n] = ({s.get_attribute("data-split"): s.inner_text().split()[-1]
                   for s in li.locator(".split-items").all()},
                  link.get_attribute("aria-current") == "page",
                  link.locator(".badge").count() == 1)
    return out


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_release_picker(live, page, syncred_pack, tmp_path, screenshots):
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.services.release_import import import_release

    app = live.app
    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            done = import_release(s, next_release(syncred_pack, tmp_path / "r2", release=2,
                                                  meta={"version": "2"}),
                                  data_dir=app.config["DATA_DIR"],
                                  label_keys=app.config["LABEL_KEYS"])
            assert done.created
        invalidate_boards(None)
    api = page.request.get(f"{live.url}/api/v1/benchmarks/syncred/releases").json()
    want = {r["release"]: {s["split"]: str(s["items"]) for s in r["splits"]}
            for r in api["releases"]}
    assert sorted(want) == [1, 2]

    page.goto(f"{live.url}/benchmarks/syncred")
    expect(page.locator("#release-picker .release-shown")).to_contain_text("release 2")
    got = _picked(page)
    assert {n: g[0] for n, g in got.items()} == want
    assert [(g[1], g[2]) for _n, g in sorted(got.items())] == [(False, False), (True, True)]
    dates = {r["release"]: r["released_at"][:10] for r in api["releases"]}
    for n, day in dates.items():
        expect(page.locator(f'#release-picker li[data-release="{n}"]')).to_contain_text(day)
    _check(page, "benchmark", screenshots)

    page.locator('#release-picker li[data-release="1"] a').click()
    page.wait_for_url(f"{live.url}/benchmarks/syncred-v1")
    expect(page.locator("#release-picker .release-shown")).to_contain_text("not the latest")
    assert _picked(page)[1][1]
    # release 1's board: the baselines scored on its dev split are there
    page.goto(f"{live.url}/benchmarks/syncred-v1/boards/detection/dev")
    expect(page.locator("#release-picker")).to_be_visible()
    board = page.request.get(f"{live.url}/api/v1/boards/syncred-v1/detection/dev").json()
    assert (board["benchmark"], board["release"]) == ("syncred", 1) and board["rows"]
    _check(page, "board", screenshots)
