"""Container submissions end to end: upload a ``docker save`` tarball, a real RQ worker on the
``gpu`` queue runs it in the harness sandbox, and the result goes through the upload path."""
from __future__ import annotations

import io
import tarfile
import time
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from werkzeug.test import EnvironBuilder

from harness.sandbox import LABEL_DEADLINE, LABEL_DEPLOYMENT, LABEL_HARNESS, LABEL_SUBMISSION
from leaderboard.server.access import agreements
from leaderboard.server.models import QuotaUsage, Score, Submission, User, utcnow
from leaderboard.server.models.containers import ContainerRun
from leaderboard.server.services import decisions
from leaderboard.server.services.benchmarks import get_benchmark
from tests.containers.conftest import run_worker
from tests.harness.images.savetar import write_save_tar


def _submit(client, token, path, *, split="dev", method="det", kind="container", challenge=""):
    """POST the upload; the body (over 500 kB, so spooled to a temporary file) is closed after."""
    builder = EnvironBuilder(path="/api/v1/submissions", method="POST", data={
        "benchmark": "syncred", "split": split, "method_name": method, "kind": kind,
        "challenge": challenge, "file": (io.BytesIO(path.read_bytes()), path.name)},
        headers={"Authorization": f"Bearer {token}"})
    environ = builder.get_environ()
    try:
        return client.open(environ)
    finally:
        environ["wsgi.input"].close()
        builder.close()


def _get(session, sid) -> Submission:
    session.expire_all()
    return session.get(Submission, sid)


def _labelled(docker_client, deployment):
    """This app's harness containers (others sharing the engine have their own deployment)."""
    return docker_client.containers.list(all=True, filters={
        "label": [f"{LABEL_HARNESS}=1", f"{LABEL_DEPLOYMENT}={deployment}"]})


def _user(session, email) -> User:
    return session.scalar(select(User).where(User.email == email))


def _grant(session, user, admin, bench):
    req = agreements.sign(session, user, bench, full_name="Ada", affiliation="Example University",
                          role="Researcher",
                          intended_use="Evaluating our synthetic-image detector for a paper.",
                          accepted=True, ip="127.0.0.1", user_agent="pytest")
    decisions.approve(session, admin, req)
    return req


def _admin(session):
    from leaderboard.server.services import accounts
    return accounts.register(session, email="root@example.org", display_name="root",
                             password="correct horse battery", is_admin=True)


def test_worker_runs_images_scores_or_fails_them(app, client, auth, imported, session, tarballs,
                                                 docker_client):
    token = auth.member(agreements=False)
    before = {i.id for i in docker_client.images.list()}
    ids = {}
    for name in ("correct", "exit3", "malformed"):
        resp = _submit(client, token, tarballs[name], method=name)
        assert resp.status_code == 202, resp.json
        assert resp.json["status"] == "queued"
        ids[name] = resp.json["id"]
    # held-out split: approved at submit time, revoked before the run
    ada = _user(session, "ada@example.org")
    bench = get_benchmark(session, "syncred")
    admin = _admin(session)
    req = _grant(session, ada, admin, bench)
    session.commit()
    resp = _submit(client, token, tarballs["correct"], split="test", method="revoked")
    assert resp.status_code == 202, resp.json
    ids["revoked"] = resp.json["id"]
    decisions.revoke(session, admin, decisions.get_request(session, req.id), reason="terms breached")
    session.commit()

    proc = run_worker(app)
    assert proc.returncode == 0, proc.stderr[-3000:]

    ok = _get(session, ids["correct"])
    assert ok.status == "scored", (ok.failure_reason, proc.stderr[-3000:])
    assert ok.file_path.endswith(".jsonl") and ok.counts_toward_quota
    acc = session.scalar(select(Score.value).where(
        Score.submission_id == ok.id, Score.metric == "accuracy", Score.slice_key == ""))
    assert acc == pytest.approx(1.0)
    run = session.scalar(select(ContainerRun).where(ContainerRun.submission_id == ok.id))
    assert run.reason == "ok" and run.exit_code == 0 and run.image_id.startswith("sha256:")
    assert run.limits_json["wall_s"] == 20.0 and run.duration_s > 0 and run.finished_at
    assert "items: 92 on syncred/dev tasks=detection" in run.log_tail
    board = client.get("/api/v1/boards/syncred/detection/dev").get_data(as_text=True)
    assert "correct" in board

    bad = _get(session, ids["exit3"])
    assert bad.status == "failed" and bad.failure_reason.startswith("exit code 3: ")
    status = client.get(f"/api/v1/submissions/{bad.id}",
                        headers={"Authorization": f"Bearer {token}"}).json
    assert status["container"]["run"]["exit_code"] == 3
    assert status["container"]["log"]["policy"] == "tail"
    assert "cannot find weights" in status["container"]["log"]["text"]
    assert bad.counts_toward_quota  # the team's image failed, not the platform
    page = client.get(f"/submissions/{bad.id}").get_data(as_text=True)
    assert "cannot find weights" in page and "exit code 3" in page

    mal = _get(session, ids["malformed"])
    assert mal.status == "failed"
    assert mal.failure_reason.startswith("invalid predictions file")
    lines = {p["line"] for p in mal.failure_detail["problems"]}
    assert {1, 2} <= lines, mal.failure_detail

    rev = _get(session, ids["revoked"])
    assert rev.status == "failed" and "agreement revoked on " in rev.failure_reason
    assert rev.failure_reason.endswith("UTC: terms breached. This does not count toward your quota.")
    assert session.scalar(select(func.count()).select_from(ContainerRun)
                          .where(ContainerRun.submission_id == rev.id)) == 0  # never loaded
    assert not rev.counts_toward_quota  # refused before it ran: not counted

    # clean-up: no container left, no image left, no tarball left but the one kept for
    # re-runs on later releases (issue 37: the scored run's team allowed them, the default)
    assert _labelled(docker_client, app.config["DEPLOYMENT_ID"]) == []
    assert {i.id for i in docker_client.images.list()} <= before
    assert [p.name for p in (Path(app.config["DATA_DIR"]) / "images").iterdir()] == \
        [Path(ok.image_path).name]


