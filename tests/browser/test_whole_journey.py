"""A participant's whole journey and an admin's challenge, in Chromium (issue 12, "How we will
know it works"): register, create a team, sign the agreement, get approved by an admin (another
browser context), download every link of the data page, upload a bad file then a good one, see
the score on My submissions, select it, find it ranked with n on the board, open its submission
page and go back to its board; then the admin runs a two-phase challenge whose private part is
revealed by the reconciler when the last phase closes. Every page visited is photographed at
1280 and 390 px (``make screenshots``), must not be wider than a 390 px viewport, and every link
on it must answer 200.
"""
from __future__ import annotations

import re
import time
from datetime import timedelta
from urllib.parse import urljoin, urlsplit

import pytest
from playwright.sync_api import Page, expect

from .conftest import BENCHMARK, assert_accessible

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
WIDTHS = (1280, 390)
SCORED_TIMEOUT_MS = 30_000


def _register(page: Page, base: str, email: str, name: str) -> None:
    page.goto(f"{base}/register")
    page.fill("input[name=email]", email)
    page.fill("input[name=display_name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")


def _upload(page: Page, base: str, path, method: str, split: str, *, via: str = "") -> int:
    if via:  # a submission to a challenge: through its page's link (issue 33)
        page.goto(via)
        page.click("#submit-to-challenge")
        expect(page.locator("#challenge-target")).to_be_visible()
    else:
        page.goto(f"{base}/submit")
    page.select_option("#benchmark", BENCHMARK)
    page.select_option("#split", split)
    page.fill("input[name=method_name]", method)
    page.set_input_files("#file", str(path))
    page.click("#upload-button")
    page.wait_for_url("**/submissions/mine")
    row = page.locator(".submission").first
    expect(row).to_contain_text(method)
    return int(row.get_attribute("id").removeprefix("submission-"))


class Visits:
    """Every page visited: screenshots at both widths, the 390 px width check, link checks."""

    def __init__(self, browser, shots):
        self.browser, self.shots, self.pages, self.checked = browser, shots, [], {}

    def visit(self, page: Page, name: str) -> None:
        url = page.url
        self.pages.append(name)
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_timeout(150)
            page.screenshot(path=str(self.shots / f"{name}-{width}.png"), full_page=True)
            if width == 390:
                wide = page.evaluate("document.documentElement.scrollWidth")
                assert wide <= 390, f"{name} ({url}) is {wide}px wide at 390px"
            # the API reference's body is Swagger UI (vendored, not ours): the rest is checked
            assert_accessible(page, f"{name} ({url}) at {width}px", exclude=("#swagger-ui",))
        page.set_viewport_size({"width": 1280, "height": 900})
        base = f"{urlsplit(url).scheme}://{urlsplit(url).netloc}"
        hrefs = page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))")
        for href in hrefs:
            target = urljoin(url, href).split("#")[0]
            if not target.startswith(base) or target in self.checked:
                continue
            status = page.request.get(target, max_redirects=0).status
            self.checked[target] = status
            assert status == 200, f"{name}: link {href} answered {status}"


