"""``seed-demo`` redoes only what changed (issue 33): a second run reuses the generated pack (by
the generator's digest), skips the import (by the pack's digest) and keeps the baselines; a pack
whose content changed is imported again and its earlier baselines are hidden as superseded."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from leaderboard.server.cli import server
from leaderboard.server.config import REPO_ROOT
from leaderboard.server.demo_seed import IMPORT_STAMP, SUPERSEDED
from leaderboard.server.models import Benchmark, Submission


@pytest.fixture
def db_url(sqlite_url):  # the caches are files; the database side is the import's, tested there
    return sqlite_url


def _subs(session):
    session.expire_all()
    return session.scalars(select(Submission).order_by(Submission.id)).all()


def test_a_second_run_redoes_nothing_and_a_changed_pack_is_reimported(runner, session, app):
    res = runner.invoke(server, ["seed-demo", "--only", "syncred"])
    assert res.exit_code == 0, res.output
    assert "[1/1] syncred: generating the pack ..." in res.output
    assert "scoring 4 baselines" in res.output
    first = _subs(session)
    assert len(first) == 4 and all(s.status == "scored" for s in first)
    copy = Path(session.scalar(select(Benchmark.pack_path)))
    assert (copy / IMPORT_STAMP).is_file()

    res = runner.invoke(server, ["seed-demo", "--only", "syncred"])
    assert res.exit_code == 0, res.output
    assert "pack cached" in res.output and "import current" in res.output
    assert "baselines current" in res.output
    assert [s.id for s in _subs(session)] == [s.id for s in first]

    # the generated pack's labels change (its inputs did not): imported again, new baselines
    labels = Path(app.config["DATA_DIR"]) / "demo-packs" / "syncred" / "splits" / "dev" / \
        "labels.jsonl"
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    rows[0]["label"] = "real" if rows[0]["label"] == "fake" else "fake"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = runner.invoke(server, ["seed-demo", "--only", "syncred"])
    assert res.exit_code == 0, res.output
    assert "pack cached" in res.output and "importing ..." in res.output
    assert "4 earlier baselines hidden" in res.output
    subs = _subs(session)
    assert len(subs) == 8
    old, new = subs[:4], subs[4:]
    assert all(s.hidden and s.hidden_reason == SUPERSEDED for s in old)
    assert all(not s.hidden and s.status == "scored" for s in new)

    # the generator's stamp gone: generated again, same bytes, so the import stays current
    (Path(app.config["DATA_DIR"]) / "demo-packs" / ".syncred.inputs").unlink()
    res = runner.invoke(server, ["seed-demo", "--only", "syncred"])
    assert res.exit_code == 0, res.output
    assert "generating the pack" in res.output and "importing" in res.output  # labels back
    assert "4 earlier baselines hidden" in res.output
    res = runner.invoke(server, ["seed-demo", "--only", "syncred"])
    assert "pack cached" in res.output and "import current" in res.output, res.output


def test_run_demo_makes_the_key_seeds_and_serves(tmp_path):
    """``make run``'s one process: key, schema, demo, then the server answers; a second start
    finds everything current."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "DATA_DIR": str(tmp_path / "data"),
           "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite", "COOKIE_SECURE": "0",
           "REDIS_URL": ""}
    env.pop("RECEIPT_SIGNING_KEY", None)
    env.pop("RECEIPT_KEY_DIR", None)
    outputs = []
    for _ in range(2):
        proc = subprocess.Popen([sys.executable, "-m", "leaderboard", "run-demo", "--only",
                                 "syncred", "--port", str(port)], env=env, cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                        conn.sendall(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
                        status = conn.recv(64)
                    break
                except OSError:
                    assert proc.poll() is None, proc.stdout.read()
                    time.sleep(0.3)
            else:
                raise AssertionError("run-demo did not serve within 240 s")
        finally:
            proc.terminate()
            outputs.append(proc.communicate(timeout=30)[0])
        assert status.startswith(b"HTTP/1.1 200"), status
    first, second = outputs
    assert "receipt signing key: generated" in first and "scoring 4 baselines" in first
    assert (tmp_path / "data" / "keys" / "signing.pem").is_file()
    assert "receipt signing key" not in second
    assert "pack cached" in second and "import current" in second, second
    assert "serving http://127.0.0.1:" in second


def test_uniaidet_is_seeded_as_two_releases_with_rerun_baselines(runner, session, app):
    """Issue 37, item 6: release 2 adds Qwen-Image (public after every baseline's made-at
    date); each release 2 baseline is the same detector run on release 2's items, recorded as
    the re-run of its release 1 baseline; the decay view has both releases; a second run
    redoes nothing."""
    from leaderboard.demo.two_releases import EXTRA
    from leaderboard.server.boards.decay import decay_view
    from leaderboard.server.demo_seed import DEMO_MADE_AT, DEMO_RELEASED_AT

    res = runner.invoke(server, ["seed-demo", "--only", "uniaidet"])
    assert res.exit_code == 0, res.output
    assert "releases derived" in res.output and "v2: importing" in res.output, res.output
    session.expire_all()
    rows = session.scalars(select(Benchmark).order_by(Benchmark.release)).all()
    assert [(b.key, b.family, b.release) for b in rows] == [
        ("uniaidet", "uniaidet", 1), ("uniaidet-v2", "uniaidet", 2)]
    v1, v2 = rows
    assert [b.released_at.date() for b in rows] == [d.date() for d in DEMO_RELEASED_AT.values()]
    gens = [{g["key"] for g in b.meta_json["generators"]} for b in rows]
    assert gens[1] - gens[0] == {"Qwen-Image"}
    later = next(g["date"] for g in v2.meta_json["generators"] if g["key"] == "Qwen-Image")
    assert all(later > d.date().isoformat() for d in DEMO_MADE_AT.values())
    subs = _subs(session)
    assert len(subs) == 8 and all(s.status == "scored" and s.is_baseline for s in subs)
    by = {(s.benchmark_id, s.split, s.baseline_kind): s for s in subs}
    for (bid, split, kind), s in by.items():
        if bid == v2.id:
            assert s.rerun_of_id == by[(v1.id, split, kind)].id
            assert s.file_sha256 != by[(v1.id, split, kind)].file_sha256  # run on v2's items
        else:
            assert s.rerun_of_id is None and s.created_at.date() == DEMO_MADE_AT[kind].date()
    # release 2 = release 1 + 3 + EXTRA Qwen-Image images per domain (photo, art)
    count = {b.key: sum(len(Path(b.pack_path, "splits", sp, "items.jsonl").read_text()
                            .splitlines()) for sp in ("dev", "test")) for b in rows}
    assert count["uniaidet-v2"] - count["uniaidet"] == 2 * (3 + EXTRA)
    with app.app_context():
        view = decay_view(session, benchmark_key="uniaidet", task="detection", split="test")
    assert [r["release"] for r in view["releases"]] == [1, 2]
    assert sorted(ln["method_name"] for ln in view["lines"]) == [
        "Baseline: all-fake", "Baseline: random"]
    assert all([p["release"] for p in ln["points"]] == [1, 2] for ln in view["lines"])

    res = runner.invoke(server, ["seed-demo", "--only", "uniaidet"])
    assert res.exit_code == 0, res.output
    assert res.output.count("import current") == 2 and "releases derived" not in res.output
    assert [s.id for s in _subs(session)] == [s.id for s in subs]
