"""Planning re-runs on a new release (issue 37, item 2), without Docker: who is re-run, who is
skipped and why, budgets, pause, exactly one row per original, the prediction-file teams'
notice and mail, and the admin page. SQLite and PostgreSQL. The real runs: tests/containers/
test_reruns_e2e.py."""
from __future__ import annotations

import io
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from leaderboard.server.access import agreements
from leaderboard.server.access.gate import can_access
from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.models.mail import MailItem
from leaderboard.server.models.notices import Notice
from leaderboard.server.services import accounts, benchmarks, decisions, reruns, teams
from tests.server.releases_util import next_release


def _user(session, name: str, *, team: bool = True) -> User:
    user = accounts.register(session, email=f"{name}@example.org", display_name=name,
                             password="correct horse battery")
    accounts.mark_verified(user)
    if team:
        teams.create_team(session, user, name=f"Team {name}")
    session.flush()
    return user


def _grant(session, user, admin, bench):
    req = agreements.sign(session, user, bench, full_name=user.display_name,
                          affiliation="Example University", role="Researcher",
                          intended_use="Evaluating our detector for a paper.", accepted=True)
    decisions.approve(session, admin, req)
    return req


def _container(session, app, bench, user, method, *, kept=True, allow=True, status="scored",
               days_ago=10, kind="container", public=True) -> Submission:
    image = None
    if kept and kind == "container":
        image = Path(app.config["DATA_DIR"]) / "images" / f"{method}-{user.id}.tar"
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_bytes(b"not really a tarball: planning only checks that it is kept")
        image = str(image.relative_to(app.config["DATA_DIR"]))
    sub = Submission(benchmark_id=bench.id, split="test", team_id=user.team_id, user_id=user.id,
                     kind=kind, method_name=method, status=status, is_public=public,
                     file_path="uploads/x.jsonl", file_sha256="ab" * 32, file_size=10,
                     created_at=utcnow() - timedelta(days=days_ago), allow_rerun=allow,
                     image_path=image)
    session.add(sub)
    session.flush()
    return sub


@pytest.fixture
def world(app, session, demo_packs, tmp_path):
    """Release 1 of syncred with five teams' container submissions and one predictions team,
    then release 2 imported (not yet planned)."""
    data = app.config["DATA_DIR"]
    v1 = benchmarks.import_pack(session, demo_packs["syncred"], data_dir=data,
                                label_keys=app.config["LABEL_KEYS"])
    session.flush()
    admin = accounts.register(session, email="root@example.org", display_name="root",
                              password="correct horse battery", is_admin=True)
    people = {n: _user(session, n) for n in ("ada", "bob", "cy", "dee", "eve", "fay")}
    reqs = {n: _grant(session, u, admin, v1) for n, u in people.items()}
    subs = {
        # ada: two runs of one method (the later one is re-run) and a private second method
        "ada_old": _container(session, app, v1, people["ada"], "det", days_ago=20),
        "ada": _container(session, app, v1, people["ada"], "det", days_ago=10),
        "ada_private": _container(session, app, v1, people["ada"], "det2", public=False),
        "bob": _container(session, app, v1, people["bob"], "bobnet", allow=False),
        "cy": _container(session, app, v1, people["cy"], "cynet"),
        "dee": _container(session, app, v1, people["dee"], "deenet", kept=False),
        "eve_failed": _container(session, app, v1, people["eve"], "evenet", status="failed"),
        "fay_file": _container(session, app, v1, people["fay"], "fayfile", kind="predictions"),
    }
    decisions.revoke(session, admin, decisions.get_request(session, reqs["cy"].id),
                     reason="terms breached")
    session.commit()
    v2 = benchmarks.import_pack(session, next_release(demo_packs["syncred"], tmp_path / "r2",
                                                      release=2, meta={"version": "2"}),
                                data_dir=data, label_keys=app.config["LABEL_KEYS"])
    session.commit()
    return {"v1": v1, "v2": v2, "subs": subs, "people": people, "admin": admin}


def _plan(app, session, release, window=10):
    ids = reruns.plan(session, release, data_dir=app.config["DATA_DIR"], window=window)
    session.commit()
    return ids


def _reruns(session, release):
    return list(session.scalars(select(Submission).where(
        Submission.benchmark_id == release.id, Submission.rerun_of_id.is_not(None))
        .order_by(Submission.id)))


