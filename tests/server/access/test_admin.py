"""The admin console's actions: bulk approve, users, benchmark settings, pack import,
submissions (hide, disqualify, rescore with progress). Each one is audited."""
from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from leaderboard.server.access.gate import can_access
from leaderboard.server.models import Benchmark, Submission, User
from leaderboard.server.models.access import AccessRequest, AuditEvent

from .conftest import sign


@pytest.fixture
def db_url(sqlite_url):
    return sqlite_url


def _session(app):
    return app.extensions["lb_db"].session()


def test_bulk_approve_with_expiry(world, app):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        bench = s.scalar(select(Benchmark))
        extra = sign(s, s.get(User, world.users["none"]), bench).id
    admin = world.client("admin")
    ids = [world.requests["pending"], extra, world.requests["approved"]]  # the last is skipped
    resp = admin.post("/admin/requests/bulk-approve",
                      data={"ids": [str(i) for i in ids], "expires_days": "30"})
    assert resp.status_code == 303
    assert "Approved 2 request(s)" in admin.get("/admin/requests").get_data(as_text=True)
    with app.app_context():
        s = _session(app)
        reqs = [s.get(AccessRequest, i) for i in ids[:2]]
        assert all(r.status == "approved" and r.expires_at is not None for r in reqs)
        bench = s.scalar(select(Benchmark))
        assert can_access(s, s.get(User, world.users["pending"]), bench, "media").allowed
        s.close()


def test_deny_needs_a_reason(world):
    admin = world.client("admin")
    admin.post(f"/admin/requests/{world.requests['pending']}/deny", data={"reason": " "})
    page = admin.get("/admin/requests").get_data(as_text=True)
    assert "give the user a reason" in page


def test_user_and_benchmark_settings(world, app):
    admin = world.client("admin")
    assert admin.post(f"/admin/users/{world.users['none']}/admin",
                      data={"value": "1"}).status_code == 303
    assert admin.post(f"/admin/users/{world.users['admin']}/active",
                      data={"value": "0"}).status_code == 303  # refused: not yourself
    assert admin.post(f"/admin/benchmarks/{world.key}",
                      data={"submissions_open": "0", "daily_quota": "2",
                            "private_revealed": "1",
                            "description_md": "New text"}).status_code == 303
    with app.app_context():
        s = _session(app)
        assert s.get(User, world.users["none"]).is_admin
        assert s.get(User, world.users["admin"]).is_active
        b = s.scalar(select(Benchmark))
        assert (b.submissions_open, b.daily_quota, b.private_revealed, b.description_md) == \
            (False, 2, True, "New text")
        actions = set(s.scalars(select(AuditEvent.action)))
        assert {"admin.user.make_admin", "admin.benchmark.update"} <= actions
        s.close()
    resp = admin.post(f"/admin/benchmarks/{world.key}", data={"daily_quota": "-1"})
    assert resp.status_code == 303
    assert "must be a whole number" in admin.get("/admin/benchmarks").get_data(as_text=True)


def test_import_pack_from_a_server_path(world, demo_packs, app, tmp_path):
    admin = world.client("admin")
    admin.post("/admin/benchmarks/import", data={"path": "/nonexistent/pack"})
    assert "loki" not in {b for b in _keys(app)}
    # only under PACK_ROOTS: the demo packs' folder is not one until configured
    # a refused import answers the benchmarks page with the reason and the error's status
    resp = admin.post("/admin/benchmarks/import", data={"path": str(demo_packs["loki"])})
    assert resp.status_code == 403
    assert "is not inside a folder packs may be read from" in resp.get_data(as_text=True)
    assert "loki" not in _keys(app)
    app.config["PACK_ROOTS"] = [str(demo_packs["loki"].parent.resolve())]
    assert admin.post("/admin/benchmarks/import",
                      data={"path": str(demo_packs["loki"])}).status_code == 303
    assert "loki" in _keys(app)


def test_import_refuses_links_out_of_pack_roots(world, demo_packs, app, tmp_path):
    import shutil
    pack = tmp_path / "roots" / "loki"
    shutil.copytree(demo_packs["loki"], pack)
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    (pack / "media" / "leak.png").symlink_to(secret)
    app.config["PACK_ROOTS"] = [str((tmp_path / "roots").resolve())]
    admin = world.client("admin")
    resp = admin.post("/admin/benchmarks/import", data={"path": str(pack)})
    assert resp.status_code == 403
    assert "links outside the folders packs may be read from" in resp.get_data(as_text=True)
    assert "loki" not in _keys(app)
    assert not list(Path(app.config["DATA_DIR"]).rglob("leak.png"))


def _keys(app):
    with app.app_context():
        s = _session(app)
        keys = set(s.scalars(select(Benchmark.key)))
        s.close()
    return keys


def test_submission_actions_and_rescore_progress(world, app, baseline_files):
    admin = world.client("admin")
    sid = world.private_submission
    assert admin.post(f"/admin/submissions/{sid}/disqualify",
                      data={"reason": "used test labels"}).status_code == 303
    assert admin.post(f"/admin/submissions/{sid}/hide", data={"value": "1"}).status_code == 303
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        sub = s.get(Submission, sid)
        assert sub.hidden and sub.disqualified_reason == "used test labels"
        # give it a real file so the inline rescore can run
        dest = app.config["DATA_DIR"] + "/uploads"
        import shutil
        from pathlib import Path
        Path(dest).mkdir(parents=True, exist_ok=True)
        shutil.copy(baseline_files["test"], Path(dest) / "none.jsonl")
    resp = admin.post(f"/admin/benchmarks/{world.key}/rescore")
    assert resp.status_code == 303 and "/progress" in resp.headers["Location"]
    progress = admin.get(f"/admin/benchmarks/{world.key}/progress?format=json").json
    assert progress["in_flight"] == 0 and progress["counts"] == {"scored": 1}
    assert "1 of 1" in admin.get(f"/admin/benchmarks/{world.key}/progress").get_data(
        as_text=True)
