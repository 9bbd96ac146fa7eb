"""The dev-split error analysis page in Chromium (issue 38), at 1280 and 390 px: reached from the
team's own submission page, it shows the confusion matrix, the expected calibration error (equal
to a computation done here, by hand, from the file and the pack's labels), the reliability
diagram beside the ROC and PR curves, the slices beside the board's best, and the most confident
errors with thumbnails that load through the signed media links. It fits a phone's width and
axe-core finds no WCAG A/AA violation."""
from __future__ import annotations

import io
import json

import pytest
from playwright.sync_api import expect

from .conftest import BENCHMARK, SPLIT, _wait_scored, assert_accessible, assert_no_sideways_scroll

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery"


def _hand_ece(pack, preds_path, n_bins=10) -> float:
    with open(pack / "splits" / SPLIT / "labels.jsonl", encoding="utf-8") as fh:
        fake = {r["id"]: r["label"] == "fake" for r in map(json.loads, fh)}
    with open(preds_path, encoding="utf-8") as fh:
        score = {r["id"]: r["score"] for r in map(json.loads, fh)}
    bins = [[] for _ in range(n_bins)]
    for item, s in score.items():
        bins[min(int(s * n_bins), n_bins - 1)].append((s, fake[item]))
    total = sum(
        len(b) * abs(sum(f for _, f in b) / len(b) - sum(s for s, _ in b) / len(b))
        for b in bins if b)
    return total / len(score)


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_error_analysis_page(live, page, syncred_pack, predictions, screenshots):
    from leaderboard.server.jobs.scoring import enqueue_scoring
    from leaderboard.server.services import accounts, submissions, teams
    from tests.agreements import grant_all

    app, base = live.app, live.url
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        user = accounts.register(s, email="ea@example.org", display_name="Eva",
                                 password=PASSWORD)
        teams.create_team(s, user, name="Eva Lab")
        grant_all(s, user)  # the dev labels and media: what the per-item rows need
        sid = submissions.create_submission(
            s, user=user, benchmark=BENCHMARK, split=SPLIT,
            stream=io.BytesIO(predictions["valid"].read_bytes()),
            data_dir=app.config["DATA_DIR"], max_bytes=10 << 20, default_quota=5,
            method_name="Eva's detector").id
    with app.app_context():
        enqueue_scoring(sid)
    _wait_scored(app, [sid], None, None)

    page.goto(f"{base}/login")
    page.fill("input[name=email]", "ea@example.org")
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")
    page.goto(f"{base}/submissions/{sid}")
    page.click("#error-analysis-link")
    expect(page.locator("h1")).to_contain_text("Error analysis")

    cells = page.locator("#confusion-detection tbody td").all_inner_texts()
    assert sum(int(c) for c in cells) == 92
    ece = _hand_ece(syncred_pack, predictions["valid"])
    expect(page.locator("#ece-detection strong")).to_have_text(f"{ece:.3f}")
    assert page.locator("section.analysis svg[aria-label='detection: reliability']").count() == 1
    assert page.locator("section.analysis svg[aria-label*='ROC']").count() == 1
    assert page.locator("#slices-detection tbody tr").count() >= 2
    rows = page.locator("#errors-detection tbody tr")
    assert rows.count() > 0
    thumbs = page.locator("#errors-detection img.thumb")
    thumbs.first.scroll_into_view_if_needed()
    page.wait_for_function("() => [...document.querySelectorAll('img.thumb')].slice(0, 3)"
                           ".every(i => i.complete && i.naturalWidth > 0)")

    shots = screenshots / "error-analysis"
    shots.mkdir(exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        page.screenshot(path=str(shots / f"error-analysis-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, "error analysis")
        assert_accessible(page, f"error analysis at {width}px")
