"""What a team sees of its own submissions (issue 21): a hidden one is marked hidden with the
admin's reason (page and API) and cannot represent the team; long problem lists collapse; the
admin switches the agreement gate on held-out submissions per benchmark."""
from __future__ import annotations

import io

from sqlalchemy import select

from leaderboard.server.models import User


def _post(client, token, data: bytes, split="dev", method="m1"):
    return client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": split, "method_name": method,
        "file": (io.BytesIO(data), "p.jsonl")}, headers={"Authorization": f"Bearer {token}"},
        content_type="multipart/form-data")


def _admin(app, email="ada@example.org", on=True):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        s.scalar(select(User).where(User.email == email)).is_admin = on


def test_hidden_submission_is_marked_with_the_reason(client, auth, imported, app,
                                                     baseline_files):
    token = auth.member()
    sid = _post(client, token, baseline_files["test"].read_bytes(), "test").json["id"]
    assert client.post(f"/submissions/{sid}/select", data={"value": "1"}).status_code == 303
    _admin(app)
    resp = client.post(f"/admin/submissions/{sid}/hide",
                       data={"value": "1", "reason": "same <b>method</b> as #1"})
    assert resp.status_code == 303
    _admin(app, on=False)
    status = client.get(f"/api/v1/submissions/{sid}").json
    assert status["hidden"] is True and status["hidden_reason"] == "same <b>method</b> as #1"
    assert status["selectable"] is False
    page = client.get("/submissions/mine").get_data(as_text=True)
    assert "hidden by an admin" in page and "same &lt;b&gt;method&lt;/b&gt; as #1" in page
    own = client.get(f"/submissions/{sid}").get_data(as_text=True)  # its own page too (issue 33)
    assert 'id="hidden-note"' in own and "same &lt;b&gt;method&lt;/b&gt; as #1" in own
    assert 'hidden-badge">hidden</span>' in own
    assert f'action="/submissions/{sid}/select"' not in page  # no select button
    assert "selected-badge" not in page  # hiding withdrew the selection
    refused = client.post(f"/submissions/{sid}/select", data={"value": "1"},
                          follow_redirects=True).get_data(as_text=True)
    assert "hidden by an administrator" in refused
    _admin(app)
    client.post(f"/admin/submissions/{sid}/hide", data={"value": "0"})
    _admin(app, on=False)
    status = client.get(f"/api/v1/submissions/{sid}").json
    assert status["hidden"] is False and status["hidden_reason"] is None


def test_long_problem_lists_collapse(client, auth, imported):
    token = auth.member()
    bad = b"".join(b'{"id": "nope-%d", "score": 7}\n' % i for i in range(30))
    sid = _post(client, token, bad).json["id"]
    assert client.get(f"/api/v1/submissions/{sid}").json["status"] == "failed"
    page = client.get("/submissions/mine").get_data(as_text=True)
    assert '<details class="problems-details">' in page
    assert page.index("problems-details") < page.index("line 1")


def test_admin_switches_the_agreement_gate(client, auth, imported, app, baseline_files):
    token = auth.member(agreements=False)
    refused = _post(client, token, baseline_files["test"].read_bytes(), "test")
    assert refused.status_code == 403 and refused.json["sign_url"] == "/data/syncred"
    _admin(app)
    assert client.post("/admin/benchmarks/syncred",
                       data={"agreement_gates_submissions": "0"}).status_code in (302, 303)
    _admin(app, on=False)
    assert _post(client, token, baseline_files["test"].read_bytes(), "test").status_code == 202
    audit = client.application.extensions["lb_db"]
    with app.app_context(), audit.scope() as s:
        from leaderboard.server.models.access import AuditEvent
        actions = s.scalars(select(AuditEvent.action)).all()
    assert "admin.benchmark.update" in actions
