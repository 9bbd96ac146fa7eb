"""Modality boards in Chromium at 1280 and 390 px (issue 33 item 1) on the demo data: the
index `/modalities`, and each board of the image modality on the dev and test splits, with
numbers checked against a case computed by hand here.

The case: SynCred (TPR(5), chance 5%) and UniAIDet (accuracy, chance 50%) are both image
detection. "Ada Labs" uploads a perfect SynCred file (TPR(5) = 1 -> normalised 1) and a
UniAIDet file with 13 of its 65 dev labels flipped (accuracy 52/65 = 0.8 -> (0.8 - 0.5) / 0.5
= 0.6): mean 0.8 over 2 of 2 tasks, ranked 1st. "Bea Lab" uploads only the perfect SynCred file:
mean 1.0 but 1 of 2 tasks, so listed below Ada, unranked. Both are dev-only teams: they are on
the dev board and not on the test board. The SynCred baselines (random, all-fake, seeded by the
fixture on dev) show their means: (TPR(5) - 0.05) / 0.95 of their own SynCred cell. Every page
passes axe-core (WCAG 2.0/2.1 A and AA) and scrolls sideways at neither width.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import SPLIT, _wait_scored, assert_accessible, assert_no_sideways_scroll

pytestmark = pytest.mark.browser

WIDTHS = (1280, 390)
FLIPPED = 13  # of UniAIDet's 65 dev items


def _predictions(pack: Path, out: Path, flip: int) -> Path:
    """Detection predictions from the dev labels, the first ``flip`` rows answered wrong."""
    rows = [json.loads(line) for line in
            (pack / "splits" / SPLIT / "labels.jsonl").read_text().splitlines()]
    lines = []
    for i, r in enumerate(rows):
        fake = (r["label"] == "fake") != (i < flip)
        lines.append(json.dumps({"id": r["id"], "label": "fake" if fake else "real",
                                 "score": 1.0 if fake else 0.0}))
    out.write_text("\n".join(lines) + "\n")
    return out


def _seed(live, syncred: Path, uniaidet: Path, tmp_path: Path) -> None:
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.jobs.scoring import enqueue_scoring
    from leaderboard.server.services import accounts, benchmarks, submissions, teams

    app = live.app
    files = {"syncred": _predictions(syncred, tmp_path / "syncred.jsonl", 0),
             "uniaidet": _predictions(uniaidet, tmp_path / "uniaidet.jsonl", FLIPPED)}
    ids = []
    with app.app_context():
        db = app.extensions["lb_db"]
        with db.scope() as s:
            benchmarks.import_pack(s, uniaidet, data_dir=app.config["DATA_DIR"],
                                   label_keys=app.config["LABEL_KEYS"])
        for i, (team, keys) in enumerate((("Ada Labs", ("syncred", "uniaidet")),
                                          ("Bea Lab", ("syncred",)))):
            with db.scope() as s:
                user = accounts.register(s, email=f"m{i}@example.org", display_name=team,
                                         password="correct horse battery")
                teams.create_team(s, user, name=team)
                for key in keys:
                    ids.append(submissions.create_submission(
                        s, user=user, benchmark=key, split=SPLIT,
                        stream=io.BytesIO(files[key].read_bytes()),
                        data_dir=app.config["DATA_DIR"], max_bytes=10 << 20, default_quota=5,
                        method_name=f"{team} on {key}").id)
        for sid in ids:
            enqueue_scoring(sid)
    _wait_scored(app, ids, None, None)
    with app.app_context():
        for key in ("syncred", "uniaidet"):
            invalidate_boards(key)


def _baseline_values(page, base: str) -> dict[str, float]:
    """The SynCred dev board's baseline TPR(5) values, as its API serves them."""
    body = page.request.get(f"{base}/api/v1/boards/syncred/detection/{SPLIT}").json()
    rows = body["rows"] + body.get("baselines", [])
    return {r["baseline_kind"]: r["values"]["tpr_at_fpr_5"]["value"] for r in rows
            if r.get("baseline_kind")}


def _check_widths(page, name: str, shots: Path) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        header = page.locator("header.site-header").bounding_box()["height"]
        assert header < 60, f"{name}: the header is {header:.0f}px tall at {width}px"
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
        assert_no_sideways_scroll(page, name)
        assert_accessible(page, f"{name} at {width}px")
    page.set_viewport_size({"width": 1280, "height": 900})


@pytest.fixture(scope="module")
def uniaidet_pack(tmp_path_factory) -> Path:
    from leaderboard.demo import generate

    return generate("uniaidet", tmp_path_factory.mktemp("packs"), scale="small", seed=0)


