"""An organiser's day, in Chromium (issue 21, items 5-8): the admin logs in, reads the overview,
edits a running challenge's phases, looks at the phase's board (the team's row with n and CI),
approves an agreement request; the team member then finds the decision among the notices on the
team page and dismisses it. Every page visited must fit a 390 px wide viewport (no sideways
scroll) as well as 1280 px; screenshots go to ``screenshots/organiser/``.
"""
from __future__ import annotations

import io
import re
from datetime import datetime, timedelta

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from .conftest import BENCHMARK, assert_accessible

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
WIDTHS = (1280, 390)
INTENDED = "Benchmarking our detector of AI-generated images for a paper."


def _fits(page: Page, shots, name: str) -> None:
    """No sideways scroll at either width (and a screenshot of each)."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        wide, inner = page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]")
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
        assert wide <= inner, f"{name} ({page.url}) is {wide}px wide at {width}px"
        assert_accessible(page, f"{name} ({page.url}) at {width}px")
    page.set_viewport_size({"width": 1280, "height": 900})


def _world(app, predictions) -> int:
    """The admin, Ada's team with a submission in the challenge's open phase, and Ada's pending
    signature; returns Ada's submission id."""
    from leaderboard.server.access import agreements
    from leaderboard.server.models import Benchmark, utcnow
    from leaderboard.server.services import accounts, challenges, teams, tokens

    now = utcnow()
    with app.app_context():
        db = app.extensions["lb_db"]
        with db.scope() as s:
            root = accounts.create_admin(s, email="root@example.org", display_name="Root",
                                         password=PASSWORD)
            ada = accounts.register(s, email="ada@example.org", display_name="Ada",
                                    password=PASSWORD)
            teams.create_team(s, ada, name="Ada Labs")
            bench = s.scalar(select(Benchmark).where(Benchmark.key == BENCHMARK))
            spring = challenges.create_challenge(s, root, bench, key="spring",
                                                 title="Spring challenge",
                                        phases=[
                {"name": "Warm-up", "split": "dev", "part": "all",
                 "opens_at": now - timedelta(hours=1), "closes_at": now + timedelta(hours=2)},
                {"name": "Final", "split": "test", "part": "private",
                 "opens_at": now + timedelta(hours=2), "closes_at": now + timedelta(hours=5)}])
            agreements.sign(s, ada, bench, full_name="Ada Lovelace", affiliation="Analytical",
                            role="Researcher",
                            intended_use=INTENDED, accepted=True)
            _, token = tokens.create_token(s, ada, name="cli")
            challenges.enter(s, ada, spring)
    client = app.test_client()
    resp = client.post("/api/v1/submissions", data={
        "benchmark": BENCHMARK, "split": "dev", "method_name": "Random scores",
        "challenge": "spring",
        "file": (io.BytesIO(predictions["valid"].read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"}, content_type="multipart/form-data")
    assert resp.status_code == 202, resp.get_json()
    return resp.get_json()["id"]


def _login(page: Page, base: str, email: str) -> None:
    page.goto(f"{base}/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_organiser_journey(live, browser, predictions, screenshots):
    base, app = live.url, live.app
    shots = screenshots / "organiser"
    shots.mkdir(exist_ok=True)
    sub_id = _world(app, predictions)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    admin = context.new_page()
    admin.set_default_timeout(15_000)

    # the overview
    _login(admin, base, "root@example.org")
    admin.goto(f"{base}/admin/")
    expect(admin.locator("#overview-stats")).to_contain_text("1 pending agreement request")
    expect(admin.locator("#overview-queue")).to_contain_text("jobs run inline")
    expect(admin.locator("#overview-per-day")).to_contain_text("Submissions per day")
    _fits(admin, shots, "admin-overview")

    # edit the running phase: a cap, and a later end
    admin.goto(f"{base}/admin/challenges")
    _fits(admin, shots, "admin-challenges")
    admin.click("a:has-text('Edit challenge and phases')")
    _fits(admin, shots, "admin-challenge-edit")
    admin.fill("input[name=phase0_max_submissions]", "4")
    admin.fill("input[name=phase1_closes_at]", "2000-01-01T00:00")  # before it opens: refused
    admin.click("#challenge-edit button[type=submit]")
    expect(admin.locator(".error-box")).to_contain_text("phases[1].closes_at")
    _fits(admin, shots, "admin-challenge-edit-error")
    opens = datetime.fromisoformat(admin.locator("input[name=phase1_opens_at]").input_value())
    admin.fill("input[name=phase1_closes_at]", f"{opens + timedelta(hours=6):%Y-%m-%dT%H:%M}")
    admin.click("#challenge-edit button[type=submit]")
    expect(admin.locator(".flash")).to_contain_text("phase 'Warm-up': max_submissions")

    # the challenge's page and its phase board: the team's row with n and CI
    admin.goto(f"{base}/challenges/spring")
    expect(admin.locator("#challenge-entry")).to_be_visible()  # the admin has no team
    row = admin.locator("table.board tbody tr", has_text="Ada Labs")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("n=")
    _fits(admin, shots, "challenge")
    admin.click("a:has-text('every phase')")
    expect(admin.locator("#phase-board-source")).to_contain_text("Live")
    expect(admin.locator(f"a[href='/submissions/{sub_id}']")).to_have_count(1)
    _fits(admin, shots, "challenge-phase")

    # approve Ada's request; the audit log says it in names
    admin.goto(f"{base}/admin/requests")
    _fits(admin, shots, "admin-requests")
    admin.locator("button.approve").first.click()
    expect(admin.locator(".flash")).to_contain_text("approved")
    admin.goto(f"{base}/admin/audit")
    expect(admin.locator("table.audit")).to_contain_text("version 1 of")
    _fits(admin, shots, "admin-audit")
    for name in ("users", "teams", "benchmarks", "submissions"):  # the rest of the console
        admin.goto(f"{base}/admin/{name}")
        _fits(admin, shots, f"admin-{name}")
    admin.goto(f"{base}/challenges/")
    _fits(admin, shots, "challenges")
    context.close()

    # Ada reads the notice on her team page, dismisses it; her account page fits too
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    team = context.new_page()
    team.set_default_timeout(15_000)
    _login(team, base, "ada@example.org")
    team.goto(f"{base}/team/")
    notice = team.locator(".notices li", has_text="was approved")
    expect(notice).to_have_count(1)
    expect(team.locator("#member-agreements")).to_contain_text("holds")
    _fits(team, shots, "team")
    notice.locator("button:has-text('Dismiss')").click()
    expect(team.locator(".notices li", has_text="was approved")).to_have_count(0)
    expect(team).to_have_url(re.compile(r"/team/#notices$"))
    team.goto(f"{base}/account/")
    _fits(team, shots, "account")
    context.close()
