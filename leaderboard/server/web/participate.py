"""How to take part (issue 12): the starter kit and a sample submission per task and split.

A sample submission is a complete, valid predictions file for one task of one split (random
answers for every item id of that task), so a team sees the exact format the scorer accepts and
can upload it as a first test. It names the split's item ids, so it is gated like the split's
``items.jsonl`` (`leaderboard.server.access.gate.can_access` "items"). Files are made once per
pack version and kept under ``DATA_DIR/samples``.
"""
from __future__ import annotations

from pathlib import Path

import orjson
from flask import Blueprint, abort, current_app, render_template, send_file, url_for
from flask_login import current_user

from leaderboard.core.baselines import baseline_rows
from leaderboard.core.packs import load_pack
from leaderboard.server.access.gate import can_access, latest_request
from leaderboard.server.boards.cache import get_cache
from leaderboard.server.config import REPO_ROOT
from leaderboard.server.db import get_session
from leaderboard.server.errors import NotFound
from leaderboard.server.models import utcnow
from leaderboard.server.services import challenges
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.services.downloads import DownloadRefused

bp = Blueprint("participate", __name__)

STARTER_DIR = REPO_ROOT / "docker" / "starter"
STARTER_FILES = ("README.md", "Dockerfile", "detect.py", "requirements.txt", "make_tiny_model.py")


def participation(session, key: str) -> dict:
    """What the "Participate" box on a benchmark page says to this visitor: each step of
    sign in -> team -> agreement -> access -> download -> submit, with where they stand, the
    sample-submission links (per task and split), the format of one row, and the challenge."""
    bench = get_benchmark(session, key)
    meta = bench.meta_json or {}
    user = current_user if current_user.is_authenticated else None
    decision = can_access(session, user, bench, "items")
    req = latest_request(session, user.id, bench.id) if user is not None else None
    signed = req is not None and req.agreement_version == bench.agreement_version \
        and req.status in ("pending", "approved")
    def make_examples():
        try:
            pack = load_pack(bench.pack_path)
            return {t["key"]: example_line(pack, meta.get("splits", ["dev"])[0], t["key"])
                    for t in meta.get("tasks", [])}
        except Exception:  # noqa: BLE001 - the box still shows the steps without a format line
            return {}

    examples = get_cache().get_or_compute(bench.key, ("example_rows", bench.version),
                                          make_examples)
    now = utcnow()
    ch = challenges.covering(session, bench.id, now) or next(
        (c for c in challenges.list_challenges(session, bench)
         if c.finalized_at is None and c.phases and challenges.window(c)[0] > now), None)
    return {"user": user, "team": user.team if user is not None else None,
            "signed": signed, "request": req, "access": decision,
            "open": bench.submissions_open, "examples": examples,
            "challenge": challenges.describe(ch, now) if ch is not None else None,
            "countdown": challenges.countdown_target(ch, now) if ch is not None else None,
            "samples": [{"task": t, "split": s,
                         "url": url_for("participate.sample", key=key, split=s, task=t["key"])}
                        for s in meta.get("splits", []) for t in meta.get("tasks", [])]}


@bp.get("/starter-kit")
def starter_kit():
    import markdown
    import nh3
    from markupsafe import Markup

    readme = (STARTER_DIR / "README.md").read_text(encoding="utf-8")
    html = nh3.clean(markdown.markdown(readme, extensions=["tables", "fenced_code"]))
    return render_template("participate/starter.html", readme=Markup(html),
                           files=[f for f in STARTER_FILES if (STARTER_DIR / f).is_file()])


@bp.get("/starter-kit/<name>")
def starter_file(name: str):
    if name not in STARTER_FILES or not (STARTER_DIR / name).is_file():
        abort(404, description=f"no starter-kit file {name!r}; files: {list(STARTER_FILES)}")
    return send_file(STARTER_DIR / name, mimetype="text/plain", as_attachment=True,
                     download_name=name)


def sample_rows(pack, split: str, task: str):
    """Random but valid predictions for every item of ``task`` in ``split``."""
    task_of = pack.items(split).decoded("task")
    for i, row in enumerate(baseline_rows(pack, split, "random", seed=0)):
        if str(task_of[i]) == task:
            yield row


def example_line(pack, split: str, task: str) -> str:
    """One row of the sample with its id replaced by a placeholder (shown to everyone)."""
    for row in sample_rows(pack, split, task):
        return orjson.dumps({**row, "id": "<item id>"}).decode()
    return ""


@bp.get("/benchmarks/<key>/sample/<split>/<task>.jsonl")
def sample(key: str, split: str, task: str):
    session = get_session()
    bench = get_benchmark(session, key)
    meta = bench.meta_json or {}
    if split not in meta.get("splits", []) or task not in [t["key"] for t in
                                                           meta.get("tasks", [])]:
        raise NotFound(f"{key} has no split {split!r} or task {task!r}; splits: "
                       f"{meta.get('splits')}, tasks: {[t['key'] for t in meta.get('tasks', [])]}")
    user = current_user if current_user.is_authenticated else None
    decision = can_access(session, user, bench, "items")
    if not decision:
        raise DownloadRefused(f"a sample names the split's item ids: {decision.reason}")
    out = Path(current_app.config["DATA_DIR"]) / "samples" / \
        f"{bench.key}-{bench.version}-{bench.agreement_version[:8]}-{split}-{task}.jsonl"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        pack = load_pack(bench.pack_path)
        with open(tmp, "wb") as fh:
            for row in sample_rows(pack, split, task):
                fh.write(orjson.dumps(row) + b"\n")
        tmp.replace(out)
    return send_file(out, mimetype="application/x-ndjson", as_attachment=True,
                     download_name=f"{key}-{split}-{task}-sample.jsonl")
