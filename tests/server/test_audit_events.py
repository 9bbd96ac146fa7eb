"""Sign-up, failed logins, token creation/revocation and submissions are written to the audit log."""
import re

from sqlalchemy import select

from leaderboard.server.models.access import AuditEvent


def actions(app):
    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            return [e.action for e in s.scalars(select(AuditEvent).order_by(AuditEvent.id))]


def test_account_and_token_events(app, client, auth):
    auth.register()
    auth.logout()
    assert auth.login(password="wrong password here").status_code == 401
    auth.login()
    auth.team()
    auth.token()
    page = client.get("/team/").get_data(as_text=True)
    token_id = re.search(r"/team/tokens/(\d+)/revoke", page).group(1)
    client.post(f"/team/tokens/{token_id}/revoke")
    got = actions(app)
    for action in ("auth.register", "auth.login_failed", "token.create", "token.revoke"):
        assert action in got, got


def test_submission_event(app, client, auth, imported, baseline_files):
    token = auth.member()
    with open(baseline_files["dev"], "rb") as fh:
        resp = client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                           data={"benchmark": imported, "split": "dev", "method_name": "m",
                                 "file": (fh, "dev.jsonl")})
    assert resp.status_code in (200, 201, 202), resp.get_data(as_text=True)
    assert "submission.create" in actions(app)
