"""Accounts a person can recover, in a real browser at 1280 and 390 px (issue 35), on the
embedded default (no SMTP server: messages are kept in the outbox for admins): register, an
admin opens the message on the Outbox page and the newcomer follows its verification link;
"Forgot your password", the reset link from the outbox, the new password; the API token made
before the reset is refused afterwards. CSRF and rate limits on, as in production."""
from __future__ import annotations

import re
import threading
import uuid

import pytest
from cryptography.fernet import Fernet
from playwright.sync_api import Page, expect
from werkzeug.serving import make_server

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a brand new secret phrase"
ADMIN = "root@example.org"


@pytest.fixture
def site(tmp_path):
    from leaderboard.server.cli import upgrade_database
    from leaderboard.server.services import accounts
    from leaderboard.server.web import create_app

    cfg = {"DATABASE_URL": f"sqlite:///{tmp_path / 'lb.db'}", "DATA_DIR": str(tmp_path / "d"),
           "SECRET_KEY": "mail-" + uuid.uuid4().hex, "LABEL_KEYS": Fernet.generate_key().decode(),
           "COOKIE_SECURE": "0", "REDIS_URL": "", "SMTP_HOST": ""}
    upgrade_database(cfg["DATABASE_URL"])
    app = create_app(cfg)
    assert app.config["REQUIRE_VERIFIED_EMAIL"] and not app.config["SMTP_HOST"]
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        accounts.create_admin(s, email=ADMIN, display_name="root", password=PASSWORD)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_port}"
    app.config["PUBLIC_URL"] = base  # links in mail point at this server
    yield base
    server.shutdown()
    thread.join(10)
    server.server_close()
    app.extensions["lb_db"].dispose()


def _log_in(page: Page, base: str, email: str, password: str) -> None:
    page.goto(f"{base}/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    page.click("main form button[type=submit]")


def _link_from_outbox(admin: Page, base: str, subject: str, shot) -> str:
    """The admin opens the newest message with ``subject`` and reads its link."""
    admin.goto(f"{base}/admin/outbox")
    expect(admin.locator("main")).to_contain_text("No SMTP server is configured")
    shot(admin, f"outbox-{subject.split()[0].lower()}")
    admin.locator("table.outbox a", has_text=subject).first.click()
    expect(admin.locator("h1")).to_contain_text(subject)
    return admin.locator("#mail-body a[href^='http']").first.get_attribute("href")


@pytest.mark.parametrize("width", [1280, 390])
def test_register_verify_forget_reset_and_the_old_token_is_refused(browser, site, width,
                                                                   screenshots):
    out = screenshots / "mail"
    out.mkdir(exist_ok=True)

    def shot(p: Page, name: str) -> None:
        p.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)

    viewport = {"width": width, "height": 900}
    ada_ctx, admin_ctx = browser.new_context(viewport=viewport), browser.new_context(
        viewport=viewport)
    ada, admin = ada_ctx.new_page(), admin_ctx.new_page()
    try:
        ada.goto(f"{site}/register")
        ada.fill("input[name=email]", "ada@example.org")
        ada.fill("input[name=display_name]", "Ada")
        ada.fill("input[name=password]", PASSWORD)
        ada.click("main form button[type=submit]")
        expect(ada.locator(".flash")).to_contain_text("follow it to verify your address")
        create = ada.locator("form[action$='/team/create']")
        create.locator("input[name=name]").fill("Ada Labs")
        create.locator("button[type=submit]").click()
        ada.fill("form[action$='/team/tokens'] input[name=name]", "laptop")
        ada.click("form[action$='/team/tokens'] button[type=submit]")
        token = ada.locator("#new-token").inner_text().strip()
        ada.goto(f"{site}/account/")
        expect(ada.locator("#verify-banner")).to_contain_text("Verify your address")
        shot(ada, "unverified")

        _log_in(admin, site, ADMIN, PASSWORD)
        link = _link_from_outbox(admin, site, "Confirm your address", shot)
        assert link.startswith(f"{site}/verify-email/")
        ada.goto(link)
        expect(ada.locator("h1")).to_have_text("Address verified")
        ada.goto(f"{site}/account/")
        expect(ada.locator("#verify-banner")).to_have_count(0)
        expect(ada.locator("main")).to_contain_text("revokes every API token")
        toggle = ada.locator("header button.menu-toggle")
        if toggle.is_visible():  # on a phone the header's links sit behind its Menu button
            toggle.click()
        ada.click("header form[action$='/logout'] button")

        ada.goto(f"{site}/login")
        ada.click("text=Forgot your password?")
        ada.fill("input[name=email]", "ada@example.org")
        ada.click("main form button[type=submit]")
        expect(ada.locator("#forgot-answer")).to_contain_text("If an account uses that address")
        shot(ada, "forgot")
        link = _link_from_outbox(admin, site, "Reset your password", shot)
        ada.goto(link)
        expect(ada.locator("main")).to_contain_text("revokes every API token")
        ada.fill("input[name=new_password]", NEW_PASSWORD)
        ada.fill("input[name=confirm_password]", NEW_PASSWORD)
        shot(ada, "reset")
        ada.click("main form button[type=submit]")
        expect(ada).to_have_url(re.compile(r"/login$"))
        expect(ada.locator(".flash")).to_contain_text("1 API token(s) revoked")
        refused = ada.request.get(f"{site}/api/v1/submissions?mine=1",
                                  headers={"Authorization": f"Bearer {token}"})
        assert refused.status == 401
        ada.goto(link)  # the link worked once
        expect(ada.locator("main")).to_contain_text("already used")
        _log_in(ada, site, "ada@example.org", NEW_PASSWORD)
        expect(ada.locator("header")).to_contain_text("Log out (Ada)")
    finally:
        ada_ctx.close()
        admin_ctx.close()
