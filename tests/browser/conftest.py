"""A real server for the browser: the app on a fresh SQLite database built by Alembic (``upgrade
head``, as ``make run`` does), served by werkzeug in a thread on a free loopback port, with the
SynCred demo pack imported and two baselines (random, all-fake) scored on its dev split.

``live`` is parametrized over how jobs run: ``inline`` (no REDIS_URL, the embedded default) and
``redis`` (Redis db 12 and a real ``python -m leaderboard worker --queues scoring`` process started
here and stopped by its pid). CSRF and rate limits stay on as in production; only the Secure
cookie flag is off because the test speaks plain http.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from werkzeug.serving import make_server

from leaderboard.server.config import REPO_ROOT
from tests.redis_db import redis_test_url

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
REDIS_URL = os.environ.get("LB_BROWSER_REDIS") or redis_test_url(12)
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
BENCHMARK = "syncred"
SPLIT = "dev"
#: seconds a baseline may take to be scored before the fixture gives up (worker start included)
SCORED_WITHIN_S = 60


@dataclass(frozen=True)
class Live:
    url: str
    mode: str  # "inline" | "redis"
    app: object


@pytest.fixture(scope="session")
def syncred_pack(tmp_path_factory) -> Path:
    from leaderboard.demo import generate

    return generate(BENCHMARK, tmp_path_factory.mktemp("packs"), scale="small", seed=0)


@pytest.fixture(scope="session")
def predictions(syncred_pack, tmp_path_factory) -> dict[str, Path]:
    """``valid``: the random baseline for the dev split (seed 1, so it differs from the board's
    own random baseline); ``invalid``: the same file with line 3's score out of range."""
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack

    out = tmp_path_factory.mktemp("preds")
    valid = out / "dev.random.jsonl"
    write_baseline(load_pack(syncred_pack), SPLIT, "random", valid, seed=1)
    lines = valid.read_text().splitlines()
    row = json.loads(lines[2])
    row["score"] = 1.7
    lines[2] = json.dumps(row)
    invalid = out / "dev.invalid.jsonl"
    invalid.write_text("\n".join(lines) + "\n")
    return {"valid": valid, "invalid": invalid}


def _redis_or_skip():
    import redis

    conn = redis.Redis.from_url(REDIS_URL)
    try:
        conn.ping()
    except redis.exceptions.ConnectionError:
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    return conn


def _start_worker(env: dict, log_path: Path) -> subprocess.Popen:
    log = open(log_path, "wb")  # noqa: SIM115 - closed with the process below
    proc = subprocess.Popen([sys.executable, "-m", "leaderboard", "worker", "--queues", "scoring"],
                            cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    proc._lb_log = log  # type: ignore[attr-defined]
    return proc


def _stop_worker(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # RQ's warm shutdown
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    proc._lb_log.close()  # type: ignore[attr-defined]


def _wait_scored(app, ids: list[int], worker: subprocess.Popen | None, log: Path | None) -> None:
    from sqlalchemy import select

    from leaderboard.server.models import Submission

    deadline = time.monotonic() + SCORED_WITHIN_S
    while True:
        with app.app_context(), app.extensions["lb_db"].scope() as s:
            states = dict(s.execute(select(Submission.id, Submission.status)
                                    .where(Submission.id.in_(ids))).all())
        if all(v == "scored" for v in states.values()):
            return
        if any(v == "failed" for v in states.values()) or time.monotonic() > deadline or (
                worker is not None and worker.poll() is not None):
            tail = log.read_text()[-3000:] if log is not None and log.exists() else ""
            pytest.fail(f"baselines not scored: {states}\nworker log:\n{tail}")
        time.sleep(0.2)


def _seed(app, pack: Path) -> list[int]:
    """Import the pack and queue the random and all-fake baselines of its dev split."""
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.jobs.scoring import enqueue_scoring
    from leaderboard.server.services import benchmarks, submissions

    data_dir = Path(app.config["DATA_DIR"])
    ids = []
    with app.app_context():
        db = app.extensions["lb_db"]
        with db.scope() as s:
            benchmarks.import_pack(s, pack, data_dir=data_dir, label_keys=app.config["LABEL_KEYS"])
        invalidate_boards(BENCHMARK)
        loaded = load_pack(pack)
        for kind in ("random", "all-fake"):
            pred = data_dir / "baselines" / f"{SPLIT}.{kind}.jsonl"
            write_baseline(loaded, SPLIT, kind, pred, seed=0)
            with db.scope() as s:
                ids.append(submissions.create_baseline(s, benchmark=BENCHMARK, split=SPLIT,
                                                       kind=kind, source=pred,
                                                       data_dir=data_dir).id)
        for sid in ids:
            enqueue_scoring(sid)
    return ids


@pytest.fixture(params=["inline", "redis"])
def live(request, syncred_pack, tmp_path):
    from leaderboard.server.cli import upgrade_database
    from leaderboard.server.services.scoring_service import clear_caches
    from leaderboard.server.web import create_app

    mode = request.param
    conn = _redis_or_skip() if mode == "redis" else None
    if conn is not None:
        conn.flushdb()
    env_cfg = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'lb.db'}",
        "DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": "browser-" + uuid.uuid4().hex,
        "LABEL_KEYS": Fernet.generate_key().decode(),
        "COOKIE_SECURE": "0",
        "REDIS_URL": REDIS_URL if mode == "redis" else "",
        # these journeys predate verified addresses (issue 35): test_account_mail.py walks
        # the verification link with the gate on
        "REQUIRE_VERIFIED_EMAIL": "0",
    }
    upgrade_database(env_cfg["DATABASE_URL"])
    clear_caches()
    app = create_app(env_cfg)
    worker = log = None
    if mode == "redis":
        log = tmp_path / "worker.log"
        env = {**os.environ, **env_cfg, "PYTHONPATH": str(REPO_ROOT)}
        worker = _start_worker(env, log)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _wait_scored(app, _seed(app, syncred_pack), worker, log)
        yield Live(f"http://127.0.0.1:{server.server_port}", mode, app)
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()
        if worker is not None:
            _stop_worker(worker)
        if conn is not None:
            conn.flushdb()
            conn.close()
        app.extensions["lb_db"].dispose()


