"""A team's first day, in a real browser (issue 3, "How we will know it works"): register, create a
team, upload predictions through the submit page (with its progress bar), watch the status turn to
"scored", find the team's row on the board, sort a column, open the submission page and see a
plot; an invalid file shows its line and field on "my submissions". Runs once with jobs inline and
once with a real RQ worker process (see conftest.py). Screenshots go to ``screenshots/``.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .conftest import BENCHMARK, SPLIT, assert_accessible

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
TEAM = "Ada Labs"
#: a real worker forks per job and loads the pack on its first one
SCORED_TIMEOUT_MS = 30_000

# Records every value the upload progress bar takes (it lives in sessionStorage so that it
# survives the redirect to "my submissions"). Installed through the DevTools protocol, which the
# page's CSP (no inline scripts) does not govern.
WATCH_PROGRESS = """() => {
  const bar = document.getElementById("upload-progress");
  sessionStorage.setItem("progress", "");
  new MutationObserver(() => {
    if (!bar.hidden) {
      sessionStorage.setItem("progress", sessionStorage.getItem("progress") + bar.value + ",");
    }
  }).observe(bar, {attributes: true});
}"""


def _register_and_team(page: Page, base: str) -> None:
    page.goto(f"{base}/register")
    page.fill("input[name=email]", "ada@example.org")
    page.fill("input[name=display_name]", "Ada")
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")
    expect(page).to_have_url(re.compile(r"/team/?$"))
    expect(page.locator("header")).to_contain_text("Log out (Ada)")
    create = page.locator("form[action$='/team/create']")
    create.locator("input[name=name]").fill(TEAM)
    create.locator("button[type=submit]").click()
    expect(page.locator("h1")).to_contain_text(TEAM)
    expect(page.locator("code.invite")).not_to_be_empty()


def _upload(page: Page, base: str, path, method: str) -> int:
    """Upload through the submit page; returns the new submission's id (top row of "mine")."""
    page.goto(f"{base}/submit")
    page.select_option("#benchmark", BENCHMARK)
    page.select_option("#split", SPLIT)
    page.fill("input[name=method_name]", method)
    page.fill("textarea[name=description]", "Uniform random scores (seed 1), for the browser test.")
    page.set_input_files("#file", str(path))
    bar = page.locator("#upload-progress")
    expect(bar).to_be_hidden()
    page.evaluate(WATCH_PROGRESS)
    page.click("#upload-button")
    page.wait_for_url("**/submissions/mine")
    progress = [int(v) for v in page.evaluate("sessionStorage.getItem('progress')").split(",") if v]
    assert progress and progress[-1] == 100, f"progress bar values seen: {progress}"
    row = page.locator(".submission").first
    expect(row).to_contain_text(method)
    return int(row.get_attribute("id").removeprefix("submission-"))


def _column(page: Page, index: int) -> list[str]:
    return page.eval_on_selector_all(
        "table.board tbody tr",
        f"rows => rows.map(r => r.cells[{index}].getAttribute('data-value'))")


def _row_ids(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "table.board tbody tr", "rows => rows.map(r => r.cells[2].querySelector('a').href)")


def _check_sorted(values: list[str], descending: bool) -> None:
    filled = [float(v) for v in values if v != ""]
    assert values[:len(filled)] == [v for v in values if v != ""], f"n/a not last: {values}"
    assert filled == sorted(filled, reverse=descending), (descending, values)


def _sort_a_column(page: Page) -> str:
    """Click a metric header whose sort changes the row order; check the order both ways."""
    headers = page.locator("table.board thead th")
    before = _row_ids(page)
    for index in range(3, headers.count()):
        th = headers.nth(index)
        if th.get_attribute("data-sort") != "num":
            continue
        higher = th.get_attribute("data-better") == "higher"
        values = _column(page, index)
        if len({v for v in values if v != ""}) < 2:
            continue
        th.click()
        expect(th).to_have_attribute("aria-sort", "descending" if higher else "ascending")
        _check_sorted(_column(page, index), descending=higher)
        first = _row_ids(page)
        th.click()
        expect(th).to_have_attribute("aria-sort", "ascending" if higher else "descending")
        _check_sorted(_column(page, index), descending=not higher)
        if first != before or _row_ids(page) != before:
            return th.inner_text()
    pytest.fail("no metric column changed the row order when sorted")