def test_plan_reruns_the_allowed_skips_the_rest_with_reasons(app, session, world):
    v2, subs = world["v2"], world["subs"]
    ids = _plan(app, session, v2)
    runs = _reruns(session, v2)
    assert [r.id for r in runs] == ids
    assert sorted(r.rerun_of_id for r in runs) == sorted([subs["ada"].id, subs["ada_private"].id])
    for run in runs:
        orig = session.get(Submission, run.rerun_of_id)
        assert (run.team_id, run.user_id, run.method_name, run.split, run.kind) == \
            (orig.team_id, orig.user_id, orig.method_name, "test", "container")
        assert run.is_public == orig.is_public  # a private submission's re-run stays private
        assert run.file_path == orig.image_path and run.status == "received"
        assert not run.counts_toward_quota and run.phase_id is None
    reasons = {s["submission_id"]: s["reason"]
               for s in reruns.get_campaign(session, v2).skips_json}
    assert reasons[subs["bob"].id] == reruns.OPTED_OUT
    assert reasons[subs["dee"].id] == reruns.NO_IMAGE
    assert reasons[subs["cy"].id].startswith("agreement: agreement revoked on ")
    assert reasons[subs["cy"].id].endswith("terms breached")
    # failed runs, older runs of a re-run method and predictions files are not candidates
    assert not {subs["eve_failed"].id, subs["ada_old"].id, subs["fay_file"].id} & set(reasons)
    # the seen/unseen rule dates a re-run by its original
    made = reruns.made_at(session, [r.id for r in runs] + [subs["ada"].id])
    assert made == {r.id: session.get(Submission, r.rerun_of_id).created_at for r in runs}
    # release 1 has no campaign; a grant signed on release 1 covers release 2 (same text)
    v1 = world["v1"]
    assert reruns.plan(session, v1, data_dir=app.config["DATA_DIR"], window=4) == []
    assert reruns.get_campaign(session, v1) is None
    ada, cy = world["people"]["ada"], world["people"]["cy"]
    assert can_access(session, ada, v2, "container_run")
    assert not can_access(session, cy, v2, "container_run")  # revoked on release 1


def test_planning_again_or_concurrently_never_makes_a_second_row_or_notice(app, session,
                                                                           world):
    v2 = world["v2"]
    first = _plan(app, session, v2)
    assert len(first) == 2
    assert _plan(app, session, v2) == []  # a second import, a reconciler pass
    assert len(_reruns(session, v2)) == 2
    # the prediction-file team got one notice (and a mail line), however often it planned
    fay = world["people"]["fay"]
    notes = session.scalars(select(Notice).where(Notice.kind == "release.published")).all()
    assert [(n.team_id, n.subject) for n in notes] == [(fay.team_id, f"benchmark:{v2.key}")]
    assert "release 2" in notes[0].message
    mail = session.scalars(select(MailItem).where(MailItem.kind == "release_published")).all()
    assert [(m.user_id, m.link) for m in mail] == [(fay.id, f"/data/{v2.key}")]
    dup = reruns.rerun_row(session.get(Submission, world["subs"]["ada"].id), v2, now=utcnow())
    session.add(dup)
    with pytest.raises(IntegrityError):  # the unique index, whatever planned it
        session.flush()
    session.rollback()
    if session.get_bind().dialect.name != "postgresql":
        return
    # two planners at once (PostgreSQL: the second insert waits for the first commit, then
    # loses on the unique index and carries on)
    for run in _reruns(session, v2):
        session.delete(run)
    session.commit()
    db = app.extensions["lb_db"]
    barrier, results, errors = threading.Barrier(2), [], []

    def planner():
        try:
            with db.scope() as s:
                bench = s.get(Benchmark, v2.id)
                barrier.wait(timeout=10)
                results.append(reruns.plan(s, bench, data_dir=app.config["DATA_DIR"],
                                           window=10))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=planner) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    session.expire_all()
    runs = _reruns(session, v2)
    assert len(runs) == 2 and len({r.rerun_of_id for r in runs}) == 2
    assert sum(len(r) for r in results) == 2


def test_budget_window_and_pause(app, session, world):
    v2 = world["v2"]
    reruns.set_budget(session, v2, max_runs=1, max_gpu_seconds=None)
    assert len(_plan(app, session, v2)) == 1
    camp = reruns.get_campaign(session, v2)
    over = [s for s in camp.skips_json if s["reason"].startswith(reruns.OVER_BUDGET)]
    assert len(over) == 1 and "runs budget reached (1 runs)" in over[0]["reason"]
    assert camp.finished_at is None  # its one run is still to come
    run = _reruns(session, v2)[0]
    run.status = "scored"
    session.commit()
    assert _plan(app, session, v2) == []
    camp = reruns.get_campaign(session, v2)
    assert camp.finished_at is not None and camp.note.startswith("stopped: runs budget")
    p = reruns.progress(session, v2)
    assert p["counts"] == {"queued": 0, "running": 0, "scored": 1, "failed": 0, "waiting": 0,
                           "skipped": 4}
    # paused: nothing added; resumed with a larger budget and a window of one: one at a time
    reruns.set_budget(session, v2, max_runs=None, max_gpu_seconds=None)
    reruns.set_paused(session, v2, True)
    assert _plan(app, session, v2) == []
    assert reruns.get_campaign(session, v2).note.startswith("paused: 1 waiting")
    reruns.set_paused(session, v2, False)
    assert len(_plan(app, session, v2, window=1)) == 1
    assert _plan(app, session, v2, window=1) == []  # the window is full
    assert reruns.progress(session, v2)["counts"]["queued"] == 1
    # a GPU budget counts the runs' wall time
    from leaderboard.server.models.containers import ContainerRun
    session.add(ContainerRun(submission_id=run.id, image_id="sha256:" + "0" * 64,
                             duration_s=120.0, limits_json={}))
    reruns.set_budget(session, v2, max_runs=None, max_gpu_seconds=100)
    session.commit()
    assert reruns.gpu_seconds(session, v2) == pytest.approx(120.0)