@pytest.fixture(scope="session")
def browser(chromium):
    return chromium


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    p = context.new_page()
    p.set_default_timeout(15_000)
    yield p
    context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS


# -- accessibility and layout checks shared by the browser tests ---------------------------------
#: axe-core, installed from npm (pinned) by scripts/start-services.sh into the git-ignored cache
AXE = REPO_ROOT / ".cache" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_violations(page, exclude: tuple[str, ...] = ()) -> list[dict]:
    """axe-core's WCAG 2.0/2.1 A and AA violations on the page as it is now (id, impact, help,
    node count, the first targets). The script is evaluated through the DevTools protocol, so
    the page's Content-Security-Policy stays as production sends it."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `bash scripts/start-services.sh` (it installs "
                    "axe-core from npm)")
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate("src => { (0, eval)(src); }", AXE.read_text())
    result = page.evaluate("""([tags, exclude]) => axe.run(
        exclude.length ? {include: [document], exclude: exclude.map(s => [s])} : document,
        {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']}).then(r => r.violations.map(v => ({id: v.id,
        impact: v.impact, help: v.help, nodes: v.nodes.length,
        targets: v.nodes.slice(0, 4).map(n => n.target.join(' '))})))""",
                           [AXE_TAGS, list(exclude)])
    return result


def assert_accessible(page, what: str, *, exclude: tuple[str, ...] = ()) -> None:
    """No WCAG 2.0/2.1 A or AA violation that axe-core finds on the page as it is now, outside
    the ``exclude`` selectors (third-party widgets: Swagger UI on the API reference)."""
    result = axe_violations(page, exclude)
    assert not result, f"{what}: axe-core finds WCAG A/AA violations: {result}"


def assert_no_sideways_scroll(page, what: str) -> None:
    """At the current viewport width: neither the page nor any table wrapper scrolls sideways,
    and no element sticks out of the viewport."""
    width = page.viewport_size["width"]
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{what} is {wide}px wide at {width}px"
    inner = page.evaluate("""() => [...document.querySelectorAll('.table-scroll')]
        .filter(e => e.scrollWidth > e.clientWidth + 1)
        .map(e => (e.querySelector('table') || e).className + ' ' + e.scrollWidth)""")
    assert not inner, f"{what} at {width}px: a table scrolls sideways: {inner}"
    # clipped to nothing (visually hidden, as a stacked table's head): not on the screen
    out = page.evaluate("""w => [...document.querySelectorAll('body *')]
        .filter(e => e.getClientRects().length)
        .filter(e => { for (let a = e; a; a = a.parentElement) {
            const c = getComputedStyle(a).clip;
            if (c && c !== 'auto' && c.replace(/[^1-9]/g, '') === '') return false; }
            return true; })
        .filter(e => e.getBoundingClientRect().right > w + 0.5)
        .map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''))""", width)
    assert not out, f"{what} at {width}px: wider than the viewport: {out[:8]}"
