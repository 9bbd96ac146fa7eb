"""Issue 35, team membership by invitation: a signed, expiring, single-use link, optionally for
one address; accept or decline; expired, used, withdrawn, tampered or misaddressed links are
refused with a message that says why (never a 500); leaving and handing the captain's role on;
every change audited. PostgreSQL and SQLite (``db_url``)."""
from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import select

from leaderboard.server.models import Team, User, utcnow
from leaderboard.server.models.access import AuditEvent
from leaderboard.server.models.identity import TeamInvitation


def _invite(client, email="") -> str:
    page = client.post("/team/invitations", data={"email": email}).get_data(as_text=True)
    match = re.search(r'<code id="invite-link">[^<]*(/team/invite/[^<]+)</code>', page)
    assert match, page[:3000]
    return match.group(1)


def _user(session, email):
    session.expire_all()
    return session.scalar(select(User).where(User.email == email))


def test_link_accept_once_then_refused(app, client, auth, session):
    auth.register()
    auth.team("Blue Team")
    link = _invite(client)
    auth.logout()
    auth.register(email="bob@example.org", display_name="Bob")
    page = client.get(link)
    assert page.status_code == 200 and "Blue Team" in page.get_data(as_text=True)
    resp = client.post(link, data={"answer": "accept"})
    assert resp.status_code == 303
    assert _user(session, "bob@example.org").team.name == "Blue Team"
    assert _user(session, "bob@example.org").is_captain is False
    client.post("/team/leave")
    resp = client.get(link)  # used: refused with its reason
    assert resp.status_code == 410 and "already used" in resp.get_data(as_text=True)
    assert client.post(link, data={"answer": "accept"}).status_code == 410
    actions = list(session.scalars(select(AuditEvent.action).order_by(AuditEvent.id)))
    assert [a for a in actions if a.startswith("team.")] == [
        "team.create", "team.invite", "team.invite_accept", "team.leave"]


def test_expired_tampered_withdrawn_and_misaddressed(app, client, auth, session):
    auth.register()
    auth.team("Blue Team")
    expired, tampered_base = _invite(client), _invite(client)
    addressed = _invite(client, email="b.o.b+lab@gmail.com")
    withdrawn = _invite(client)
    for inv in session.scalars(select(TeamInvitation).order_by(TeamInvitation.id)).all()[:1]:
        inv.expires_at = utcnow() - timedelta(minutes=1)
    session.commit()
    last = session.scalar(select(TeamInvitation).order_by(TeamInvitation.id.desc()))
    assert client.post(f"/team/invitations/{last.id}/revoke").status_code == 303
    auth.logout()
    auth.register(email="cy@example.org", display_name="Cy")
    resp = client.get(expired)
    assert resp.status_code == 410 and "expired on" in resp.get_data(as_text=True)
    token = tampered_base.rsplit("/", 1)[1]
    for bad in (token[:-2] + ("AA" if not token.endswith("AA") else "BB"), "garbage", "a.b",
                "x" * 300):
        resp = client.get(f"/team/invite/{bad}")
        assert resp.status_code == 400, bad
        assert "not valid" in resp.get_data(as_text=True)
    resp = client.get(withdrawn)
    assert resp.status_code == 410 and "withdrew" in resp.get_data(as_text=True)
    resp = client.post(addressed, data={"answer": "accept"})
    assert resp.status_code == 403 and "b.o.b+lab@gmail.com" in resp.get_data(as_text=True)
    assert client.post(tampered_base, data={"answer": "maybe"}).status_code == 404
    auth.logout()
    # the address's owner (normalised: dots and +tags) sees it on the team page, and declines
    auth.register(email="bob@gmail.com", display_name="Bob")
    page = client.get("/team/").get_data(as_text=True)
    assert 'id="my-invitations"' in page and "Blue Team" in page
    inv_id = session.scalar(select(TeamInvitation.id).where(TeamInvitation.email.is_not(None)))
    assert client.post(f"/team/invitations/{inv_id}/decline").status_code == 303
    assert client.post(f"/team/invitations/{inv_id}/accept").status_code == 302  # flashed
    assert _user(session, "bob@gmail.com").team_id is None
    # anonymous: asked to log in first
    auth.logout()
    assert client.get(expired).status_code == 302


def test_only_the_captain_invites_and_hands_over(app, client, auth, session):
    auth.register()
    auth.team("Blue Team")
    link = _invite(client)
    auth.logout()
    auth.register(email="bob@example.org", display_name="Bob")
    client.post(link, data={"answer": "accept"})
    page = client.post("/team/invitations", data={}, follow_redirects=True)
    assert "only the team&#39;s captain" in page.get_data(as_text=True)
    auth.logout()
    auth.login()
    resp = client.post("/team/leave", follow_redirects=True)  # captain with a teammate
    assert "hand the role to another member" in resp.get_data(as_text=True)
    bob = _user(session, "bob@example.org")
    assert "x" in client.post("/team/captain", data={"member_id": "x"},
                              follow_redirects=True).get_data(as_text=True)
    assert client.post("/team/captain", data={"member_id": str(bob.id)}).status_code == 303
    assert _user(session, "bob@example.org").is_captain
    assert not _user(session, "ada@example.org").is_captain
    assert client.post("/team/leave").status_code == 302
    assert _user(session, "ada@example.org").team_id is None
    team = session.scalar(select(Team))
    assert team.captain.email == "bob@example.org"
    event = session.scalar(select(AuditEvent).where(AuditEvent.action == "team.captain"))
    assert event.detail == {"from": _user(session, "ada@example.org").id, "to": bob.id}
    # the last member (the captain) may leave; whoever joins the empty team next leads it
    auth.logout()
    auth.login("bob@example.org", "correct horse battery")
    assert client.post("/team/leave").status_code == 302
    auth.logout()
    auth.login()
    client.post("/team/join", data={"invite_code": team.invite_code})
    assert _user(session, "ada@example.org").is_captain


def test_member_in_another_team_must_leave_first(app, client, auth, session):
    auth.register()
    auth.team("Blue Team")
    link = _invite(client)
    auth.logout()
    auth.register(email="bob@example.org", display_name="Bob")
    auth.team("Red Team")
    resp = client.post(link, data={"answer": "accept"})
    assert resp.status_code == 409 and "leave it first" in resp.get_data(as_text=True)
    inv = session.scalar(select(TeamInvitation))
    assert inv.status == "open"  # not spent by the refusal