def test_admin_page_shows_progress_and_sets_the_budget(app, client, session, world):
    v2 = world["v2"]
    _plan(app, session, v2)
    client.post("/login", data={"email": "root@example.org", "password": "correct horse battery"})
    page = client.get(f"/admin/benchmarks/{v2.key}/reruns").get_data(as_text=True)
    assert 'data-count="queued"><strong>2</strong>' in page
    assert reruns.OPTED_OUT in page and "agreement revoked on" in page
    data = client.get(f"/admin/benchmarks/{v2.key}/reruns?format=json").json
    assert data["counts"]["queued"] == 2 and data["counts"]["skipped"] == 3
    resp = client.post(f"/admin/benchmarks/{v2.key}/reruns",
                       data={"action": "budget", "max_runs": "5", "max_gpu_hours": "1.5"})
    assert resp.status_code == 303
    session.expire_all()
    camp = reruns.get_campaign(session, v2)
    assert (camp.max_runs, camp.max_gpu_seconds) == (5, 5400)
    resp = client.post(f"/admin/benchmarks/{v2.key}/reruns",
                       data={"action": "budget", "max_gpu_hours": "lots"})
    assert resp.status_code == 303
    session.expire_all()
    assert reruns.get_campaign(session, v2).max_gpu_seconds == 5400  # refused, unchanged
    client.post(f"/admin/benchmarks/{v2.key}/reruns", data={"action": "pause"})
    session.expire_all()
    assert reruns.get_campaign(session, v2).paused
    assert "Paused" in client.get(f"/admin/benchmarks/{v2.key}/reruns").get_data(as_text=True)
    assert client.get(f"/admin/benchmarks/{world['v1'].key}/reruns").status_code == 200
    assert session.scalar(select(func.count()).select_from(Submission).where(
        Submission.rerun_of_id.is_not(None))) == 2


@pytest.fixture
def app_config(db_url, tmp_path, request):
    """The server tests' config; with Redis when the test asks for it (a container upload
    is then queued, not run inline)."""
    from tests.server.conftest import make_config
    cfg = make_config(db_url, tmp_path)
    if "redis_url" in request.fixturenames:
        cfg["REDIS_URL"] = request.getfixturevalue("redis_url")
    return cfg


def test_a_team_chooses_allow_rerun_when_it_uploads_an_image(redis_url, app, client, auth,
                                                              imported, session, tmp_path,
                                                              request):
    from tests.harness.images.savetar import write_save_tar

    token = auth.member()
    tar = write_save_tar(tmp_path / "img.tar")
    ids = {}
    for choice in ("0", None):
        data = {"benchmark": "syncred", "split": "test", "kind": "container",
                "method_name": f"det-{choice}", "file": (io.BytesIO(tar.read_bytes()), "i.tar")}
        if choice is not None:
            data["allow_rerun"] = choice
        resp = client.post("/api/v1/submissions", data=data, content_type="multipart/form-data",
                           headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 202, resp.json
        assert resp.json["status"] == "queued"
        ids[choice] = resp.json["id"]
    assert [session.get(Submission, ids[c]).allow_rerun for c in ("0", None)] == [False, True]
    doc = client.get(f"/api/v1/submissions/{ids['0']}",
                     headers={"Authorization": f"Bearer {token}"}).json
    assert (doc["allow_rerun"], doc["rerun_of"]) == (False, None)
    page = client.get(f"/submissions/{ids['0']}").get_data(as_text=True)
    assert "later releases: not allowed" in page
    form = client.get("/submit").get_data(as_text=True)
    assert 'name="allow_rerun" value="1" checked' in form
    # the CLI: --no-rerun
    from click.testing import CliRunner

    from leaderboard import client as lbclient
    server = request.getfixturevalue("live_server")
    res = CliRunner().invoke(lbclient.main, [
        "submit", "--benchmark", "syncred", "--split", "test", "--server", server, "--token",
        token, "--quiet", "--no-wait", "--no-rerun", "--method", "cli", "--image", str(tar)])
    assert res.exit_code == 0, res.output
    session.expire_all()
    sub = session.scalar(select(Submission).where(Submission.method_name == "cli"))
    assert sub.kind == "container" and not sub.allow_rerun
