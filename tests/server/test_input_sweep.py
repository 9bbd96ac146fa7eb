"""Every route, on SQLite and PostgreSQL, as an anonymous visitor, a team member and an admin:
ids past the database's range and control characters anywhere (path, query string, form, JSON,
login e-mail) answer 4xx, never a 500 (PostgreSQL refuses both where SQLite stored them)."""
from __future__ import annotations

import re

import pytest

from leaderboard.server.services import accounts
from tests.server.conftest import AuthActions

PASSWORD = "correct horse battery"
BIG_IDS = ["99999999999999999999", str(2**31), "-1"]
CONTROL = ["%00", "x%0Ay", "%7F"]
_ARG = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")
SANE = {"key": "syncred", "task": "detection", "split": "dev", "action": "hide",
        "field": "active", "modality": "image", "build_id": "syncred-20260101T000000-abcdef",
        "token": "x", "filename": "css/site.css"}


def _rules(app):
    for rule in app.url_map.iter_rules():
        for method in sorted(rule.methods & {"GET", "POST"}):
            yield rule, method


def _url(rule, replace: dict[str, str]) -> str:
    def sub(match):
        converter, name = match.group(1) or "default", match.group(2)
        if name in replace:
            return replace[name]
        return "1" if converter == "int" else SANE.get(name, "x")
    return _ARG.sub(sub, rule.rule)


@pytest.fixture
def clients(app, imported, baseline_files):
    """{"anonymous", "member", "admin": test client} plus one scored submission (id 1)."""
    member = app.test_client()
    token = AuthActions(member).member()
    with baseline_files["dev"].open("rb") as fh:
        assert member.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                           data={"benchmark": "syncred", "split": "dev", "method_name": "m",
                                 "file": (fh, "p.jsonl")}).status_code == 202
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        accounts.create_admin(s, email="root@example.org", display_name="root",
                              password=PASSWORD)
    admin = app.test_client()
    assert admin.post("/login", data={"email": "root@example.org",
                                      "password": PASSWORD}).status_code == 302
    return {"anonymous": app.test_client(), "member": member, "admin": admin}


def _check(client, method, url, seen, **kw):
    resp = client.open(url, method=method, **kw)
    resp.close()  # a static file's handle
    seen.append((method, url, resp.status_code))
    assert 400 <= resp.status_code < 500, (method, url, resp.status_code,
                                           resp.get_data(as_text=True)[:300])


def test_out_of_range_ids_in_paths_are_4xx(app, clients):
    seen: list = []
    for rule, method in _rules(app):
        ints = [m.group(2) for m in _ARG.finditer(rule.rule) if m.group(1) == "int"]
        for name in ints:
            for value in BIG_IDS:
                for client in clients.values():
                    _check(client, method, _url(rule, {name: value}), seen)
    routes = {url.split("/9")[0] for _, url, _ in seen}
    assert any("/api/v1/submissions/" in u for _, u, _ in seen)
    assert any("/team/tokens/" in u for _, u, _ in seen)
    assert len(routes) >= 10


def test_control_characters_anywhere_are_4xx(app, clients):
    seen: list = []
    for rule, method in _rules(app):
        names = [m.group(2) for m in _ARG.finditer(rule.rule) if m.group(1) != "int"]
        for client in clients.values():
            for name in names:
                for bad in CONTROL:
                    _check(client, method, _url(rule, {name: bad}), seen)
            url = _url(rule, {})
            for query in ("target=%00", "q=a%00", "%00=1", "page=99999999999999999999",
                          "team=99999999999999999999", "limit=99999999999999999999"):
                if not query.startswith(("page", "team", "limit")) or method == "GET":
                    resp = client.open(f"{url}?{query}", method=method)
                    resp.close()
                    seen.append((method, url, resp.status_code))
                    assert resp.status_code < 500, (method, url, query, resp.status_code)
                    if "%00" in query:
                        assert resp.status_code == 400, (method, url, query, resp.status_code)
            if method == "POST" and not rule.rule.startswith(("/api/v1/submissions", "/submit")):
                for form in ({"email": "ada\x00@example.org", "password": PASSWORD},
                             {"name": "a\x00b", "next": "/", "reason": "\x01"}):
                    _check(client, "POST", url, seen, data=form)
                _check(client, "POST", url, seen, json={"name": "a\x00b"})
    assert any(u == "/admin/audit" for _, u, _ in seen)


def test_nul_in_the_login_email_and_upload_fields(app, clients):
    resp = app.test_client().post("/login", data={"email": "ada\x00@example.org",
                                                  "password": PASSWORD})
    assert resp.status_code == 400 and "U+0000" in resp.get_data(as_text=True)
    resp = clients["admin"].get("/admin/audit?target=%00", headers={"Accept": "application/json"})
    assert resp.status_code == 400 and "query parameter 'target'" in resp.json["message"]
    assert clients["anonymous"].get("/benchmarks/%00").status_code == 400
    assert clients["anonymous"].get("/submissions/99999999999999999999").status_code == 404
    token = AuthActions(app.test_client()).member(email="bo@example.org", team="Team Bo")
    import io
    resp = app.test_client().post(
        "/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
        data={"benchmark": "syncred", "split": "dev", "method_name": "m\x00",
              "file": (io.BytesIO(b"{}"), "p.jsonl")})
    assert resp.status_code == 400 and "form field 'method_name'" in resp.json["message"]
