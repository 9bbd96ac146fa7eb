"""Notices on the team's pages and in the API (issue 21, item 8): written by the functions that
make the change (agreement decisions, scoring, failures, hide), seen by the user or the whole
team, dismissable by those who see them only; the team page says who holds which agreement."""
from __future__ import annotations

import html
import io

from sqlalchemy import select

from leaderboard.server.access import agreements
from leaderboard.server.models import Benchmark, Submission, User
from leaderboard.server.models.notices import Notice
from leaderboard.server.services import admin_ops, decisions

INTENDED = "Evaluating our synthetic-image detector for a research paper."


def _text(resp) -> str:
    return html.unescape(resp.get_data(as_text=True))


def _users(app, auth):
    """Ada (admin) and Cy in "Team Ada"; Bob in "Bobs". Logged in as Cy; returns Cy's token."""
    auth.member(agreements=False)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        ada = s.scalar(select(User).where(User.email == "ada@example.org"))
        ada.is_admin = True
        ada_invite = ada.team.invite_code
    auth.logout()
    auth.member(email="bob@example.org", team="Bobs", agreements=False)
    auth.logout()
    auth.register(email="cy@example.org", display_name="Cy")
    auth.client.post("/team/join", data={"invite_code": ada_invite})
    return auth.token()


def test_agreement_decisions_reach_the_signer(app, client, auth, imported, session):
    _users(app, auth)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        cy = s.scalar(select(User).where(User.email == "cy@example.org"))
        ada = s.scalar(select(User).where(User.email == "ada@example.org"))
        bench = s.scalar(select(Benchmark))
        req = agreements.sign(s, cy, bench, full_name="Cy", affiliation="Uni",
                              role="Researcher",
                              intended_use=INTENDED, accepted=True)
        s.flush()
        decisions.deny(s, ada, req, reason="affiliation unclear")
    page = _text(client.get("/team/"))
    assert "was denied: affiliation unclear" in page and 'href="/data/syncred"' in page
    assert "Cy" in page and "no access" in page  # the member's agreement state
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        req = agreements.sign(s, s.scalar(select(User).where(User.email == "cy@example.org")),
                              s.scalar(select(Benchmark)), full_name="Cy",
                              affiliation="Uni of X", role="Researcher",
                              intended_use=INTENDED, accepted=True)
        s.flush()
        decisions.approve(s, s.scalar(select(User).where(User.email == "ada@example.org")),
                          req)
    page = _text(client.get("/team/"))
    assert "Your access to SynCred" in page or "was approved" in page
    assert "holds" in page
    listed = client.get("/api/v1/notices").json["notices"]
    assert [n["kind"] for n in listed] == ["agreement.approved", "agreement.denied"]
    assert all(n["for"] == "you" for n in listed)
    # a personal notice is not the teammate's
    auth.logout()
    auth.login()
    assert client.get("/api/v1/notices").json["notices"] == []
    refused = client.post(f"/team/notices/{listed[0]['id']}/dismiss", follow_redirects=True)
    assert "no notice" in _text(refused)
    session.expire_all()
    assert session.get(Notice, listed[0]["id"]).dismissed_at is None  # refused, not dismissed


def test_submission_notices_reach_the_team_and_dismiss_for_all(app, client, auth, imported,
                                                                session, baseline_files):
    token = _users(app, auth)
    ok = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "dev", "method_name": "good",
        "file": (io.BytesIO(baseline_files["dev"].read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"}, content_type="multipart/form-data")
    assert ok.status_code == 202
    bad = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "dev", "method_name": "bad",
        "file": (io.BytesIO(b'{"id": "nope", "score": 2}\n'), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"}, content_type="multipart/form-data")
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        admin_ops.set_hidden(s, s.scalar(select(User).where(User.email == "ada@example.org")),
                             s.get(Submission, ok.json["id"]), True)
    kinds = [n["kind"] for n in client.get("/api/v1/notices").json["notices"]]
    assert kinds[0] == "submission.hidden" and "submission.scored" in kinds
    assert bad.status_code == 202 and "submission.failed" in kinds
    # Ada, a teammate, sees the team's notices and dismisses one for everybody
    auth.logout()
    auth.login()
    page = _text(client.get("/team/"))
    assert "was hidden by an administrator" in page
    assert f'href="/submissions/{ok.json["id"]}"' in page
    hidden = session.scalar(select(Notice).where(Notice.kind == "submission.hidden"))
    gone = client.post(f"/api/v1/notices/{hidden.id}/dismiss",
                       headers={"Authorization": f"Bearer {auth.token('ada')}"})
    assert gone.status_code == 200 and gone.json["dismissed_at"]
    auth.logout()
    auth.login(email="cy@example.org")
    assert "submission.hidden" not in [n["kind"] for n in
                                       client.get("/api/v1/notices").json["notices"]]
    # Bob's team sees none of it, and cannot dismiss it by id
    auth.logout()
    auth.login(email="bob@example.org")
    assert client.get("/api/v1/notices").json["notices"] == []
    other = session.scalar(select(Notice).where(Notice.kind == "submission.scored"))
    refused = client.post(f"/api/v1/notices/{other.id}/dismiss",
                          headers={"Authorization": f"Bearer {auth.token('bob')}"})
    assert refused.status_code == 404 and refused.json["error"] == "not_found"
    # dismiss all
    auth.logout()
    auth.login(email="cy@example.org")
    assert client.post("/team/notices/dismiss-all").status_code == 303
    assert client.get("/api/v1/notices").json["notices"] == []


def test_baselines_make_no_notice(app, imported, session, baseline_files):
    from leaderboard.server.jobs.scoring import enqueue_scoring
    from leaderboard.server.services import submissions

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            sid = submissions.create_baseline(s, benchmark="syncred", split="dev",
                                              kind="random", source=baseline_files["dev"],
                                              data_dir=app.config["DATA_DIR"]).id
        enqueue_scoring(sid)
    assert session.get(Submission, sid).status == "scored"
    assert session.scalar(select(Notice)) is None
