"""The full flow in a real browser against a real server thread: a user signs, an admin
approves (second browser context), the user downloads the dev split; the admin revokes and the
next download is refused. CSRF protection is on, as in production."""
from __future__ import annotations

import io
import threading
import zipfile
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from leaderboard.server.services import accounts

from ..conftest import make_config
from .conftest import PASSWORD

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")]


@pytest.fixture
def app_config(sqlite_url, tmp_path):
    return make_config(sqlite_url, tmp_path, WTF_CSRF_ENABLED=True)


@pytest.fixture
def live(app, imported):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        for email, admin in (("ada@example.org", False), ("root@example.org", True)):
            accounts.register(s, email=email, display_name=email.split("@")[0],
                              password=PASSWORD, is_admin=admin)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=10)
    server.server_close()


@pytest.fixture
def browser(chromium):
    return chromium


def _login(browser, base: str, email: str):
    page = browser.new_context(accept_downloads=True).new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{base}/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    return page


def test_sign_approve_download_revoke(live, browser, imported):
    user = _login(browser, live, "ada@example.org")
    user.goto(f"{live}/data/{imported}")
    user.fill("#sign-form input[name=full_name]", "Ada Lovelace")
    user.fill("#sign-form input[name=affiliation]", "Analytical Engines Ltd")
    user.fill("#sign-form input[name=role]", "Researcher")
    user.fill("#sign-form textarea[name=intended_use]",
              "Evaluating our detector on the dev split before submitting.")
    user.check("#sign-form input[name=accept]")
    user.click("#sign-form button[type=submit]")
    assert "waiting for an administrator" in user.inner_text("#access-state")

    admin = _login(browser, live, "root@example.org")
    admin.on("dialog", lambda d: d.accept())  # destructive actions ask to confirm (issue 12)
    admin.goto(f"{live}/admin/requests")
    admin.click("tr[id^=request-] button.approve")
    assert "approved" in admin.inner_text("main")

    user.reload()
    assert "Access granted" in user.inner_text("#access-state")
    link = user.get_attribute("#dl-dev-archive-labels", "href")
    with user.expect_download() as info:
        user.click("#dl-dev-archive-labels")
    archive = zipfile.ZipFile(io.BytesIO(Path(info.value.path()).read_bytes()))
    assert {"syncred-dev/benchmark.yaml", "syncred-dev/splits/dev/items.jsonl",
            "syncred-dev/splits/dev/labels.jsonl"} <= set(archive.namelist())

    admin.goto(f"{live}/admin/requests?status=approved")
    admin.fill("tr[id^=request-] input[name=reason]", "misuse reported by the authors")
    admin.click("tr[id^=request-] button.revoke")
    assert "revoked" in admin.inner_text("main")

    refused = user.request.get(f"{live}{link}")
    assert refused.status == 403
    assert "misuse reported" in refused.text()
    user.goto(f"{live}/data/{imported}")
    assert "misuse reported" in user.inner_text("#access-state")
    assert user.locator("#dl-dev-archive-labels").count() == 0
