"""The seen/unseen generators page and the detectors x generators matrix in Chromium (issue 37), at
1280 and 390 px: the UniAIDet demo pack with half of its generators dated in the future (so they
are unseen by a submission made today), two teams' uploads scored by the real scoring job; the
matrix's hover texts and table equal the API's numbers, nothing is wider than the viewport, and
axe-core finds no WCAG A/AA violation."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
import yaml
from playwright.sync_api import expect

from leaderboard.server.boards.plots import format_value

from .conftest import _wait_scored, assert_accessible, assert_no_sideways_scroll

pytestmark = pytest.mark.browser

WIDTHS = (1280, 390)
PAGE = "/benchmarks/uniaidet/boards/detection/test/generators"
API = "/api/v1/boards/uniaidet/detection/test/generators"


@pytest.fixture(scope="module")
def dated_pack(tmp_path_factory) -> Path:
    from leaderboard.demo import generate

    src = generate("uniaidet", tmp_path_factory.mktemp("src"), scale="small", seed=0)
    root = tmp_path_factory.mktemp("dated") / "uniaidet"
    shutil.copytree(src, root)
    meta = yaml.safe_load((root / "benchmark.yaml").read_text())
    for i, g in enumerate(meta["generators"]):
        g["date"] = "2999-12-31" if i % 2 else "2001-01-01"
    (root / "benchmark.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    return root


def _predictions(pack: Path, out: Path, every: int) -> Path:
    rows = [json.loads(line) for line in
            (pack / "splits" / "test" / "labels.jsonl").read_text().splitlines()]
    lines = []
    for i, r in enumerate(rows):
        fake = (r["label"] == "fake") != (i % every == 0)
        lines.append(json.dumps({"id": r["id"], "label": "fake" if fake else "real",
                                 "score": 0.9 if fake else 0.1}))
    out.write_text("\n".join(lines) + "\n")
    return out


def _seed(live, pack: Path, tmp_path: Path) -> None:
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.jobs.scoring import enqueue_scoring
    from leaderboard.server.services import accounts, benchmarks, submissions, teams
    from tests.agreements import grant_all

    app, ids = live.app, []
    with app.app_context():
        db = app.extensions["lb_db"]
        with db.scope() as s:
            benchmarks.import_pack(s, pack, data_dir=app.config["DATA_DIR"],
                                   label_keys=app.config["LABEL_KEYS"])
        for i, (team, every) in enumerate((("Ada Labs", 3), ("Bea Lab", 5))):
            pred = _predictions(pack, tmp_path / f"p{i}.jsonl", every)
            with db.scope() as s:
                user = accounts.register(s, email=f"g{i}@example.org", display_name=team,
                                         password="correct horse battery")
                teams.create_team(s, user, name=team)
                grant_all(s, user)
                ids.append(submissions.create_submission(
                    s, user=user, benchmark="uniaidet", split="test",
                    stream=io.BytesIO(pred.read_bytes()), data_dir=app.config["DATA_DIR"],
                    max_bytes=10 << 20, default_quota=5, method_name=f"{team} detector").id)
        for sid in ids:
            enqueue_scoring(sid)
    _wait_scored(app, ids, None, None)
    with app.app_context():
        invalidate_boards("uniaidet")


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_generators_page(live, page, dated_pack, screenshots, tmp_path):
    _seed(live, dated_pack, tmp_path)
    base = live.url
    view = page.request.get(f"{base}{API}").json()
    assert view["has_generators"] and len(view["rows"]) == 2
    assert any(c["unseen"] for r in view["rows"] for c in r["cells"])
    # the board links to the page and states the rule
    page.goto(f"{base}/benchmarks/uniaidet/boards/detection/test")
    page.locator("#generators-link a").click()
    expect(page.locator("h1")).to_contain_text("Seen and unseen generators")
    expect(page.locator("#generator-rule")).to_contain_text("became public")
    expect(page.locator("#matrix svg")).to_be_visible()
    for r in view["rows"]:
        row = page.locator(f'#seen-unseen tr[data-submission="{r["submission_id"]}"]')
        expect(row.locator('td[data-what="unseen"]')).to_contain_text(
            format_value(r["unseen"]["value"], "pct"))
        for c in r["cells"]:
            cell = page.locator(f'#matrix-table tr[data-submission="{r["submission_id"]}"]'
                                f'[data-generator="{c["generator"]}"] td[data-label="Value"]')
            got = cell.get_attribute("data-value")
            assert (got == "") if c["value"] is None else float(got) == pytest.approx(c["value"])
    hovers = page.locator("#matrix svg g > title").all_text_contents()
    assert len(hovers) == sum(len(r["cells"]) for r in view["rows"])
    assert sum("unseen by this submission" in t for t in hovers) == sum(
        c["unseen"] for r in view["rows"] for c in r["cells"])
    # ranked by the unseen score
    page.get_by_role("link", name="the unseen score").click()
    first = min(view["rows"], key=lambda r: -r["unseen"]["value"])
    expect(page.locator("#seen-unseen tbody tr").first).to_have_attribute(
        "data-submission", str(first["submission_id"]))
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(screenshots / f"generators-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, f"generators page at {width}px")
        assert_accessible(page, f"generators page at {width}px")
    # the board's own Seen / Unseen columns equal the API's
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{base}/benchmarks/uniaidet/boards/detection/test")
    for r in view["rows"]:
        for what in ("seen", "unseen"):
            got = page.locator(f'td[data-gen="{what}"]').nth(view["rows"].index(r))
            assert float(got.get_attribute("data-value")) == pytest.approx(r[what]["value"])
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(screenshots / f"generators-board-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, f"board with generator columns at {width}px")
        assert_accessible(page, f"board with generator columns at {width}px")
