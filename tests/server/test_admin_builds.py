"""Admin pack builds from a server-side release (issue 8): the form's validation, a SynCred build
run in the background (inline mode: a thread) with a progress page and JSON status, the import
and the audit events, and a malformed release whose error names the file."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from leaderboard.core.benchmarks.syncred import FORMS, STYLES
from leaderboard.server.jobs import builds as build_jobs
from leaderboard.server.models import Benchmark
from leaderboard.server.models.access import AuditEvent
from leaderboard.server.services import accounts
from tests.builders.helpers import write_png

PASSWORD = "correct horse battery"


def make_release(root: Path) -> Path:
    """A tiny SynCred release: 12 positives named CONTENT_STYLE_INDEX and 6 FP450 negatives
    (the layout of tests/builders/test_build_syncred.py, smaller)."""
    for k, form in enumerate(FORMS):
        for j, style in enumerate(STYLES[:2]):
            write_png(root / "SynCred-600" / f"{form}_{style}_{2 * k + j:03d}.png", seed=2 * k + j)
    for j in range(6):
        write_png(root / "FP450" / f"real_{j}.png", seed=1000 + j)
    return root


@pytest.fixture
def release(tmp_path) -> Path:
    return make_release(tmp_path / "release" / "SynCred-Bench")


@pytest.fixture
def admin(app, client, tmp_path):
    app.config["PACK_ROOTS"] = [str(tmp_path.resolve())]  # releases and packs live there
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        accounts.create_admin(s, email="root@example.org", display_name="root",
                              password=PASSWORD)
    resp = client.post("/login", data={"email": "root@example.org", "password": PASSWORD})
    assert resp.status_code in (302, 303)
    return client


def _wait(client, build_id: str, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(f"/admin/builds/{build_id}?format=json").json
        if body["state"] in build_jobs.FINISHED or time.monotonic() > deadline:
            return body
        time.sleep(0.1)


def _start(client, **form) -> str:
    resp = client.post("/admin/builds", data=form)
    assert resp.status_code == 303, resp.get_data(as_text=True)[:2000]
    return resp.headers["Location"].rsplit("/", 1)[1]


def _audit(session, action="admin.pack.build") -> list[dict]:
    session.expire_all()
    return [e.detail for e in session.scalars(select(AuditEvent).where(
        AuditEvent.action == action).order_by(AuditEvent.id))]


def test_build_runs_in_background_imports_and_audits(app, admin, release, session):
    page = admin.get("/admin/benchmarks").get_data(as_text=True)
    assert 'action="/admin/builds"' in page and '<option value="syncred"' in page
    build_id = _start(admin, benchmark="syncred", source=str(release), dev_fraction="0.25",
                      private_fraction="0.5", seed="7")
    assert build_id.startswith("syncred-")
    status = _wait(admin, build_id)
    assert status["state"] == "done", status
    assert status["error"] is None and status["done"] == status["total"] == 18
    assert sum(status["report"]["counts"].values()) == 18
    assert status["imported"] == {"key": "syncred", "version": "1"}
    assert status["out"] == str(Path(app.config["DATA_DIR"]) / "built" / build_id)
    assert status["options"] == {"dev_fraction": 0.25, "private_fraction": 0.5, "seed": 7}
    # the status file itself: complete JSON, no temporary files left behind
    path = build_jobs.status_path(app.config["DATA_DIR"], build_id)
    assert json.loads(path.read_text())["state"] == "done"
    assert [p.name for p in path.parent.iterdir()] == [path.name]

    bench = session.scalar(select(Benchmark).where(Benchmark.key == "syncred"))
    assert bench is not None and Path(bench.pack_path).is_dir()
    events = _audit(session)
    assert [(e["phase"], e.get("outcome")) for e in events] == [("start", None), ("end", "done")]
    assert events[0]["source"] == str(release) and events[1]["build"] == build_id

    html = admin.get(f"/admin/builds/{build_id}").get_data(as_text=True)
    assert "Imported <code>syncred</code> version 1" in html
    assert "<script>" not in html and "js/build.js" not in html  # finished: nothing to poll


def test_malformed_release_fails_with_the_file_named(app, admin, release, session):
    write_png(release / "SynCred-600" / "XX_NR_001.png", seed=5000)
    build_id = _start(admin, benchmark="syncred", source=str(release))
    status = _wait(admin, build_id)
    assert status["state"] == "failed" and status["imported"] is None
    assert "SynCred-600/XX_NR_001.png" in status["error"]
    html = admin.get(f"/admin/builds/{build_id}").get_data(as_text=True)
    assert "SynCred-600/XX_NR_001.png" in html
    assert session.scalar(select(Benchmark).where(Benchmark.key == "syncred")) is None
    assert [e.get("outcome") for e in _audit(session)] == [None, "failed"]


def test_running_page_polls_with_a_static_script(app, admin, tmp_path):
    (tmp_path / "rel").mkdir()
    req = build_jobs.check_request(key="loki", source=str(tmp_path / "rel"),
                                   out=str(tmp_path / "o"),
                                   data_dir=app.config["DATA_DIR"])
    build_jobs.write_status(build_jobs.status_path(app.config["DATA_DIR"], req["id"]),
                            {**req, "state": "running", "done": 3, "total": 10,
                             "message": "a.json", "error": None, "report": None,
                             "imported": None, "created_at": "t", "updated_at": "t",
                             "finished_at": None})
    resp = admin.get(f"/admin/builds/{req['id']}")
    html = resp.get_data(as_text=True)
    assert 'src="/static/js/build.js"' in html and "<script>" not in html
    assert 'max="10" value="3"' in html and "a.json" in html
    assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
    js = admin.get("/static/js/build.js")
    js.close()  # send_file keeps the file open until the response is closed
    assert js.status_code == 200


def test_form_errors_are_listed_and_nothing_starts(app, admin, release, session):
    cases = [
        ({"benchmark": "nope", "source": "relative/path", "dev_fraction": "1.5",
          "private_fraction": "-0.1", "seed": "x"},
         ["benchmark must be one of", "must be absolute",
          "dev_fraction must be a number in [0, 1], got &#39;1.5&#39;",
          "private_fraction must be a number in [0, 1]", "seed must be a whole number"]),
        ({"source": "", "dev_fraction": "half"},
         ["give the server-side path", "dev_fraction must be a number in [0, 1]"]),
        ({"source": "/no/such/release"}, ["does not exist on the server"]),
        ({"out": str(release / "pack")}, ["must be outside the release"]),
    ]
    for form, messages in cases:
        resp = admin.post("/admin/builds",
                          data={"benchmark": "syncred", "source": str(release), **form})
        assert resp.status_code == 400
        html = resp.get_data(as_text=True)
        assert all(m in html for m in messages), (messages, html[:3000])
        assert f'value="{form.get("seed", "0")}"' in html  # the admin's values are kept
    assert not (Path(app.config["DATA_DIR"]) / "builds").exists()
    assert _audit(session) == []


def test_admins_only_and_unknown_builds(app, client, admin, auth):
    assert admin.get("/admin/builds/syncred-20260101T000000-abcdef").status_code == 404
    assert admin.get("/admin/builds/..%2F..%2Fsecret").status_code == 404
    admin.post("/logout")
    auth.register(email="eve@example.org")
    auth.login(email="eve@example.org")
    assert client.post("/admin/builds", data={"benchmark": "syncred"}).status_code == 403
    assert client.get("/admin/builds/syncred-20260101T000000-abcdef").status_code == 403


def test_a_build_whose_worker_died_reads_as_failed():
    from datetime import timedelta

    from leaderboard.server.jobs.builds import STALE_AFTER, _stale_as_failed
    from leaderboard.server.models import utcnow

    now = utcnow()
    fresh = {"state": "running", "updated_at": (now - timedelta(minutes=5)).isoformat()}
    assert _stale_as_failed(fresh, now) is fresh
    old = {"state": "running", "updated_at": (now - STALE_AFTER - timedelta(minutes=1)).isoformat()}
    got = _stale_as_failed(old, now)
    assert got["state"] == "failed" and "no progress for 121 minutes" in got["error"]
    assert old["state"] == "running"  # derived when read; the file is not rewritten
    done = {"state": "done", "updated_at": (now - timedelta(days=3)).isoformat()}
    assert _stale_as_failed(done, now) is done


def test_releases_are_read_only_under_pack_roots(app, admin, release, tmp_path_factory):
    outside = make_release(tmp_path_factory.mktemp("elsewhere") / "SynCred-Bench")
    resp = admin.post("/admin/builds", data={"benchmark": "syncred", "source": str(outside)})
    assert resp.status_code == 400
    assert "is not inside a folder packs may be read from" in resp.get_data(as_text=True)
    (release / "FP450" / "real_99.png").symlink_to(outside / "FP450" / "real_0.png")
    resp = admin.post("/admin/builds", data={"benchmark": "syncred", "source": str(release)})
    assert resp.status_code == 400 and "links outside" in resp.get_data(as_text=True)
    resp = admin.post("/admin/builds", data={"benchmark": "syncred", "source": str(outside),
                                             "out": "/tmp/elsewhere-pack"})
    assert "the output folder must be inside one of" in resp.get_data(as_text=True)
