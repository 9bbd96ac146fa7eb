"""``next`` only ever redirects within the site: the login page and every admin form."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from leaderboard.server.models import User
from leaderboard.server.services import accounts
from leaderboard.server.web.inputs import safe_next

PASSWORD = "correct horse battery"
HOSTILE = ["https://evil.example/x", "//evil.example/x", "/\\evil.example/x", "\\\\evil.example",
           "javascript:alert(1)", "http:/evil.example", "/ok\r\nLocation: https://evil.example",
           " https://evil.example", "evil.example", "https:evil.example"]


@pytest.mark.parametrize("target", HOSTILE)
def test_safe_next_refuses_anything_off_site(target):
    assert safe_next(target) is None


@pytest.mark.parametrize("target", ["/admin/users", "/team/?x=1#tokens", "/a//b"])
def test_safe_next_keeps_paths_on_this_site(target):
    assert safe_next(target) == target


def _stays_on_site(resp) -> bool:
    location = resp.headers.get("Location", "")
    parts = urlsplit(location)
    return resp.status_code in (302, 303) and not parts.netloc and location.startswith("/") \
        and not location.startswith(("//", "/\\"))


def test_login_and_admin_forms_never_leave_the_site(app, client, session, imported):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        accounts.create_admin(s, email="root@example.org", display_name="root",
                              password=PASSWORD)
        accounts.register(s, email="ada@example.org", display_name="Ada", password=PASSWORD)
    ada = session.scalar(select(User).where(User.email == "ada@example.org"))
    for target in HOSTILE:
        resp = app.test_client().post(f"/login?next={target}", data={
            "email": "root@example.org", "password": PASSWORD})
        assert _stays_on_site(resp), (target, resp.headers.get("Location"))
    client.post("/login", data={"email": "root@example.org", "password": PASSWORD})
    forms = [(f"/admin/users/{ada.id}/admin", {"value": "0"}),
             (f"/admin/benchmarks/{imported}", {"description_md": "x"}),
             ("/admin/requests/bulk-approve", {}),
             ("/admin/submissions/999/hide", {})]  # a failure redirects back too
    for url, form in forms:
        for target in HOSTILE:
            resp = client.post(url, data={**form, "next": target})
            assert _stays_on_site(resp), (url, target, resp.headers.get("Location"))
    resp = client.post(f"/admin/users/{ada.id}/admin", data={"value": "0", "next": "/admin/teams"})
    assert resp.headers["Location"] == "/admin/teams"