def test_revoked_while_queued_in_a_phase_is_refused_refunded_and_told(app, client, auth, imported,
                                                                     session, tarballs):
    """Issue 36: the container job asks the gate again at its start; a revoked agreement ends
    the run before the image is loaded, with the date, the daily quota and the phase's cap
    unit given back, and a notice to the team."""
    from leaderboard.server.jobs.containers import run_container_submission
    from leaderboard.server.models.challenges import (
        Challenge,
        ChallengeEntrant,
        ChallengePhase,
        PhaseDayUsage,
        PhaseUsage,
    )
    from leaderboard.server.models.notices import Notice

    token = auth.member(agreements=False)
    ada = _user(session, "ada@example.org")
    bench = get_benchmark(session, "syncred")
    admin = _admin(session)
    req = _grant(session, ada, admin, bench)
    now = utcnow()
    challenge = Challenge(key="capped", benchmark_id=bench.id, title="Capped", phases=[
        ChallengePhase(position=0, name="Test", split="test", part="private",
                       opens_at=now - timedelta(hours=1), closes_at=now + timedelta(hours=1),
                       max_submissions=2)])
    session.add(challenge)
    session.flush()  # the team entered it: its phase binds the submissions made to it
    session.add(ChallengeEntrant(challenge_id=challenge.id, team_id=ada.team_id))
    session.commit()
    resp = _submit(client, token, tarballs["correct"], split="test", method="late",
                   challenge="capped")
    assert resp.status_code == 202, resp.json
    sid = resp.json["id"]
    assert session.scalar(select(PhaseUsage.count)) == 1
    assert session.scalar(select(PhaseDayUsage.count)) == 1
    decisions.revoke(session, admin, decisions.get_request(session, req.id), reason="terms breached")
    session.commit()
    session.refresh(req)
    when = f"{req.decided_at:%Y-%m-%d %H:%M} UTC"

    with app.app_context():
        assert run_container_submission(sid)["status"] == "failed"
    sub = _get(session, sid)
    assert sub.status == "failed" and sub.failure_detail["reason"] == "access_denied"
    assert f"agreement revoked on {when}: terms breached" in sub.failure_reason
    assert not sub.counts_toward_quota
    assert session.scalar(select(PhaseUsage.count)) == 0
    assert session.scalar(select(PhaseDayUsage.count)) == 0
    assert session.scalar(select(func.count()).select_from(ContainerRun)
                          .where(ContainerRun.submission_id == sid)) == 0  # never loaded
    notice = session.scalar(select(Notice).where(Notice.subject == f"submission:{sid}"))
    assert notice.team_id == ada.team_id and f"agreement revoked on {when}" in notice.message


def test_hostile_tarball_rejected_at_intake(app, client, auth, imported, session, tmp_path,
                                            docker_client):
    token = auth.member()
    evil = tarfile.TarInfo("../../evil")
    evil.size = 3
    path = write_save_tar(tmp_path / "evil.tar", extra_members=[(evil, b"bad")])
    before = {i.id for i in docker_client.images.list()}
    resp = _submit(client, token, path)
    assert resp.status_code == 202, resp.json
    assert resp.json["status"] == "failed"
    assert resp.json["failure_reason"].startswith("image rejected: ")
    assert "'..'" in resp.json["failure_reason"]
    assert {i.id for i in docker_client.images.list()} == before  # nothing loaded
    sub = _get(session, resp.json["id"])
    # a broken image is the team's error and counts (issue 13: no free retries)
    assert sub.kind == "container" and sub.counts_toward_quota
    assert session.scalar(select(QuotaUsage.count)) == 1
    assert not any((Path(app.config["DATA_DIR"]) / "images").iterdir())