def _make_admin(app, email: str) -> None:
    from sqlalchemy import select

    from leaderboard.server.models import User
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        s.scalar(select(User).where(User.email == email)).is_admin = True


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_whole_journey(live, browser, predictions, screenshots, syncred_pack, tmp_path):
    base, app = live.url, live.app
    shots = screenshots / "journey"
    shots.mkdir(exist_ok=True)
    visits = Visits(browser, shots)
    me = browser.new_context(viewport={"width": 1280, "height": 900})
    admin_ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page, admin = me.new_page(), admin_ctx.new_page()
    for p in (page, admin):
        p.set_default_timeout(15_000)
    csp_errors = []
    page.on("console", lambda m: csp_errors.append(m.text)
            if "Content Security Policy" in m.text else None)

    # a fresh install is not empty: leaders, baselines, counts
    page.goto(base)
    expect(page.locator("#bench-syncred .baseline").first).to_be_visible()
    visits.visit(page, "home")
    page.goto(f"{base}/benchmarks/{BENCHMARK}")
    expect(page.locator("h1")).to_have_count(1)
    expect(page.locator("#participate")).to_contain_text("Register")
    visits.visit(page, "benchmark-anonymous")

    # register, team, sign (a first attempt with a short intended use keeps the input)
    _register(page, base, "ada@example.org", "Ada")
    page.locator("form[action$='/team/create'] input[name=name]").fill("Ada Labs")
    page.locator("form[action$='/team/create'] button").click()
    expect(page.locator("h1")).to_contain_text("Ada Labs")
    visits.visit(page, "team")
    page.goto(f"{base}/data/{BENCHMARK}")
    page.fill("input[name=full_name]", "Ada Lovelace")
    page.fill("input[name=affiliation]", "Analytical Engines")
    page.fill("input[name=role]", "Researcher")
    page.fill("textarea[name=intended_use]", "too short")
    page.check("input[name=accept]")
    page.evaluate("document.getElementById('sign-form').noValidate = true")
    page.click("#sign-form button")
    expect(page.locator(".error-box")).to_be_visible()
    expect(page.locator("input[name=full_name]")).to_have_value("Ada Lovelace")
    expect(page.locator("textarea[name=intended_use]")).to_have_attribute("aria-invalid", "true")
    visits.visit(page, "data-sign-error")
    page.fill("textarea[name=intended_use]", "Benchmarking our detector of AI-generated images.")
    page.click("#sign-form button")
    expect(page.locator("#refused")).to_contain_text("waiting")

    # the admin, in another context, lands on the admin home and approves
    _register(admin, base, "root@example.org", "Root")
    _make_admin(app, "root@example.org")
    admin.click("button:has-text('Log out')")
    admin.fill("input[name=email]", "root@example.org")
    admin.fill("input[name=password]", PASSWORD)
    admin.click("main form button[type=submit]")
    expect(admin).to_have_url(re.compile(r"/admin/?$"))
    visits.visit(admin, "admin-home")
    admin.goto(f"{base}/admin/requests")
    visits.visit(admin, "admin-requests")
    admin.locator("button.approve").first.click()
    expect(admin.locator(".flash")).to_contain_text("approved")

    # every download link of the data page answers
    page.goto(f"{base}/data/{BENCHMARK}")
    expect(page.locator("#granted")).to_be_visible()
    links = page.eval_on_selector_all("a[id^=dl-]", "as => as.map(a => a.href)")
    assert len(links) >= 6, links
    for href in links:
        assert page.request.get(href).status == 200, href
    visits.visit(page, "data")
    page.goto(f"{base}/benchmarks/{BENCHMARK}")
    expect(page.locator("#access-step")).to_contain_text("Access granted")
    visits.visit(page, "benchmark")

    # a bad file, then a good one; only the good one counts
    bad = _upload(page, base, predictions["invalid"], "Broken file", "dev")
    expect(page.locator(f"#submission-{bad} .failure-lines")).to_contain_text("line 3")
    good = _upload(page, base, predictions["valid"], "Random scores", "dev")
    row = page.locator(f"#submission-{good}")
    expect(row.locator(".status")).to_have_text("scored", timeout=SCORED_TIMEOUT_MS)
    expect(row.locator("table.headline")).to_contain_text("n=")
    row.locator("button:has-text('Select')").click()
    expect(page.locator(f"#submission-{good} .selected-badge")).to_be_visible()
    visits.visit(page, "mine")
    page.goto(f"{base}/submit")
    visits.visit(page, "submit")

    # ranked with n on the board; the submission page shows its rank and links back
    page.goto(f"{base}/benchmarks/{BENCHMARK}/boards/detection/dev")
    team_row = page.locator("table.board tbody tr", has_text="Ada Labs")
    expect(team_row).to_have_count(1)
    expect(team_row.locator("small.n").first).to_contain_text("n=")
    visits.visit(page, "board")
    team_row.locator("a", has_text="Random scores").click()
    expect(page).to_have_url(re.compile(rf"/submissions/{good}$"))
    expect(page.locator(".placement")).to_contain_text("#")
    visits.visit(page, "submission")
    page.click("#back-to-board")
    expect(page).to_have_url(re.compile(r"/boards/detection/dev"))

    # the other public pages
    for path, name in (("/challenges/", "challenges"), ("/starter-kit", "starter-kit"),
                       ("/modalities/image", "modality"), ("/data/", "data-index")):
        page.goto(base + path)
        visits.visit(page, name)
    page.goto(f"{base}/api/docs/")
    expect(page.locator(".swagger-ui .info")).to_be_visible()
    visits.visit(page, "api-docs")
    assert not csp_errors, csp_errors
    assert page.request.get(f"{base}/api/v1/").json()["resources"]["challenges"]

    # the admin runs a two-phase challenge; the test phase closes in a few seconds
    from leaderboard.server.models import utcnow
    now = utcnow()
    fmt = "%Y-%m-%dT%H:%M:%S"
    close = now + timedelta(seconds=25)
    admin.goto(f"{base}/admin/challenges")
    admin.fill("input[name=key]", "trident-like")
    admin.fill("input[name=title]", "TRIDENT-like challenge")
    admin.fill("input[name=max_selections]", "1")
    for i, (name, split, part, opens, closes) in enumerate((
            ("Validation", "dev", "all", now - timedelta(hours=2), now - timedelta(hours=1)),
            ("Test", "test", "private", now - timedelta(hours=1), close))):
        admin.fill(f"input[name=phase{i}_name]", name)
        admin.select_option(f"select[name=phase{i}_split]", split)
        admin.select_option(f"select[name=phase{i}_part]", part)
        for field, when in (("opens_at", opens), ("closes_at", closes)):
            admin.evaluate(f"document.querySelector('input[name=phase{i}_{field}]').type = 'text'")
            admin.fill(f"input[name=phase{i}_{field}]", when.strftime(fmt))
    admin.click("#challenge-form button[type=submit]")
    expect(admin.locator(".flash")).to_contain_text("created")
    visits.visit(admin, "admin-challenges")
    # the participant enters it (its rules bind only entrants) and submits to it from its page
    page.goto(f"{base}/challenges/trident-like")
    page.click("#enter-challenge")
    expect(page.locator("#submit-to-challenge")).to_be_visible()
    test_sub = _upload(page, base, tmp_path_test_file(syncred_pack, tmp_path), "On test", "test",
                       via=f"{base}/challenges/trident-like")
    expect(page.locator(f"#submission-{test_sub} .status")).to_have_text(
        "scored", timeout=SCORED_TIMEOUT_MS)
    page.goto(f"{base}/challenges/trident-like")
    expect(page.locator("time.countdown")).to_be_visible()
    visits.visit(page, "challenge-running")

    # when the last phase closes, the reconciler (not a person) finishes it
    time.sleep(max(0.0, (close - utcnow()).total_seconds()) + 1)
    from leaderboard.server.jobs.reconcile import reconcile
    with app.app_context():
        assert reconcile().challenges_finished == [BENCHMARK]
    page.goto(f"{base}/challenges/trident-like")
    expect(page.locator("#challenge-state")).to_have_text("finished")
    expect(page.locator("table.results")).to_contain_text("Ada Labs")
    visits.visit(page, "challenge-finished")
    page.goto(f"{base}/benchmarks/{BENCHMARK}/boards/detection/test")
    expect(page.locator("main")).to_contain_text("private part of the test split (revealed)")

    for path, name in (("/admin/submissions", "admin-submissions"), ("/admin/users", "admin-users"),
                       ("/admin/teams", "admin-teams"), ("/admin/audit", "admin-audit"),
                       ("/admin/benchmarks", "admin-benchmarks")):
        admin.goto(base + path)
        visits.visit(admin, name)
    me.close()
    admin_ctx.close()
    assert len(visits.pages) >= 25 and len(visits.checked) > 50, (visits.pages, len(visits.checked))


def tmp_path_test_file(pack_dir, tmp_path):
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack

    out = tmp_path / "test.random.jsonl"
    write_baseline(load_pack(pack_dir), "test", "random", out, seed=3)
    return out
