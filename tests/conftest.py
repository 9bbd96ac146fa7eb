"""Suite-wide rules.

With ``LB_REQUIRE_SERVICES=1`` (set by ``make test`` and so by CI) a test that skips for want of a
service (PostgreSQL, Redis, Docker, Chromium) fails instead: nothing is silently left untested.
"""
import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("LB_REQUIRE_SERVICES") == "1" \
            and "xfail" not in report.keywords:
        report.outcome = "failed"
        report.longrepr = f"skipped while LB_REQUIRE_SERVICES=1: {report.longrepr}"


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium (Debian's, driven by Playwright) for the whole session.

    Playwright's sync API allows one running instance per thread, so every browser test shares
    this one and opens its own contexts.
    """
    if not CHROMIUM.exists():
        pytest.skip(f"needs {CHROMIUM} (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=CHROMIUM_ARGS)
        yield browser
        browser.close()