def test_held_out_split_needs_an_approved_agreement(app, client, auth, imported, session,
                                                    tarballs):
    token = auth.member(agreements=False)
    resp = _submit(client, token, tarballs["exit3"], split="test")
    assert resp.status_code == 403, resp.json
    assert "sign the data-use agreement" in resp.json["message"]
    assert session.scalar(select(func.count()).select_from(Submission)) == 0
    images = Path(app.config["DATA_DIR"]) / "images"
    assert not images.exists() or not any(images.iterdir())
    # predictions uploads are unchanged by the container gate
    assert _submit(client, token, tarballs["exit3"], kind="bogus").status_code == 400


def test_reaper_removes_expired_labelled_containers(app, docker_client, sleeper_image,
                                                   monkeypatch):
    def make(deadline, deployment=app.config["DEPLOYMENT_ID"]):
        return docker_client.containers.run(
            sleeper_image, detach=True, network_mode="none",
            labels={LABEL_HARNESS: "1", LABEL_DEPLOYMENT: deployment, LABEL_SUBMISSION: "999",
                    LABEL_DEADLINE: str(deadline)})

    # deadlines ahead of the real clock and the reaper's clock further ahead, so that a reaper
    # of another deployment sharing this engine never takes these containers first
    now = int(time.time())
    old, fresh = make(now + 3600), make(now + 4 * 3600)
    foreign = make(now + 3600, deployment="another-deployment")
    from harness import reap
    monkeypatch.setattr("harness.reap", lambda client, *, deployment: reap(
        client, deployment=deployment, now=now + 2 * 3600))
    try:
        from leaderboard.cli import main
        with app.app_context():
            res = CliRunner().invoke(main, ["reap"])
        assert res.exit_code == 0, res.output
        assert "reaped containers=1" in res.output
        left = {c.id for c in docker_client.containers.list(all=True)}
        assert old.id not in left and fresh.id in left and foreign.id in left
    finally:
        for c in (old, fresh, foreign):
            try:
                c.remove(force=True)
            except Exception:
                pass


def test_reconciler_requeues_a_dead_run_once_then_fails_it(app, client, auth, imported, session,
                                                            tarballs):
    from leaderboard.server.jobs.queue import GPU_QUEUE, get_queue
    from leaderboard.server.jobs.reconcile import reconcile

    token = auth.member()
    sid = _submit(client, token, tarballs["exit3"]).json["id"]
    sub = _get(session, sid)
    past = utcnow() - timedelta(seconds=5)
    sub.status, sub.attempts, sub.deadline_at = "scoring", 1, past  # its worker died mid-run
    session.commit()
    with app.app_context():
        get_queue(GPU_QUEUE).empty()
        assert reconcile().requeued == [sid]
        assert len(get_queue(GPU_QUEUE).job_ids) == 1
    sub = _get(session, sid)
    assert sub.status == "queued"
    sub.status, sub.attempts, sub.deadline_at = "scoring", 2, past  # and died again
    session.commit()
    with app.app_context():
        assert reconcile().failed == [sid]
    sub = _get(session, sid)
    assert sub.status == "failed" and "the runner stopped during the run" in sub.failure_reason
    assert not sub.counts_toward_quota  # our fault: refunded


def test_layer_bombs_and_lying_configs_are_the_teams_errors(app, client, auth, imported, session,
                                                            tmp_path, docker_client):
    from tests.harness.images.savetar import bomb_layer, layer_tar

    token = auth.member()
    layer, diff = bomb_layer(1536 << 20)
    bomb = write_save_tar(tmp_path / "bomb.tar", layers=[layer],
                          config_overrides={"rootfs": {"type": "layers", "diff_ids": [diff]}})
    liar = write_save_tar(tmp_path / "liar.tar", layers=[layer_tar({"bin/x": b"x"})],
                          config_overrides={"rootfs": {"type": "layers",
                                                       "diff_ids": ["sha256:" + "0" * 64]}})
    before = {i.id for i in docker_client.images.list()}
    for path, why in ((bomb, "decompress to more than the image cap of"),
                      (liar, "config does not match its layers")):
        resp = _submit(client, token, path)
        assert resp.status_code == 202, resp.json
        assert resp.json["status"] == "failed" and why in resp.json["failure_reason"]
        assert _get(session, resp.json["id"]).counts_toward_quota  # the team's, not ours
    assert session.scalar(select(QuotaUsage.count)) == 2
    assert {i.id for i in docker_client.images.list()} == before


def test_a_copy_of_a_host_image_fails_the_run_and_the_host_image_survives(
        app, client, auth, imported, session, tmp_path, docker_client):
    from tests.harness.images.build import build_script_image, save_image

    host_id = build_script_image(docker_client, tag="lb-containers-test:host-base",
                                 script="echo base\n")
    try:
        token = auth.member()
        copy = save_image(docker_client, host_id, tmp_path / "copy.tar")
        sid = _submit(client, token, copy).json["id"]
        proc = run_worker(app)
        assert proc.returncode == 0, proc.stderr[-3000:]
        sub = _get(session, sid)
        assert sub.status == "failed" and sub.counts_toward_quota, sub.failure_reason
        assert "already has an image with the id " + host_id in sub.failure_reason
        image = docker_client.images.get(host_id)
        assert "lb-containers-test:host-base" in image.tags
    finally:
        docker_client.images.remove(host_id, force=True)
