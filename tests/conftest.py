"""Suite-wide rules.

With ``LB_REQUIRE_SERVICES=1`` (set by ``make test`` and so by CI) a test that skips for want of a
service (PostgreSQL, Redis, Docker, Chromium) fails instead: nothing is silently left untested.

Under pytest-xdist (``make test`` runs the suite on several workers) every worker gets a Redis
server of its own on a spare loopback port (``LB_TEST_REDIS_HOST``), because each test folder
flushes its Redis database number and two workers in one folder would flush each other's data.
PostgreSQL needs nothing: every session creates databases under random names.
"""
import atexit
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _spare_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_worker_redis() -> None:
    exe = shutil.which("redis-server")
    if exe is None:  # the folders' fixtures skip (or fail, under LB_REQUIRE_SERVICES) on their own
        return
    for _ in range(5):
        port = _spare_port()
        proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--databases", "32"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.02)
                continue
            os.environ["LB_TEST_REDIS_HOST"] = f"127.0.0.1:{port}"
            atexit.register(proc.kill)
            return
        proc.kill()


# At import, not in pytest_configure: pytest imports the conftests of the folders named on the
# command line before it configures, and those read LB_TEST_REDIS_HOST into module constants.
# This file (the suite's root) is always imported first.
if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("LB_TEST_REDIS_PER_WORKER", "1") == "1":
    _start_worker_redis()


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
