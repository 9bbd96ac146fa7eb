"""The demo admin of ``seed-demo`` (issue 21, item 6): made once with a random password kept
beside the demo data, printed at every ``make run``; a changed password is never printed stale."""
from __future__ import annotations

import stat

from sqlalchemy import select

from leaderboard.server.demo_admin import FILE_NAME, ensure_demo_admin
from leaderboard.server.models import User
from leaderboard.server.services import accounts


def test_made_once_printed_each_time(app, session, tmp_path):
    lines = ensure_demo_admin(session, tmp_path)
    session.commit()
    password = (tmp_path / FILE_NAME).read_text().strip()
    assert password in lines[0] and "admin@example.org" in lines[0]
    assert stat.S_IMODE((tmp_path / FILE_NAME).stat().st_mode) == 0o600
    assert accounts.authenticate(session, email="admin@example.org", password=password)
    again = ensure_demo_admin(session, tmp_path)
    assert again == [f"demo admin: log in as admin@example.org with password {password}"]
    assert len(session.scalars(select(User)).all()) == 1

    # the password changed on the account page: say how to reset, never print the old one
    user = session.scalar(select(User))
    accounts.change_password(session, user, current=password, new="another long password")
    stale = ensure_demo_admin(session, tmp_path)
    assert password not in " ".join(stale) and "create-admin --email admin@example.org" in \
        stale[0]
    # an existing non-admin account of that email is left alone
    user.is_admin = False
    assert "is not an admin" in ensure_demo_admin(session, tmp_path)[0]