@pytest.mark.parametrize("live", ["inline"], indirect=True)
def test_modality_boards(live, page, syncred_pack, uniaidet_pack, screenshots, tmp_path):
    base = live.url
    shots = screenshots / "modality"
    shots.mkdir(exist_ok=True)
    _seed(live, syncred_pack, uniaidet_pack, tmp_path)
    baselines = _baseline_values(page, base)
    assert set(baselines) == {"random", "all-fake"}

    assert page.request.get(f"{base}/favicon.ico").status == 200

    # the index: every modality and kind with its leader; the breadcrumb leads back to it
    page.goto(f"{base}/modalities")
    card = page.locator("#modality-image")
    detection = card.locator("li.kind-detection")
    expect(detection.locator("[data-split=dev]")).to_contain_text("leader Ada Labs 0.800")
    expect(detection.locator("[data-split=dev]")).to_contain_text("2 tasks · 2 teams, 1 with all tasks")
    expect(detection.locator("[data-split=test]")).to_contain_text("no team ranked yet")
    _check_widths(page, "index", shots)
    # the home page's modality cards show the same numbers
    page.goto(base + "/")
    expect(page.locator("#modality-image li.kind-detection [data-split=dev]")).to_contain_text(
        "leader Ada Labs 0.800")
    _check_widths(page, "home", shots)

    # the dev board, reached from the index
    page.goto(f"{base}/modalities")
    detection.locator("[data-split=dev] a.split").click()
    expect(page.locator("h1")).to_contain_text("image: Detection")
    rows = page.locator("table.modality tbody tr")
    ada, bea = rows.filter(has_text="Ada Labs"), rows.filter(has_text="Bea Lab")
    expect(rows.first).to_contain_text("Ada Labs")
    expect(ada.locator("td").nth(0)).to_have_text("1 (1)")
    expect(ada.locator(".mean")).to_have_text("0.800")
    expect(ada.locator(".ci")).to_have_count(1)  # the bootstrap interval of the mean
    expect(ada.locator("td.coverage")).to_have_text("2 of 2")
    expect(bea.locator("td").nth(0)).to_have_text("—")
    expect(bea.locator(".mean")).to_have_text("1.000")
    expect(bea.locator("td.coverage")).to_have_text("1 of 2")
    for kind, tpr in baselines.items():
        row = rows.filter(has=page.locator(".badge", has_text=kind))
        expect(row.locator("td").nth(0)).to_have_text("ref")
        expect(row.locator(".mean")).to_have_text(f"{(tpr - 0.05) / 0.95:.3f}")
        expect(row.locator("td.coverage")).to_have_text("1 of 2")
    norm = page.locator("ul.norm")
    expect(norm).to_contain_text("chance 5.0%")
    expect(norm).to_contain_text("chance 50.0%")
    expect(page.locator("p.rule").first).to_contain_text("chance is 0 and perfect is 1")
    expect(page.locator(".crumbs a", has_text="Modality boards")).to_have_attribute(
        "href", "/modalities")
    _check_widths(page, "detection-dev", shots)

    # on a phone the header is one line; its Menu button opens the links
    page.set_viewport_size({"width": 390, "height": 900})
    expect(page.locator("header a", has_text="Challenges")).to_be_hidden()
    page.locator("header button.menu-toggle").click()
    expect(page.locator("header a", has_text="Challenges")).to_be_visible()
    assert_accessible(page, "the header's menu, open")
    page.set_viewport_size({"width": 1280, "height": 900})

    # the same rows as CSV
    csv_text = page.request.get(f"{base}/api/v1/modalities/image/detection.csv?split=dev").text()
    first = next(csv.DictReader(io.StringIO(csv_text)))
    assert (first["rank"], first["rank_low"], first["team"], first["tasks_covered"]) == (
        "1", "1", "Ada Labs", "2")
    assert float(first["mean_score"]) == pytest.approx(0.8)
    assert float(first["mean_ci_low"]) < 0.8 < float(first["mean_ci_high"])

    # the test split: the dev-only teams are not on it
    page.locator("nav.switchers a", has_text="test").click()
    expect(page.locator("main")).not_to_contain_text("Ada Labs")
    expect(page.locator("p.empty")).to_contain_text("No scored public entries")
    _check_widths(page, "detection-test", shots)

    # a task board with seven metric columns: three by default, fitting 1280 px without a
    # sideways scroll; the column chooser shows any others (then the table may scroll)
    page.goto(f"{base}/benchmarks/syncred/boards/detection/{SPLIT}")
    expect(page.locator("table.board thead th")).to_have_count(3 + 4)  # rank, team, method, 3, submitted
    expect(page.locator("p.legend").first).to_contain_text("95% rank interval")
    _check_widths(page, "task-board", shots)
    chooser = page.locator("details.col-chooser")
    chooser.locator("summary").click()
    extra = chooser.locator("input:not(:checked)").first
    name, metric = extra.locator("xpath=..").inner_text().strip(), extra.get_attribute("value")
    extra.check()
    page.locator("form.filter button[type=submit]").click()
    expect(page.locator("table.board thead th", has_text=name)).to_have_count(1)
    expect(page.locator("table.board thead th")).to_have_count(4 + 4)
    assert f"col={metric}" in page.url

    # command blocks wrap on a phone instead of hiding their end behind a scroll
    page.goto(f"{base}/benchmarks/syncred")
    page.locator("details.fold summary").first.click()
    page.set_viewport_size({"width": 390, "height": 900})
    clipped = page.evaluate("""() => [...document.querySelectorAll('pre')]
        .filter(p => p.getClientRects().length && p.scrollWidth > p.clientWidth + 1).length""")
    assert page.locator("pre").count() and clipped == 0
    _check_widths(page, "benchmark", shots)

    # every other board of the modality renders and passes the same checks
    page.goto(f"{base}/modalities/image")
    links = page.locator("li[class^=kind-] > a")
    for href in [links.nth(i).get_attribute("href") for i in range(links.count())]:
        page.goto(base + href)
        expect(page.locator("h1")).to_be_visible()
        _check_widths(page, href.rsplit("/", 1)[-1], shots)
