"""Re-runs on a new release end to end (issue 37), with the real Docker engine and real workers.

Two teams' detector images (busybox ``FROM scratch``, answers baked in, each writes the answers
of the ids its ``/input`` holds) are scored on release 1 of UniAIDet's demo pack (headline:
accuracy; every generator it names public by mid-2025). Release 2 adds fakes of a new generator
(``SeedDream``, dated 2025-10-01 here) and matching reals, and is imported with ``python -m
leaderboard import-pack``: both detectors are re-run on it by the worker, with no team action,
while a worker killed mid re-run leaves one record per (submission, release). The originals are
dated 2025-09-01 (the detectors were made then), so the new generator is unseen for the re-runs
although they ran after it became public. Release
1's board is unchanged byte for byte; release 2's board and seen/unseen columns equal counts
computed here from the labels. Release 3 is imported through the admin page with a window of
one; the admin sets a budget of one run: one runs, the other is skipped "over budget", and the
page says the campaign stopped there.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from sqlalchemy import func, select, update
from werkzeug.test import EnvironBuilder

from harness import reap
from leaderboard.server.config import REPO_ROOT
from leaderboard.server.models import Benchmark, Score, Submission, User, utcnow
from leaderboard.server.services import accounts, benchmarks, reruns
from tests.containers.conftest import LIMITS, run_worker
from tests.harness.images.build import build_script_image, save_image
from tests.production.conftest import crash, wait_for
from tests.redis_db import clean_redis_db, redis_test_url
from tests.server.releases_util import next_release

REDIS_URL = os.environ.get("LB_TEST_REDIS_RERUNS") or redis_test_url(15)
NEW = {"key": "SeedDream", "name": "SeedDream", "modality": "image", "date": "2025-10-01"}
MADE = datetime(2025, 9, 1, tzinfo=timezone.utc)  # when the two detectors were submitted


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _release_two(v1: Path, dest: Path) -> Path:
    """Release 2 as an organiser makes it: every item of release 1 unchanged, plus, per split,
    copies (new ids, same media) of 30 holistic fakes relabelled as the new generator's and of
    20 reals; the generators table gains the new generator."""
    shutil.copytree(v1, dest, ignore=shutil.ignore_patterns(".cache"))
    meta = yaml.safe_load((dest / "benchmark.yaml").read_text())
    meta.update(release=2, version="2", generators=meta["generators"] + [NEW])
    (dest / "benchmark.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    for split_dir in sorted((dest / "splits").iterdir()):
        items, labels = _rows(split_dir / "items.jsonl"), _rows(split_dir / "labels.jsonl")
        by_id = {r["id"]: r for r in items}
        fakes = [r for r in labels if r["label"] == "fake" and r.get("family") == "text-to-image"
                 and "mask" not in r][:30]
        reals = [r for r in labels if r["label"] == "real"][:20]
        new_items, new_labels = [], []
        for r in fakes + reals:
            new_items.append({**by_id[r["id"]], "id": "n-" + r["id"]})
            new_labels.append({**r, "id": "n-" + r["id"],
                               **({"generator": NEW["key"]} if r["label"] == "fake" else {})})
        _write(split_dir / "items.jsonl", items + new_items)
        _write(split_dir / "labels.jsonl", labels + new_labels)
    return dest


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    """Releases 1 (UniAIDet's demo pack), 2 (+ the new generator) and 3 (more of the same)."""
    from leaderboard.demo import generate

    root = tmp_path_factory.mktemp("releases")
    v1 = generate("uniaidet", root / "src", scale="small", seed=0)
    v2 = _release_two(v1, root / "v2")
    v3 = next_release(v2, root / "v3", release=3, add=10, prefix="m", meta={"version": "3"})
    return {1: v1, 2: v2, 3: v3}


def _flags(packs) -> dict[str, set[str]]:
    """The fakes each detector calls fake (it calls everything else real): alpha every fake of
    release 1's generators and the first half of the new generator's (by id); beta every other
    one of release 1's and every one of the new generator's."""
    labels = _rows(packs[3] / "splits" / "test" / "labels.jsonl")
    fakes = [r for r in labels if r["label"] == "fake"]
    old = sorted(r["id"] for r in fakes if r.get("generator") != NEW["key"])
    new = sorted(r["id"] for r in fakes if r.get("generator") == NEW["key"])
    return {"alpha": set(old) | set(new[:len(new) // 2]), "beta": set(old[::2]) | set(new)}


def _script(answers: list[dict], *, slow_on: str = "") -> str:
    body = "".join(json.dumps(a) + "\n" for a in answers)
    slow = f'if [ "$LB_RELEASE" = "{slow_on}" ]; then sleep 4; fi\n' if slow_on else ""
    return ("set -e\n[ -e /input/labels.jsonl ] && exit 9\n" + slow
            + "cat > /tmp/answers.jsonl <<'EOF'\n" + body + "EOF\n"
            # the answers of the ids this release's input holds, and no other
            + "sed 's/^{\"id\": *\"\\([^\"]*\\)\".*/\"id\": \"\\1\",/' /input/items.jsonl "
              "> /tmp/ids\n"
            + "grep -F -f /tmp/ids /tmp/answers.jsonl > /output/predictions.jsonl\n")


@pytest.fixture(scope="module")
def images(docker_client, packs, tmp_path_factory):
    """``{name: docker save tarball}``; alpha sleeps 4 s on release 2 (time to kill it); the
    container sees the benchmark's name (``LB_BENCHMARK``) and its release (``LB_RELEASE``)."""
    out = tmp_path_factory.mktemp("rerun-images")
    ids = [r["id"] for r in _rows(packs[3] / "splits" / "test" / "items.jsonl")]
    paths = {}
    for name, flagged in _flags(packs).items():
        answers = [{"id": i, "label": "fake" if i in flagged else "real",
                    "score": 1.0 if i in flagged else 0.0} for i in ids]
        image = build_script_image(docker_client, tag=f"lb-reruns-test:{name}",
                                   script=_script(answers, slow_on="2" if name == "alpha"
                                                  else ""))
        paths[name] = save_image(docker_client, image, out / f"{name}.tar")
        docker_client.images.remove(image, force=True)
    return paths


@pytest.fixture
def redis_url():
    with clean_redis_db(REDIS_URL) as url:
        yield url


@pytest.fixture
def app_config(sqlite_url, tmp_path, redis_url, packs):  # noqa: F811
    from tests.containers.conftest import make_config
    return make_config(sqlite_url, tmp_path, REDIS_URL=redis_url, MAX_IMAGE_MB=32,
                       CONTAINER_MARGIN_S=60, PACK_ROOTS=str(packs[3].parent), **LIMITS)


def _env(app, **extra) -> dict:
    cfg = app.config
    return {**os.environ, "DATABASE_URL": cfg["DATABASE_URL"], "REDIS_URL": cfg["REDIS_URL"],
            "DATA_DIR": cfg["DATA_DIR"], "LABEL_KEYS": ",".join(cfg["LABEL_KEYS"]),
            "SECRET_KEY": cfg["SECRET_KEY"], "CONTAINER_MARGIN_S": "60", **LIMITS, **extra}


def _submit(client, token, path: Path, method: str) -> int:
    builder = EnvironBuilder(path="/api/v1/submissions", method="POST", data={
        "benchmark": "uniaidet", "split": "test", "method_name": method, "kind": "container",
        "file": (io.BytesIO(path.read_bytes()), path.name)},
        headers={"Authorization": f"Bearer {token}"})
    environ = builder.get_environ()
    try:
        resp = client.open(environ)
    finally:
        environ["wsgi.input"].close()
        builder.close()
    assert resp.status_code == 202, resp.json
    return resp.json["id"]


def _board(client, key: str, suffix: str = "") -> bytes:
    resp = client.get(f"/api/v1/boards/{key}/detection/test{suffix}")
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    return resp.get_data()


def _expected(packs, flags) -> dict:
    """By hand from release 2's public test labels: per detector its accuracy (right calls /
    items) on every item (the board), on the reals plus the fakes of generators public by
    `MADE` (seen), and on the reals plus the fakes of the later ones (unseen)."""
    dates = {g["key"]: str(g["date"]) for g in
             yaml.safe_load((packs[2] / "benchmark.yaml").read_text())["generators"]}
    public = [r for r in _rows(packs[2] / "splits" / "test" / "labels.jsonl")
              if r.get("part") == "public"]
    reals = [r for r in public if r["label"] == "real"]
    fakes = [r for r in public if r["label"] == "fake" and r.get("generator") in dates]
    made = MADE.date().isoformat()
    seen = reals + [r for r in fakes if dates[r["generator"]] <= made]
    unseen = reals + [r for r in fakes if dates[r["generator"]] > made]
    assert {r["generator"] for r in unseen if r["label"] == "fake"} == {NEW["key"]}
    out = {}
    for name, flagged in flags.items():
        def acc(rows):
            return sum((r["id"] in flagged) == (r["label"] == "fake") for r in rows) / len(rows)
        out[name] = {"board": acc(public), "seen": acc(seen), "unseen": acc(unseen)}
    return out


def _benchmark_id(session, key: str) -> int:
    from leaderboard.server.services.releases import resolve
    return resolve(session, key).id if key.endswith("-v1") else session.scalar(
        select(Benchmark.id).where(Benchmark.key == key))


def _reruns_of(session, orig_id: int, bench_id: int) -> list[Submission]:
    session.expire_all()
    return list(session.scalars(select(Submission).where(
        Submission.rerun_of_id == orig_id, Submission.benchmark_id == bench_id)))


def test_a_new_release_reruns_every_allowed_detector_once(app, client, auth, session, packs,
                                                          images, docker_client, tmp_path):
    cfg = app.config
    with app.app_context():
        benchmarks.import_pack(session, packs[1], data_dir=cfg["DATA_DIR"],
                               label_keys=cfg["LABEL_KEYS"])
        session.commit()
    tokens = {"alpha": auth.member("ada@example.org", "Team Alpha")}
    auth.logout()
    tokens["beta"] = auth.member("bob@example.org", "Team Beta")
    auth.logout()
    orig = {name: _submit(client, tokens[name], images[name], name) for name in tokens}
    # the detectors were made on 2025-09-01 (before the new generator became public)
    session.execute(update(Submission).where(Submission.id.in_(orig.values()))
                    .values(created_at=MADE))
    session.commit()
    proc = run_worker(app)
    assert proc.returncode == 0, proc.stderr[-3000:]
    session.expire_all()
    for name, sid in orig.items():
        sub = session.get(Submission, sid)
        assert sub.status == "scored", (sub.failure_reason, proc.stderr[-3000:])
        assert sub.image_path and (Path(cfg["DATA_DIR"]) / sub.image_path).is_file()
    # release 1's board by a name that keeps naming it once release 2 exists
    v1_key = ("uniaidet-v1" if client.get("/api/v1/boards/uniaidet-v1/detection/test")
              .status_code == 200 else "uniaidet")
    v1_board = {s: _board(client, v1_key, s) for s in ("", ".csv")}

    # release 2 through the real command: the campaign plans and queues on its own
    done = subprocess.run([sys.executable, "-m", "leaderboard", "import-pack", str(packs[2])],
                          cwd=REPO_ROOT, env=_env(app), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "imported uniaidet-v2 version 2: created release 2 of uniaidet" in done.stdout
    assert done.stdout.rstrip().endswith("; 2 re-run(s) queued"), done.stdout
    v2 = session.scalar(select(Benchmark).where(Benchmark.key == "uniaidet-v2"))
    first = {name: _reruns_of(session, sid, v2.id) for name, sid in orig.items()}
    assert all(len(rows) == 1 and rows[0].status == "queued" for rows in first.values())

    # a worker killed while alpha's re-run runs (alpha sleeps 4 s on release 2)
    alpha_run = first["alpha"][0].id
    dep = cfg["DEPLOYMENT_ID"]
    log_path = tmp_path / "worker.log"
    with log_path.open("w") as log:
        worker = subprocess.Popen([sys.executable, "-m", "leaderboard", "worker", "--queues",
                                   "gpu"], cwd=REPO_ROOT, env=_env(app),
                                  stdout=subprocess.DEVNULL, stderr=log)
        try:
            wait_for(lambda: docker_client.containers.list(sparse=True, filters={
                "label": [f"lb.submission={alpha_run}", f"lb.deployment={dep}"],
                "status": "running"}), timeout_s=90, what="alpha's re-run container",
                context=log_path.read_text)
        finally:
            crash(worker)
    session.expire_all()
    assert session.get(Submission, alpha_run).status == "scoring"
    reap(docker_client, deployment=dep, now=time.time() + 3600)  # the orphan, past its deadline
    with app.app_context():
        from leaderboard.server.jobs.reconcile import reconcile
        report = reconcile(now=utcnow() + timedelta(seconds=3600))
    assert alpha_run in report.requeued and report.reruns_queued == []
    proc = run_worker(app)
    assert proc.returncode == 0, proc.stderr[-3000:]
    flags = _flags(packs)
    runs = {}
    for name, sid in orig.items():
        rows = _reruns_of(session, sid, v2.id)
        assert len(rows) == 1, rows  # exactly one record per (submission, release)
        runs[name] = rows[0]
        assert rows[0].status == "scored", rows[0].failure_reason
        assert rows[0].created_at.replace(tzinfo=None) > MADE.replace(tzinfo=None)
        assert not rows[0].counts_toward_quota
    assert runs["alpha"].attempts == 2  # the killed run and the one that finished
    assert session.scalar(select(func.count(func.distinct(Score.submission_id))).where(
        Score.submission_id.in_([r.id for r in runs.values()]))) == 2

    # release 1's board did not move; release 2's equals the hand count
    assert _benchmark_id(session, v1_key) == session.scalar(
        select(Benchmark.id).where(Benchmark.key == "uniaidet"))
    assert {s: _board(client, v1_key, s) for s in ("", ".csv")} == v1_board
    want = _expected(packs, flags)
    board = json.loads(_board(client, "uniaidet-v2"))
    got = {r["method_name"]: r["values"]["accuracy"]["value"] for r in board["rows"]}
    assert got == pytest.approx({n: want[n]["board"] for n in want})
    view = client.get("/api/v1/boards/uniaidet-v2/detection/test/generators").json
    dated = [g["key"] for g in view["generators"] if g["date"]]
    assert dated[-1] == NEW["key"]  # by date: the newest dated one last
    for row in view["rows"]:
        name = row["method_name"]
        # made before the new generator was public, although the re-run ran after
        assert row["unseen_generators"] == [NEW["key"]], row
        assert row["made_at"].startswith("2025-09-01")
        assert row["seen"]["value"] == pytest.approx(want[name]["seen"])
        assert row["unseen"]["value"] == pytest.approx(want[name]["unseen"])
        assert row["gap"]["value"] == pytest.approx(want[name]["seen"] - want[name]["unseen"])
    # the constructed case in numbers (118 public items; 68 seen, 68 unseen with the reals):
    # alpha is right on every seen item and misses 13 new fakes; beta the other way round
    assert want["alpha"] == pytest.approx({"board": 105 / 118, "seen": 1.0, "unseen": 55 / 68})
    assert want["beta"] == pytest.approx({"board": 93 / 118, "seen": 57 / 68, "unseen": 1.0})

    # release 3 through the admin page, one run at a time; a budget of one run
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        accounts.register(s, email="root@example.org", display_name="root",
                          password="correct horse battery", is_admin=True)
    auth.login("root@example.org")
    app.config["RERUN_WINDOW"] = 1
    resp = client.post("/admin/benchmarks/import", data={"path": str(packs[3])})
    assert resp.status_code == 303
    v3 = session.scalar(select(Benchmark).where(Benchmark.key == "uniaidet-v3"))
    assert reruns.progress(session, v3)["counts"]["queued"] == 1
    resp = client.post("/admin/benchmarks/uniaidet-v3/reruns",
                       data={"action": "budget", "max_runs": "1", "max_gpu_hours": ""})
    assert resp.status_code == 303
    proc = run_worker(app)  # its job's own pass then finds the budget spent
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = client.get("/admin/benchmarks/uniaidet-v3/reruns?format=json").json
    assert data["counts"] == {"queued": 0, "running": 0, "scored": 1, "failed": 0,
                              "waiting": 0, "skipped": 1}, data
    assert data["skipped"][0]["reason"] == "over budget: runs budget reached (1 runs)"
    assert data["campaign"]["note"] == "stopped: runs budget reached (1 runs)"
    assert data["campaign"]["finished_at"] is not None
    page = client.get("/admin/benchmarks/uniaidet-v3/reruns").get_data(as_text=True)
    assert "Finished" in page and "stopped: runs budget reached (1 runs)" in page
    assert session.scalar(select(func.count()).select_from(Submission).where(
        Submission.benchmark_id == v3.id)) == 1
    # nobody's quota moved: the teams' own submissions are the only ones counted
    assert session.scalar(select(func.count()).select_from(Submission).where(
        Submission.counts_toward_quota.is_(True))) == 2
    assert session.scalar(select(User.id).where(User.email == "ada@example.org"))