def test_user_journey(live, page: Page, predictions, screenshots, tmp_path):
    base, mode = live.url, live.mode
    _register_and_team(page, base)

    # upload, then watch "my submissions" turn it to scored (polled by status.js)
    sub_id = _upload(page, base, predictions["valid"], "Random scores")
    row = page.locator(f"#submission-{sub_id}")
    expect(row.locator(".status")).to_have_text("scored", timeout=SCORED_TIMEOUT_MS)
    page.screenshot(path=str(screenshots / f"{mode}-mine.png"), full_page=True)
    assert_accessible(page, "mine")

    # the benchmark page links to the full board, where the team's row is
    page.goto(f"{base}/benchmarks/{BENCHMARK}")
    page.click(f"a[href*='/boards/detection/{SPLIT}']")
    expect(page).to_have_url(re.compile(rf"/benchmarks/{BENCHMARK}/boards/detection/{SPLIT}"))
    team_row = page.locator("table.board tbody tr", has_text=TEAM)
    expect(team_row).to_have_count(1)
    expect(team_row).to_contain_text("Random scores")
    expect(page.locator("table.board tbody tr.baseline")).to_have_count(2)
    _sort_a_column(page)
    page.screenshot(path=str(screenshots / f"{mode}-board.png"), full_page=True)
    assert_accessible(page, "board")

    # the submission page draws its plots server-side (no CDN)
    team_row.locator("a", has_text="Random scores").click()
    expect(page).to_have_url(re.compile(rf"/submissions/{sub_id}$"))
    expect(page.locator("section.plots svg").first).to_be_visible()
    assert page.locator("section.plots svg").count() >= 2  # ROC and PR at least
    expect(page.locator("table.records").first).to_be_visible()
    page.screenshot(path=str(screenshots / f"{mode}-submission.png"), full_page=True)
    assert_accessible(page, "submission")

    # an invalid file: the failure names the line and the field
    bad_id = _upload(page, base, predictions["invalid"], "Broken file")
    bad = page.locator(f"#submission-{bad_id}")
    expect(bad.locator(".status")).to_have_text("failed", timeout=SCORED_TIMEOUT_MS)
    expect(bad.locator(".failure-lines")).to_contain_text("line 3")
    expect(bad.locator(".failure-lines")).to_contain_text("field 'score'")
    page.screenshot(path=str(screenshots / f"{mode}-invalid.png"), full_page=True)
    assert_accessible(page, "invalid")

    # a file the browser can tell is broken: every problem counted, the first 50 listed with
    # line and field, as the command line does (issue 33); nothing is uploaded
    broken = tmp_path / "broken.jsonl"
    rows = ['{"id": "a", "score": 0.5}', "not json"] * 30 + ['{"score": 0.5}'] * 3
    broken.write_text("\n".join(rows) + "\n")
    page.goto(f"{base}/submit")
    page.select_option("#benchmark", BENCHMARK)
    page.fill("input[name=method_name]", "Broken lines")
    page.set_input_files("#file", str(broken))
    page.click("#upload-button")
    expect(page.locator("#upload-message")).to_have_text(
        "33 problems in the file; nothing was uploaded.")
    items = page.locator("#upload-problems li")
    expect(items).to_have_count(33)
    expect(items.first).to_have_text(re.compile(r"^line 2: not valid JSON"))
    expect(items.last).to_have_text("line 63, field 'id': required, must be a string item id")
    rows = ["not json"] * 70
    broken.write_text("\n".join(rows) + "\n")
    page.set_input_files("#file", str(broken))
    page.click("#upload-button")
    expect(page.locator("#upload-message")).to_have_text(
        "70 problems in the file (the first 50 below); nothing was uploaded.")
    expect(items).to_have_count(51)
    expect(items.last).to_have_text("… and 20 more problems")
    assert page.url.endswith("/submit")

