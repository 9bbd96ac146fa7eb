"""The robustness track end to end with the real Docker engine (jobs inline, no Redis):
copies built once by the job, the same image run over every condition after its clean run,
records per condition, budgets that refuse or stop the degraded run while the clean score stays.
"""
from __future__ import annotations

import io
import json
import os

import docker
import docker.errors
import pytest
from sqlalchemy import select
from werkzeug.test import EnvironBuilder

from leaderboard.server.models import Score, Submission
from leaderboard.server.models.robustness import RobustnessBuild, RobustnessRun, RobustnessScore
from leaderboard.server.services import robustness as svc
from leaderboard.server.services.benchmarks import get_benchmark, import_pack
from tests.containers.conftest import LIMITS
from tests.harness.images.build import build_script_image, save_image
from tests.robustness.conftest import METADATA_SCRIPT, SMALL_PLAN, fragile_script, set_plan
from tests.server.conftest import app, auth, client, make_config, session, sqlite_url  # noqa: F401

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def docker_client():
    try:
        c = docker.from_env(timeout=60)
        c.ping()
    except (docker.errors.DockerException, OSError) as exc:
        if os.environ.get("HARNESS_REQUIRE_DOCKER") == "1":  # CI: the track needs the engine
            pytest.fail(f"Docker engine not reachable ({exc}); run scripts/start-docker.sh")
        pytest.skip(f"Docker engine not reachable ({exc})")
    yield c
    c.close()


@pytest.fixture
def app_config(sqlite_url, tmp_path):  # noqa: F811
    return make_config(sqlite_url, tmp_path, MAX_IMAGE_MB=32, CONTAINER_MARGIN_S=60,
                       DAILY_QUOTA=20, **LIMITS)


@pytest.fixture(scope="module")
def tarballs(docker_client, base_packs, tmp_path_factory):
    """``docker save`` tarballs of the test detectors, built once (the small pack's media are the
    demo pack's, so the fragile detector's baked-in hashes hold)."""
    pack, tmp_path = base_packs["syncred"], tmp_path_factory.mktemp("robust-tarballs")
    scripts = {"metadata": METADATA_SCRIPT, "fragile": fragile_script(pack, "dev"),
               "slow": fragile_script(pack, "dev", sleep_on_copies=30),
               "crashy": ("grep -q '\"id\":\"r' /input/items.jsonl && "
                          "{ echo 'cannot decode this jpeg' >&2; exit 3; }\n" + METADATA_SCRIPT)}
    out, built = {}, []
    try:  # every image built before any is removed: removing one can drop a shared cached layer
        for name, script in scripts.items():
            image_id = _build(docker_client, f"lb-robust-test:{name}", script)
            built.append(image_id)
            out[name] = save_image(docker_client, image_id, tmp_path / f"{name}.tar")
    finally:
        for image_id in built:  # runs load the image from the upload, as in production
            try:
                docker_client.images.remove(image_id, force=True)
            except docker.errors.APIError:
                pass
    return out


def _build(client, tag: str, script: str) -> str:
    """One retry: the engine is shared, and another suite removing an image can invalidate a
    cached layer mid-build ("unknown parent image ID")."""
    try:
        return build_script_image(client, tag=tag, script=script)
    except docker.errors.BuildError:
        return build_script_image(client, tag=tag, script=script)


