"""Issue 35 in Chromium (1280 and 390 px): a participant requests an agreement with the new
fields (role and the benchmark's own question); the admin, who must use a second factor here,
signs in with a TOTP code (computed with pyotp), reads the request's identity panel with a
look-alike account flagged (same normalised Gmail address) and approves. Every page visited fits
both widths; screenshots go to ``screenshots/identity/``."""
from __future__ import annotations

from datetime import timedelta

import pyotp
import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from .conftest import BENCHMARK

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
WIDTHS = (1280, 390)


def _fits(page: Page, shots, name: str) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        wide, inner = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]")
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
        assert wide <= inner, f"{name} ({page.url}) is {wide}px wide at {width}px"
    page.set_viewport_size({"width": 1280, "height": 900})


def _world(app) -> tuple[str, int]:
    """The admin with a second factor (enrolled two minutes ago, so the current code is
    fresh), Ada, and a look-alike of Ada; the benchmark asks its own question. Returns the
    admin's TOTP secret and the look-alike's id."""
    from leaderboard.server.models import Benchmark, utcnow
    from leaderboard.server.services import accounts, two_factor

    keys = app.config["LABEL_KEYS"]
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        root = accounts.create_admin(s, email="root@example.org", display_name="Root",
                                     password=PASSWORD)
        s.flush()
        secret, _ = two_factor.begin(s, root, label_keys=keys, issuer="test")
        before = utcnow() - timedelta(minutes=2)
        two_factor.confirm(s, root, pyotp.TOTP(secret).at(before), label_keys=keys, now=before)
        accounts.register(s, email="ada.lovelace@gmail.com", display_name="Ada",
                          password=PASSWORD)
        twin = accounts.register(s, email="adalovelace+again@googlemail.com",
                                 display_name="Ada again", password=PASSWORD)
        bench = s.scalar(select(Benchmark).where(Benchmark.key == BENCHMARK))
        bench.meta_json = {**bench.meta_json, "request_fields": [
            {"key": "ethics", "label": "Ethics approval number", "required": True,
             "help": "IRB or equivalent", "max_length": 100, "multiline": False}]}
        s.flush()
        return secret, twin.id


def _login(page: Page, base: str, email: str) -> None:
    page.goto(f"{base}/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_request_then_admin_with_totp_reviews_and_approves(live, browser, screenshots):
    app, base = live.app, live.url
    app.config["ADMIN_REQUIRE_2FA"] = True
    secret, twin_id = _world(app)
    shots = screenshots / "identity"
    shots.mkdir(exist_ok=True)

    ada = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    ada.set_default_timeout(15_000)
    _login(ada, base, "ada.lovelace@gmail.com")
    ada.goto(f"{base}/data/{BENCHMARK}")
    form = ada.locator("#sign-form")
    form.locator("input[name=full_name]").fill("Ada Lovelace")
    form.locator("input[name=affiliation]").fill("Analytical Engines")
    form.locator("input[name=role]").fill("Research engineer")
    form.locator("textarea[name=intended_use]").fill(
        "Benchmarking our detector of AI-generated images for a paper.")
    form.locator("input[name=field_ethics]").fill("IRB-2026-042")
    form.locator("input[name=accept]").check()
    _fits(ada, shots, "sign-form")
    form.locator("button[type=submit]").click()
    expect(ada.locator(".flash")).to_contain_text("waiting for an administrator")

    admin = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    admin.set_default_timeout(15_000)
    _login(admin, base, "root@example.org")
    expect(admin).to_have_url(f"{base}/login/second-factor")
    _fits(admin, shots, "second-factor")
    admin.fill("input[name=code]", "000000" if pyotp.TOTP(secret).now() != "000000"
               else "111111")
    admin.click("#second-factor-form button[type=submit]")
    expect(admin.locator("#code-error")).to_contain_text("wrong code")
    admin.fill("input[name=code]", pyotp.TOTP(secret).now())
    admin.click("#second-factor-form button[type=submit]")
    expect(admin).to_have_url(f"{base}/admin/")

    admin.goto(f"{base}/admin/requests")
    admin.locator("a.review-link").first.click()
    panel = admin.locator("#identity-panel")
    expect(panel.locator("#identity-domain")).to_contain_text("free-mail domain")
    flagged = panel.locator(f"#lookalike-{twin_id}")
    expect(flagged).to_contain_text("adalovelace+again@googlemail.com")
    expect(flagged).to_contain_text("same normalised address (adalovelace@gmail.com)")
    expect(admin.locator("#answer-role")).to_have_text("Research engineer")
    expect(admin.locator(".answer-extra")).to_have_text("IRB-2026-042")
    _fits(admin, shots, "review")
    admin.click("#approve-request")
    expect(admin.locator("#request-status")).to_have_text("approved")

    ada.goto(f"{base}/data/{BENCHMARK}")
    expect(ada.locator("#granted")).to_be_visible()
    ada.context.close()
    admin.context.close()
