"""The re-run campaign's admin page and a re-run's submission page in Chromium (issue 37), at 1280
and 390 px: release 2 of the SynCred demo pack with two teams' scored images on release 1 (one
re-run planned, one skipped because its team opted out); the page's counts equal its JSON, it
fits the viewport and axe-core finds no WCAG A/AA violation. No container runs here (planned
rows only): tests/containers/test_reruns_e2e.py runs them."""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.server.releases_util import next_release

from .conftest import BENCHMARK, assert_accessible, assert_no_sideways_scroll

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"
WIDTHS = (1280, 390)


def _world(app, pack: Path, tmp_path: Path) -> tuple[str, int]:
    """Two teams' scored images on release 1, release 2 imported and planned; returns release
    2's key and the planned re-run's id."""
    from leaderboard.server.models import Benchmark, Submission, utcnow
    from leaderboard.server.services import accounts, benchmarks, reruns, teams
    from tests.agreements import grant_all

    data = Path(app.config["DATA_DIR"])
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        accounts.create_admin(s, email="root@example.org", display_name="Root",
                              password=PASSWORD)
        v1 = s.scalar(select(Benchmark).where(Benchmark.key == BENCHMARK))
        for name, allow in (("Ada", True), ("Bob", False)):
            user = accounts.register(s, email=f"{name.lower()}@example.org", display_name=name,
                                     password=PASSWORD)
            teams.create_team(s, user, name=f"{name} Labs with a rather long team name")
            grant_all(s, user)
            image = data / "images" / f"{name}.tar"
            image.parent.mkdir(parents=True, exist_ok=True)
            image.write_bytes(b"kept image")
            s.add(Submission(benchmark_id=v1.id, split="test", team_id=user.team_id,
                             user_id=user.id, kind="container", method_name=f"{name}Net",
                             status="scored", file_path="uploads/p.jsonl", allow_rerun=allow,
                             image_path=f"images/{name}.tar",
                             created_at=utcnow() - timedelta(days=30)))
        s.flush()
        v2 = benchmarks.import_pack(s, next_release(pack, tmp_path / "r2", release=2,
                                                    meta={"version": "2"}),
                                    data_dir=data, label_keys=app.config["LABEL_KEYS"])
        s.flush()
        [rerun] = reruns.plan(s, v2, data_dir=str(data), window=4)
        return v2.key, rerun


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_rerun_pages_fit_and_match_their_json(live, browser, syncred_pack, tmp_path):
    base, app = live.url, live.app
    key, rerun = _world(app, syncred_pack, tmp_path)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{base}/login")
    page.fill("input[name=email]", "root@example.org")
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")
    data = page.request.get(f"{base}/admin/benchmarks/{key}/reruns?format=json").json()
    assert data["counts"]["queued"] == 1 and data["counts"]["skipped"] == 1
    page.goto(f"{base}/admin/benchmarks/{key}/reruns")
    for name, n in data["counts"].items():
        expect(page.locator(f'[data-count="{name}"] strong')).to_have_text(str(n))
    expect(page.locator("#rerun-skips")).to_contain_text("team opted out")
    expect(page.locator("#rerun-runs")).to_contain_text("AdaNet")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert_no_sideways_scroll(page, "the re-runs admin page")
        assert_accessible(page, f"the re-runs admin page at {width}px")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{base}/submissions/{rerun}")
    expect(page.locator("#rerun-of")).to_contain_text("re-run of")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert_no_sideways_scroll(page, "a re-run's submission page")
        assert_accessible(page, f"a re-run's submission page at {width}px")
    context.close()