def _submit(client, token, path, method):  # noqa: F811
    builder = EnvironBuilder(path="/api/v1/submissions", method="POST", data={
        "benchmark": "syncred", "split": "dev", "method_name": method, "kind": "container",
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


def _headline(session, sid):
    rows = session.scalars(select(RobustnessScore).where(
        RobustnessScore.submission_id == sid, RobustnessScore.metric == "tpr_at_fpr_5"))
    return {json.dumps(r.slice_json, sort_keys=True): r for r in rows}


def _key(**kw):
    return json.dumps({k: str(v) for k, v in kw.items()}, sort_keys=True)


def _import_and_build(app, session, pack) -> RobustnessBuild:  # noqa: F811
    from leaderboard.server.jobs.robustness import enqueue_build

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            import_pack(s, pack, data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
        with app.extensions["lb_db"].scope() as s:
            build_id = svc.request_build(s, get_benchmark(s, "syncred"), "dev").id
        enqueue_build(build_id)
    return session.scalar(select(RobustnessBuild))


@pytest.fixture
def built(app, session, small_pack):  # noqa: F811
    """The small pack imported and its dev copies built by the job (inline)."""
    row = _import_and_build(app, session, small_pack)
    assert (row.status, row.done, row.total, row.reused) == ("ready", 32, 32, False), row.error
    return row


def test_a_split_too_small_for_one_invocation_runs_in_rounds(  # noqa: F811
        app, client, auth, session, small_pack, tarballs):  # noqa: F811
    """92 items cannot give 4 conditions 30 items each in one invocation: 2 rounds of 92 items,
    each item once per round, 46 items per condition."""
    set_plan(small_pack, {**SMALL_PLAN, "items_per_condition": 30})
    build = _import_and_build(app, session, small_pack)
    assert (build.status, build.total) == ("ready", 184), build.error
    sid = _submit(client, auth.member(), tarballs["metadata"], "rounds")
    session.expire_all()
    run = session.scalar(select(RobustnessRun).where(RobustnessRun.submission_id == sid))
    assert run.status == "scored", run.reason
    assert "2 invocations of the container" in " ".join(run.notes_json)
    recs = _headline(session, sid)
    assert recs[_key(modality="image", summary="clean")].n == 92
    assert recs[_key(modality="image", degradation="blur", level=1)].n == 46
    assert recs[_key(modality="image", degradation="blur", level=1, summary="drop")].n == 46


def test_runs_score_every_condition_and_budgets_stop_them(  # noqa: F811
        app, client, auth, session, built, tarballs):  # noqa: F811
    token = auth.member()
    ids = {name: _submit(client, token, tarballs[name], name) for name in ("metadata", "fragile")}
    session.expire_all()
    for name, sid in ids.items():
        sub = session.get(Submission, sid)
        assert sub.status == "scored", sub.failure_reason
        run = session.scalar(select(RobustnessRun).where(RobustnessRun.submission_id == sid))
        assert run.status == "scored", run.reason
        assert (run.conditions, run.items) == (4, 8)
        assert run.duration_s > 0 and run.clean_duration_s > 0
        assert run.method_json["suites"][0]["suite"] == "images@1"

    meta = _headline(session, ids["metadata"])
    clean = meta[_key(modality="image", summary="clean")].value
    for deg in ("jpeg", "blur"):
        for level in (1, 5):
            assert meta[_key(modality="image", degradation=deg, level=level)].value == clean
    assert meta[_key(modality="image", summary="drop")].value == pytest.approx(0.0)

    frag = _headline(session, ids["fragile"])
    clean = frag[_key(modality="image", summary="clean")]
    assert clean.value == pytest.approx(1.0) and clean.n == 32  # 4 conditions x 8, each once
    jpeg5 = _key(modality="image", degradation="jpeg", level=5)
    paired = frag[_key(modality="image", degradation="jpeg", level=5, summary="drop")]
    ref = frag[_key(modality="image", degradation="jpeg", level=5, summary="clean")]
    assert ref.n == paired.n == frag[jpeg5].n == 8  # its own 8 items, paired with clean on them
    assert paired.value == pytest.approx(ref.value - frag[jpeg5].value)
    worst = frag[_key(modality="image", summary="worst")]
    assert worst.value < clean.value
    assert frag[_key(modality="image", degradation="jpeg", level=5)].value < clean.value
    drop = frag[_key(modality="image", summary="drop")]
    assert drop.value > 0 and drop.ci_low <= drop.value <= drop.ci_high
    # the clean scores are the ordinary ones, untouched by the track
    assert session.scalar(select(Score.value).where(
        Score.submission_id == ids["fragile"], Score.metric == "tpr_at_fpr_5",
        Score.slice_key == "", Score.part == "all")) == pytest.approx(1.0)

    # budgets: a plan over the item budget is not run; a run over the time budget is stopped
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        svc.set_budget(s, get_benchmark(s, "syncred"), None, enabled=True, max_conditions=10,
                       max_items=4, wall_s=600)
    over = _submit(client, token, tarballs["metadata"], "over-items")
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        svc.set_budget(s, get_benchmark(s, "syncred"), None, enabled=True, max_conditions=10,
                       max_items=100, wall_s=1.5)
    slow = _submit(client, token, tarballs["slow"], "slow")
    crashy = _submit(client, token, tarballs["crashy"], "crashy")
    session.expire_all()
    assert session.get(Submission, crashy).status == "scored"
    run = session.scalar(select(RobustnessRun).where(RobustnessRun.submission_id == crashy))
    assert run.status == "failed" and run.reason.startswith("exit code 3")
    assert "cannot decode this jpeg" in run.notes_json[-1]
    page = client.get(f"/submissions/{crashy}").get_data(as_text=True)
    assert "cannot decode this jpeg" in page and "exit code 3" in page
    for sid, why in ((over, "not run: 8 items per condition are over the benchmark's budget "
                            "of 4"), (slow, "stopped after")):
        assert session.get(Submission, sid).status == "scored"  # the clean score stays
        run = session.scalar(select(RobustnessRun).where(RobustnessRun.submission_id == sid))
        assert run.status == "over_budget" and run.reason.startswith(why), run.reason
        assert not _headline(session, sid)
    slow_run = session.scalar(select(RobustnessRun).where(RobustnessRun.submission_id == slow))
    assert slow_run.duration_s < 10  # stopped at the budget, not the harness's 20 s
    # copies are built once: a second request reuses them (no file is written)
    from leaderboard.server.jobs.robustness import enqueue_build

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            again = svc.request_build(s, get_benchmark(s, "syncred"), "dev").id
        enqueue_build(again)
    session.expire_all()
    rows = session.scalars(select(RobustnessBuild)).all()
    assert len(rows) == 1 and rows[0].reused and rows[0].id == built.id


def test_board_plot_pages_and_downloads(app, client, auth, session, built, tarballs):  # noqa: F811
    from leaderboard.server.access import agreements
    from leaderboard.server.services import decisions
    from leaderboard.server.services import accounts

    token = auth.member()
    sids = [_submit(client, token, tarballs[n], n) for n in ("fragile", "metadata")]
    board = client.get("/api/v1/robustness/syncred/detection/dev").json
    # both worst cases are 0 (TPR at 5% FPR of all-tied scores), as are their means: the
    # earlier submission ranks first
    assert [r["method"] for r in board["rows"]] == ["fragile", "metadata"]
    assert [r["worst"]["value"] for r in board["rows"]] == [0.0, 0.0]
    top = board["rows"][0]
    assert set(top["means"]) == {"jpeg", "blur"} and top["rank"] == 1
    assert top["clean"]["n"] == 32 and top["worst"]["ci_low"] is not None
    # equal worst cases in every resample: both rows share the interval 1-2 (tied first)
    assert [r["rank_interval"]["label"] for r in board["rows"]] == ["1 (1–2)", "2 (1–2)"]
    assert board["method"]["suites"][0]["levels"] == [1, 5]
    page = client.get("/benchmarks/syncred/robustness?task=detection&split=dev")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and 'id="robustness-board"' in html
    assert "images@1" in html and "levels 1, 5" in html and "Worst case" in html
    assert 'class="rank-interval"' in html and "tied 1st" in html
    sub_page = client.get(f"/submissions/{sids[0]}").get_data(as_text=True)
    assert 'id="robustness"' in sub_page and "vs severity" in sub_page
    assert "4 conditions of up to 8 items" in sub_page and "ffmpeg 5." in sub_page
    assert sub_page.count('class="faint"') == 2  # the other ranked submission's two lines
    assert "<svg" in sub_page and ">clean</text>" in sub_page
    api = client.get(f"/api/v1/submissions/{sids[0]}/robustness",
                     headers={"Authorization": f"Bearer {token}"}).json
    assert api["robustness"]["run"]["status"] == "scored"
    assert client.get("/api/v1/robustness/syncred/nope/dev").status_code == 404

    # downloads: dev copies for an agreement holder (with labels); test copies never
    # (auth.member() signed and got approved already: a held-out submission needs it)
    from leaderboard.server.access.gate import can_access

    ada = session.scalar(select(Submission).where(Submission.id == sids[0])).user
    bench = get_benchmark(session, "syncred")
    if not can_access(session, ada, bench, "items"):
        admin = accounts.register(session, email="root@example.org", display_name="root",
                                  password="correct horse battery", is_admin=True)
        req = agreements.sign(session, ada, bench, full_name="Ada",
                              affiliation="Example University", role="Researcher",
                              intended_use="Evaluating our synthetic-image detector for a paper.",
                              accepted=True, ip="127.0.0.1", user_agent="pytest")
        decisions.approve(session, admin, req)
        session.commit()
    html = client.get("/benchmarks/syncred/robustness?task=detection&split=dev") \
        .get_data(as_text=True)
    import re
    import zipfile

    link = re.search(r'href="(/data/download/[^"]+)">syncred dev copies', html)
    assert link, html[-2000:]
    resp = client.get(link.group(1))
    assert resp.status_code == 200
    data = resp.data
    resp.close()
    zf = zipfile.ZipFile(io.BytesIO(data))
    names = set(zf.namelist())
    assert "robustness.json" in names and "splits/dev-image-jpeg-5/labels.jsonl" in names
    assert len(zf.read("splits/dev-image-jpeg-5/labels.jsonl").splitlines()) == 8
    from leaderboard.server.services.downloads import Target, make_token

    with app.app_context():
        bad = make_token(ada, Target("robustness", "syncred", "test"),
                         secret_key=app.config["SECRET_KEY"])
    assert client.get(f"/data/download/{bad}").status_code == 403  # the gate: test labels
    from leaderboard.server.services.robustness_archive import robustness_archive
    from leaderboard.server.errors import NotFound

    with pytest.raises(NotFound, match="never downloadable"):  # and the archive itself
        robustness_archive(session, bench, "test", data_dir=app.config["DATA_DIR"],
                           label_keys=app.config["LABEL_KEYS"])


def test_admin_page_sets_budget_and_builds(app, client, session, built):  # noqa: F811
    from leaderboard.server.services import accounts

    accounts.register(session, email="root@example.org", display_name="root",
                      password="correct horse battery", is_admin=True)
    session.commit()
    client.post("/login", data={"email": "root@example.org", "password": "correct horse battery"})
    page = client.get("/admin/robustness/syncred").get_data(as_text=True)
    assert "reused" not in page and "32 / 32" in page
    resp = client.post("/admin/robustness/syncred/budget", data={
        "enabled": "on", "max_conditions": "0", "max_items": "10", "wall_s": "60"})
    assert resp.status_code == 303
    flashed = client.get("/admin/robustness/syncred").get_data(as_text=True)
    assert "max_conditions: must be between 1 and 500, got &#39;0&#39;" in flashed
    client.post("/admin/robustness/syncred/budget", data={
        "max_conditions": "4", "max_items": "10", "wall_s": "60"})
    bench = get_benchmark(session, "syncred")
    session.expire_all()
    bud = svc.budget(session, bench)
    assert (bud.enabled, bud.max_conditions, bud.max_items, bud.wall_s) == (False, 4, 10, 60.0)
    client.post("/admin/robustness/syncred/build", data={"split": "dev"})
    progress = client.get("/admin/robustness/syncred?format=json").json
    assert [b["status"] for b in progress["builds"]] == ["ready"]
    assert progress["builds"][0]["reused"] is True
    resp = client.post("/admin/robustness/syncred/build", data={"split": "nope"})
    assert "has no robustness plan" in client.get("/admin/robustness/syncred").get_data(
        as_text=True)


def test_an_interrupted_degraded_run_is_recorded(app, session, built):  # noqa: F811
    from leaderboard.server.jobs.robustness_run import mark_interrupted
    from leaderboard.server.models import Team, User

    team = Team(name="t", invite_code="x" * 16)
    user = User(email="u@example.org", display_name="u", password_hash="x", team=team)
    session.add_all([team, user])
    session.flush()
    sub = Submission(benchmark_id=built.benchmark_id, split="dev", team_id=team.id,
                     user_id=user.id, kind="container", method_name="m", status="scoring")
    session.add(sub)
    session.flush()
    session.add(RobustnessRun(submission_id=sub.id, status="running"))
    session.commit()
    with app.app_context():
        mark_interrupted(sub.id)
    session.expire_all()
    run = session.scalar(select(RobustnessRun).where(RobustnessRun.submission_id == sub.id))
    assert run.status == "failed" and run.reason.startswith("interrupted")
