"""A scoring-only benchmark (pack built without media): scored uploads, no downloads, no
container runs, and pages that say so."""
from __future__ import annotations

import io
import shutil

import pytest

from leaderboard.server.access.gate import can_access
from leaderboard.server.models import User
from leaderboard.server.services import accounts, downloads
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.services.downloads import Target


@pytest.fixture
def scoring_only(app, demo_packs, tmp_path):
    """The SynCred demo pack without its media, marked scoring-only, imported."""
    from leaderboard.server.services.benchmarks import import_pack

    pack = tmp_path / "syncred-lean"
    shutil.copytree(demo_packs["syncred"], pack, ignore=shutil.ignore_patterns("media", ".cache"))
    (pack / "media").mkdir()
    meta = pack / "benchmark.yaml"
    meta.write_text(meta.read_text() + "scoring_only: true\n")
    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            import_pack(s, pack, data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
    return "syncred"


def _upload(client, token, data: bytes, *, split="dev", kind="predictions"):
    form = {"benchmark": "syncred", "split": split, "method_name": "m", "kind": kind,
            "file": (io.BytesIO(data), "x.jsonl" if kind == "predictions" else "image.tar")}
    return client.post("/api/v1/submissions", data=form, content_type="multipart/form-data",
                       headers={"Authorization": f"Bearer {token}"})


def test_scores_uploads_and_refuses_containers(client, auth, scoring_only, baseline_files):
    token = auth.member()
    resp = _upload(client, token, baseline_files["test"].read_bytes(), split="test")
    assert resp.status_code == 202, resp.json
    status = client.get(f"/api/v1/submissions/{resp.json['id']}",
                        headers={"Authorization": f"Bearer {token}"}).json
    assert status["status"] == "scored", status
    for split in ("dev", "test"):
        resp = _upload(client, token, b"not even a tarball", split=split, kind="container")
        assert resp.status_code == 403, resp.json
        assert "container submissions are not accepted" in resp.json["message"]
        assert "scoring-only here" in resp.json["message"]


def test_pages_say_no_downloads_and_no_container_runs(client, auth, scoring_only):
    page = client.get("/benchmarks/syncred").get_data(as_text=True)
    assert "Scoring-only benchmark" in page and "container runs are not offered" in page
    auth.member()
    page = client.get("/data/syncred").get_data(as_text=True)
    assert "is scoring-only here" in page
    assert 'id="sign-form"' not in page and 'id="dl-dev-items"' not in page


def test_gate_refuses_every_download_even_to_admins(app, session, scoring_only):
    admin = accounts.create_admin(session, email="root@example.org", display_name="Root",
                                  password="correct horse battery")
    session.commit()
    bench = get_benchmark(session, scoring_only)
    for what in ("items", "media", "dev_labels", "container_run"):
        decision = can_access(session, admin, bench, what)
        assert not decision and "scoring-only" in decision.reason
    admin = session.get(User, admin.id)
    token = downloads.make_token(admin, Target("items", "syncred", "dev"),
                                 secret_key=app.config["SECRET_KEY"])
    resp = app.test_client().get(f"/data/download/{token}")
    assert resp.status_code == 403
    assert "scoring-only" in resp.get_data(as_text=True)
