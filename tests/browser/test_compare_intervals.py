"""Rank intervals, paired comparisons and board pages in Chromium (issues 14 and 16), at 1280 and
390 px: a board with several scored team submissions shows each ranked row's "rank (lo–hi)" and
the rule under it; "vs above" and the "pick two rows" form (plain GET, no script needed) reach
the compare page, which shows its table or a readable refusal; the board's page links work; the
modality page fits. Nothing may be wider than the 390 px viewport, and the keyboard reaches the
compare controls with a visible focus ring.

The team submissions are real files scored by the real scoring job (inline), as uploads are: the
per-item outcome files the intervals and comparisons read are written only there.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .conftest import BENCHMARK, SPLIT, _wait_scored, assert_accessible

pytestmark = pytest.mark.browser

WIDTHS = (1280, 390)
BOARD = f"/benchmarks/{BENCHMARK}/boards/detection/{SPLIT}"
#: (team, method, baseline kind, seed); "Twin Labs" uploads Ada's very file
TEAMS = (("Ada Labs", "Random one", "random", 1), ("Bea Lab", "Random two", "random", 2),
         ("Cy Group", "Random three", "random", 3), ("Dee Inc", "All real", "all-real", 0),
         ("Twin Labs", "Copy of one", "random", 1))


def _seed_teams(live, pack: Path, tmp_path: Path) -> dict[str, int]:
    """One user and team per TEAMS row, each with one predictions file scored by the job."""
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack
    from leaderboard.server.jobs.scoring import enqueue_scoring
    from leaderboard.server.services import accounts, submissions, teams

    app, loaded, ids = live.app, load_pack(pack), {}
    with app.app_context():
        db = app.extensions["lb_db"]
        for i, (team, method, kind, seed) in enumerate(TEAMS):
            pred = tmp_path / f"{kind}-{seed}.jsonl"
            if not pred.exists():
                write_baseline(loaded, SPLIT, kind, pred, seed=seed)
            with db.scope() as s:
                user = accounts.register(s, email=f"u{i}@example.org", display_name=team,
                                         password="correct horse battery")
                teams.create_team(s, user, name=team)
                sub = submissions.create_submission(
                    s, user=user, benchmark=BENCHMARK, split=SPLIT,
                    stream=io.BytesIO(pred.read_bytes()), data_dir=app.config["DATA_DIR"],
                    max_bytes=10 << 20, default_quota=5, method_name=method)
                ids[method] = sub.id
                if i == 0:  # Ada also on the held-out split, which the modality board ranks
                    from tests.agreements import grant_all
                    grant_all(s, user)  # a held-out submission needs the agreement (issue 21)
                    held = tmp_path / "test.random.jsonl"
                    write_baseline(loaded, "test", "random", held, seed=3)
                    ids["On test"] = submissions.create_submission(
                        s, user=user, benchmark=BENCHMARK, split="test",
                        stream=io.BytesIO(held.read_bytes()), data_dir=app.config["DATA_DIR"],
                        max_bytes=10 << 20, default_quota=5, method_name="On test").id
        for sid in ids.values():
            enqueue_scoring(sid)
    _wait_scored(app, list(ids.values()), None, None)
    from leaderboard.server.boards.cache import invalidate_boards
    with app.app_context():
        invalidate_boards(BENCHMARK)
    return ids


def _fits(page: Page, what: str) -> None:
    """At the current width: the page does not scroll sideways and no element (outside a
    sideways-scrolling table wrapper) sticks out of the viewport."""
    width = page.viewport_size["width"]
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{what} is {wide}px wide at {width}px"
    out = page.evaluate("""w => [...document.querySelectorAll('body *')]
        .filter(e => !e.closest('.table-scroll') && e.getClientRects().length)
        .filter(e => e.getBoundingClientRect().right > w + 0.5)
        .map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''))""", width)
    assert not out, f"{what} at {width}px: wider than the viewport: {out[:8]}"


def _inside(page: Page, selector: str, width: int) -> None:
    right = page.eval_on_selector_all(
        selector, "es => Math.max(...es.map(e => e.getBoundingClientRect().right))")
    assert right <= width + 0.5, f"{selector} reaches {right:.0f}px at {width}px"


def _sticky_columns_apart(page: Page) -> None:
    """Scrolled fully sideways, the sticky team column does not cover the rank column (which
    is wider since it carries the interval). On a phone the rows are stacked blocks (no
    sticky columns): each cell then spans the row."""
    if page.evaluate("getComputedStyle(document.querySelector('table.board')).display") != "table":
        widths = page.evaluate("""() => [...document.querySelectorAll('table.board tbody td')]
            .map(td => td.getBoundingClientRect().width)""")
        assert min(widths) >= page.viewport_size["width"] * 0.8, widths[:6]
        return
    # the widest interval a board shows (only the top 100 rows get one)
    page.evaluate("""() => { const cell = document.querySelector('table.board tbody td');
        cell.firstChild.textContent = '100';
        cell.querySelector('.rank-interval').textContent = '(100–100+)'; }""")
    page.evaluate("document.querySelector('.table-scroll').scrollLeft = 10000")
    page.wait_for_timeout(50)
    gaps = page.evaluate("""() => [...document.querySelectorAll('table.board tr')].map(tr => {
        const [a, b] = tr.children;
        return b.getBoundingClientRect().left - a.getBoundingClientRect().right; })""")
    page.evaluate("document.querySelector('.table-scroll').scrollLeft = 0")
    assert min(gaps) >= -1, f"the team column covers the rank column by {-min(gaps):.0f}px"


def _each_width(page: Page, shots: Path, name: str, check=None) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
        _fits(page, name)
        assert_accessible(page, f"{name} at {width}px")
        if check is not None:
            check(width)
    page.set_viewport_size({"width": 1280, "height": 900})


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_intervals_and_compare(live, page, syncred_pack, screenshots, tmp_path):
    base = live.url
    shots = screenshots / "compare"
    shots.mkdir(exist_ok=True)
    # before any team entry on the held-out split, the modality board says so in words
    page.goto(f"{base}/modalities/image/detection")
    expect(page.locator("main p.empty")).to_contain_text("No scored public entries")
    _each_width(page, shots, "modality-empty")

    ids = _seed_teams(live, syncred_pack, tmp_path)

    # the board: every ranked row shows its interval, the rule is under the table
    page.goto(base + BOARD)
    rows = page.locator("table.board tbody tr")
    expect(rows.filter(has_text="Ada Labs")).to_have_count(1)
    intervals = page.locator("table.board .rank-interval")
    assert intervals.count() >= len(TEAMS), intervals.count()

    def board_check(width):
        expect(intervals.first).to_be_visible()
        assert re.fullmatch(r"\(\d+(–\d+\+?)?\)", intervals.first.inner_text().strip())
        expect(page.locator("p.rule", has_text="Rank intervals")).to_be_visible()
        expect(page.locator("table.board .tied-first").first).to_be_visible()
        expect(page.locator("form.compare-pick")).to_be_visible()
        _sticky_columns_apart(page)
        page.reload()
    _each_width(page, shots, "board", board_check)

    # "vs above" leads to the comparison of that row with the one above it
    row = rows.nth(1)
    link = row.locator("a.compare-link")
    expect(link).to_have_text("vs above")
    link.click()
    expect(page).to_have_url(re.compile(rf"/compare/{BENCHMARK}/{SPLIT}\?a=\d+&b=\d+"))
    expect(page.locator("table.compare tbody tr").first).to_contain_text("overall")

    def compare_check(width):
        if width > 640:
            expect(page.locator("table.compare th", has_text="A − B")).to_be_visible()
        _inside(page, "table.compare td", width)
        expect(page.locator("p.rule", has_text="How this is computed")).to_be_visible()
    _each_width(page, shots, "compare", compare_check)

    # the "pick two rows" form under the board is a plain GET form: works without script
    ctx = page.context.browser.new_context(java_script_enabled=False,
                                           viewport={"width": 390, "height": 900})
    nojs = ctx.new_page()
    nojs.goto(base + BOARD)
    form = nojs.locator("form.compare-pick")
    expect(form.get_by_role("combobox")).to_have_count(2)  # each field has its label
    # one list of this page's rows serves both fields (issue 25: the page carries it once)
    expect(form.locator(f"datalist option[value='{ids['Random two']}']")).to_have_text(
        re.compile(r"Bea Lab · Random two$"))
    form.locator("input[name=a]").fill(str(ids["Random one"]))
    form.locator("input[name=b]").fill(str(ids["Random two"]))
    form.get_by_role("button", name="Compare").click()
    expect(nojs).to_have_url(re.compile(rf"a={ids['Random one']}&b={ids['Random two']}"))
    expect(nojs.locator("main")).to_contain_text("Random one")
    expect(nojs.locator("table.compare")).to_be_visible()
    ctx.close()

    # a submission compared with an identical one: refused in words, not a table of zeros
    page.goto(f"{base}/compare/{BENCHMARK}/{SPLIT}?a={ids['Random one']}&b={ids['Copy of one']}")
    refused = page.locator("table.compare td.refused").first
    expect(refused).to_contain_text("not shown")

    def refusal_check(width):
        expect(refused).to_be_visible()
        _inside(page, "table.compare td", width)  # readable without scrolling sideways
    _each_width(page, shots, "compare-refused", refusal_check)

    # a bad id: a 400 that says why above the form, which keeps what was typed; fixing it works
    resp = page.goto(f"{base}/compare/{BENCHMARK}/{SPLIT}?a=abc&b={ids['Random one']}")
    assert resp.status == 400, resp.status
    expect(page.locator("#compare-error")).to_contain_text("integers")
    expect(page.get_by_label("Submission A")).to_have_value("abc")
    expect(page.get_by_label("Submission A")).to_have_attribute("aria-invalid", "true")
    _each_width(page, shots, "compare-bad-id")
    page.get_by_label("Submission A").fill(str(ids["Random two"]))
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("table.compare")).to_be_visible()
    resp = page.goto(f"{base}/compare/{BENCHMARK}/{SPLIT}?a=99999&b={ids['Random one']}")
    assert resp.status == 404, resp.status
    expect(page.locator("#compare-error")).to_contain_text("no scored submission 99999")

    # from the compare page back to the board
    page.locator(".crumbs a", has_text="AI-generated image detection").click()
    expect(page).to_have_url(re.compile(BOARD + "$"))

    # the compare form on the compare page itself: labelled, keyboard-reachable, focus visible
    page.goto(f"{base}/compare/{BENCHMARK}/{SPLIT}")
    a_input = page.get_by_label("Submission A")
    a_input.focus()
    a_input.fill(str(ids["Random two"]))
    page.keyboard.press("Tab")
    page.keyboard.type(str(ids["Random three"]))
    page.keyboard.press("Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", ""), outline
    page.keyboard.press("Shift+Tab")  # an input's focus ring is the accent colour, not a tint
    ring = page.evaluate("getComputedStyle(document.activeElement).outlineColor")
    assert ring == "rgb(31, 95, 191)", ring
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"a={ids['Random two']}&b={ids['Random three']}"))
    expect(page.locator("table.compare")).to_be_visible()

    # pagination: two rows a page, the next link and back
    page.goto(f"{base}{BOARD}?per_page=2")
    nav = page.locator("nav.pages")
    expect(nav).to_contain_text("page 1 of")
    _each_width(page, shots, "board-paged", lambda w: expect(nav).to_be_visible())
    nav.locator("a[rel=next]").click()
    expect(nav).to_contain_text("page 2 of")
    expect(page.locator("table.board .rank-interval").first).to_be_visible()
    nav.locator("a[rel=prev]").click()
    expect(nav).to_contain_text("page 1 of")

    # the modality page ranks teams on the held-out split; its links lead to the task boards
    page.goto(f"{base}/modalities/image/detection")
    expect(page.locator("table.board tbody tr", has_text="Ada Labs")).to_have_count(1)
    _each_width(page, shots, "modality")
    page.locator("table.board thead a").first.click()
    expect(page).to_have_url(re.compile(r"/boards/detection/test"))
