"""The admin console (issue 21, item 6): the overview's figures (pending agreement requests,
recent failures, queue and workers, submissions per day) with jobs inline and with Redis; the
audit log in names and links, agreement versions as number and date (there and on the data
page); the agreement marker on a board, for admins only."""
from __future__ import annotations

import html
import io
import re

from sqlalchemy import select

from leaderboard.server.access import agreements
from leaderboard.server.models import Benchmark, User
from leaderboard.server.models.access import AccessRequest
from leaderboard.server.services import decisions

INTENDED = "Evaluating our synthetic-image detector for a research paper."


def _text(resp) -> str:
    return html.unescape(resp.get_data(as_text=True))


def _setup(app, client, auth):
    """Ada (admin, team "Team Ada"), Bob (team "Bobs") who signed SynCred's agreement."""
    token = auth.member(agreements=False)
    auth.logout()
    auth.member(email="bob@example.org", team="Bobs", agreements=False)
    auth.logout()
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        s.scalar(select(User).where(User.email == "ada@example.org")).is_admin = True
        bob = s.scalar(select(User).where(User.email == "bob@example.org"))
        agreements.sign(s, bob, s.scalar(select(Benchmark)), full_name="Bob Builder",
                        affiliation="Uni", role="Researcher", intended_use=INTENDED, accepted=True)
    auth.login()
    return token


def test_overview_inline(app, client, auth, imported):
    token = _setup(app, client, auth)
    bad = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "dev", "method_name": "broken",
        "file": (io.BytesIO(b'{"id": 1}\n'), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"}, content_type="multipart/form-data")
    assert bad.status_code in (202, 400), bad.json
    page = _text(client.get("/admin/"))
    assert re.search(r"<strong>1</strong> pending agreement request", page)
    assert "bob" in page and "Decide requests" in page
    assert "jobs run inline in the web process" in page
    data = client.get("/admin/?format=json").json
    assert data["queue"]["mode"] == "inline" and data["pending"]["count"] == 1
    assert len(data["per_day"]) == 14 and data["per_day"][-1]["total"] >= 1
    assert data["failures"]["count"] == data["per_day"][-1]["failed"] == 1
    assert data["failures"]["rows"][0]["team"] == "Team Ada"
    assert f'<a href="/submissions/{data["failures"]["rows"][0]["id"]}">' in page
    # nobody else sees it
    auth.logout()
    auth.login(email="bob@example.org")
    assert client.get("/admin/").status_code == 403


def test_overview_with_redis_lists_workers(app_config, redis_url, tmp_path):
    import redis as redis_lib
    from rq import Worker

    from leaderboard.server.jobs.status import queue_status
    from leaderboard.server.web import create_app

    app = create_app({**app_config, "REDIS_URL": redis_url})
    conn = redis_lib.Redis.from_url(redis_url)
    worker = Worker(["scoring"], connection=conn, name="test-worker-1")
    worker.register_birth()
    worker.heartbeat()
    try:
        with app.app_context():
            status = queue_status()
        assert status["mode"] == "redis" and status["error"] is None
        assert status["alive"] == 1 and status["workers"][0]["name"] == "test-worker-1"
        assert {q["name"] for q in status["queues"]} >= {"scoring", "gpu", "judge"}
    finally:
        worker.register_death()
        app.extensions["lb_db"].dispose()
    down = create_app({**app_config, "REDIS_URL": "redis://127.0.0.1:1/0"})
    with down.app_context():
        assert "not answering" in queue_status()["error"]
    down.extensions["lb_db"].dispose()


def test_audit_log_names_links_and_versions(app, client, auth, imported, session):
    _setup(app, client, auth)
    req = session.scalar(select(AccessRequest))
    assert client.post(f"/admin/requests/{req.id}/approve").status_code == 303
    page = _text(client.get("/admin/audit"))
    bench = session.scalar(select(Benchmark))
    assert bench.agreement_version not in page  # no 64-character hash
    assert "version 1 of " in page
    approve = page[page.index("access.approve"):]
    approve = approve[:approve.index("</tr>")]
    assert re.search(r'<a href="/admin/users\?q=bob(%40|@)example.org"[^>]*>bob</a>', approve)
    assert '<a href="/benchmarks/syncred">syncred</a>' in approve
    assert '"user": ' not in page
    # so do the requests list and the data page
    assert "version 1 of " in _text(client.get("/admin/requests?status="))
    data = _text(client.get("/data/syncred"))
    assert "Version 1 of " in data and bench.agreement_version not in data.replace(
        f'sha256 of the text: {bench.agreement_version}', "")


def test_board_marks_agreement_holders_for_admins_only(app, client, auth, imported, session,
                                                       baseline_files):
    token = _setup(app, client, auth)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        req = s.scalar(select(AccessRequest))
        decisions.approve(s, s.scalar(select(User).where(User.email == "ada@example.org")), req)
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "dev", "method_name": "m",
        "file": (io.BytesIO(baseline_files["dev"].read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"}, content_type="multipart/form-data")
    assert resp.status_code == 202
    auth.logout()
    auth.login(email="bob@example.org")
    bob_token = auth.token()
    assert client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "dev", "method_name": "b",
        "file": (io.BytesIO(baseline_files["dev"].read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {bob_token}"},
        content_type="multipart/form-data").status_code == 202
    board = "/benchmarks/syncred/boards/detection/dev"
    assert "agreement-mark" not in _text(client.get(board))  # Bob is no admin
    auth.logout()
    auth.login()
    page = _text(client.get(board))
    bobs = page[page.index(">Bobs<"):]
    assert "agreement-mark" in bobs[:bobs.index("</td>")]
    ada = page[page.index(">Team Ada<"):]
    assert "agreement-mark" not in ada[:ada.index("</td>")]
