"""Warm scoring (issue 16): a worker keeps each pack's compiled tables across jobs, reloads a
pack or labels that changed, and logs one line per job with the time of each phase."""
from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from leaderboard.server.config import REPO_ROOT
from leaderboard.server.models import Submission
from leaderboard.server.services import scoring_service as svc
from tests.server.conftest import make_config

PHASES = ("claim", "load_labels", "parse", "score", "write", "invalidate")
LINE = re.compile(r"job=score submission=(\d+) outcome=(\w+) (.*)")


def _submit(client, token, path, split="test"):
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": split, "method_name": "m",
        "file": (io.BytesIO(path.read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202, resp.json
    return resp.json["id"]


def _lines(text: str) -> list[dict]:
    out = []
    for m in LINE.finditer(text):
        fields = dict(kv.split("=", 1) for kv in m.group(3).split())
        out.append({"id": int(m.group(1)), "outcome": m.group(2), **fields})
    return out


def test_one_line_per_job_and_the_labels_stay_warm(app, client, auth, imported, baseline_files,
                                                    caplog):
    token = auth.member()
    with caplog.at_level(logging.INFO, logger="leaderboard.server.jobs.scoring"):
        ids = [_submit(client, token, baseline_files["test"]) for _ in range(2)]
        bad = _submit(client, token, baseline_files["dev"])  # dev rows under "test": invalid
    lines = _lines(caplog.text)
    assert [x["id"] for x in lines] == [*ids, bad]  # one line per job, nothing else
    first, second, invalid = lines
    assert first["outcome"] == second["outcome"] == "scored"
    for phase in (*PHASES, "total"):
        assert float(first[f"{phase}_s"]) >= 0.0, phase
    assert first["labels"] == "miss" and second["labels"] == "hit"  # jobs inline: one process
    assert int(first["records"]) > 0
    assert invalid["outcome"] == "failed" and int(invalid["problems"]) > 0
    assert "write_s" in invalid and "score_s" not in invalid


def _claim(app, sid) -> svc.Claim:
    from sqlalchemy import update

    db = app.extensions["lb_db"]
    with db.scope() as s:
        s.execute(update(Submission).where(Submission.id == sid).values(status="queued"))
    with db.scope() as s:
        return svc.claim(s, sid, data_dir=app.config["DATA_DIR"], timeout_s=60)


def test_a_changed_pack_or_new_labels_are_reloaded(app, client, auth, imported, baseline_files,
                                                   demo_packs):
    from leaderboard.server.services.benchmarks import import_pack

    token = auth.member()
    sid = _submit(client, token, baseline_files["test"])
    keys = app.config["LABEL_KEYS"]
    claim = _claim(app, sid)
    pack, labels = svc.load_tables(claim, label_keys=keys)
    assert svc.load_tables(_claim(app, sid), label_keys=keys) == (pack, labels)  # warm

    meta = Path(claim.pack_path) / "benchmark.yaml"
    doc = yaml.safe_load(meta.read_text())
    doc["title"] = "Changed on disk"
    new = meta.with_suffix(".new")
    new.write_text(yaml.safe_dump(doc))
    os.replace(new, meta)  # a new file (inode): the digest changes
    pack2, labels2 = svc.load_tables(_claim(app, sid), label_keys=keys)
    assert pack2 is not pack and pack2.title == "Changed on disk"
    assert labels2 is labels  # the labels did not change

    with app.app_context(), app.extensions["lb_db"].scope() as s:  # new ciphertext
        import_pack(s, demo_packs["syncred"], data_dir=app.config["DATA_DIR"], label_keys=keys)
    pack3, labels3 = svc.load_tables(_claim(app, sid), label_keys=keys)
    assert labels3 is not labels and len(labels3) == len(labels)
    assert pack3 is not pack2  # the import replaced the pack folder too


@pytest.fixture
def redis_config(db_url, tmp_path, redis_url):
    return make_config(db_url, tmp_path, REDIS_URL=redis_url)


@pytest.mark.parametrize("fork", [False, True], ids=["warm", "fork"])
def test_real_worker_warm_by_default(redis_config, tmp_path, demo_packs, baseline_files, fork):
    """The real worker command: warm (default) reuses the label table; ``--fork`` does not."""
    from leaderboard.server.services.benchmarks import import_pack
    from leaderboard.server.web import create_app
    from tests.server.conftest import AuthActions

    app = create_app(redis_config)
    try:
        with app.app_context(), app.extensions["lb_db"].scope() as s:
            import_pack(s, demo_packs["syncred"], data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
        client = app.test_client()
        token = AuthActions(client).member()
        ids = [_submit(client, token, baseline_files["test"]) for _ in range(3)]
        cfg = app.config
        env = {**os.environ, "DATABASE_URL": cfg["DATABASE_URL"], "REDIS_URL": cfg["REDIS_URL"],
               "DATA_DIR": cfg["DATA_DIR"], "LABEL_KEYS": ",".join(cfg["LABEL_KEYS"]),
               "SECRET_KEY": cfg["SECRET_KEY"]}
        proc = subprocess.run([sys.executable, "-m", "leaderboard", "worker", "--queues",
                               "scoring", "--burst", *(["--fork"] if fork else [])],
                              cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                              timeout=180)
        assert proc.returncode == 0, proc.stderr[-2000:]
        lines = _lines(proc.stderr + proc.stdout)
        assert sorted(x["id"] for x in lines) == ids, proc.stderr[-2000:]
        assert all(x["outcome"] == "scored" for x in lines)
        hits = [x["labels"] for x in lines]
        assert hits == (["miss"] * 3 if fork else ["miss", "hit", "hit"])
        with app.extensions["lb_db"].scope() as s:
            assert {s.get(Submission, i).status for i in ids} == {"scored"}
    finally:
        app.extensions["lb_db"].dispose()
