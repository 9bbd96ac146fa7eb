"""Suite-wide rules.

With ``LB_REQUIRE_SERVICES=1`` (set by ``make test`` and so by CI) a test that skips for want of a
service (PostgreSQL, Redis, Docker, Chromium) fails instead: nothing is silently left untested.
"""
import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("LB_REQUIRE_SERVICES") == "1" \
            and "xfail" not in report.keywords:
        report.outcome = "failed"
        report.longrepr = f"skipped while LB_REQUIRE_SERVICES=1: {report.longrepr}"
