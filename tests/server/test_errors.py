"""One error registration point: JSON under /api, HTML elsewhere, never internals."""
from __future__ import annotations

import pytest


@pytest.fixture
def db_url(sqlite_url):
    return sqlite_url


def test_not_found_shapes(client):
    resp = client.get("/no/such/page")
    assert resp.status_code == 404 and resp.mimetype == "text/html"
    resp = client.get("/api/v1/no/such")
    assert resp.status_code == 404
    assert set(resp.json) >= {"error", "message"} and resp.json["error"] == "not_found"
    resp = client.get("/api/v1/submissions/999999")
    assert resp.status_code == 404 and resp.json["message"] == "no submission 999999"


def test_unexpected_error_is_500_without_internals(app):
    @app.get("/api/v1/boom")
    def boom():
        raise RuntimeError("secret internals")

    @app.get("/boom")
    def boom_html():
        raise RuntimeError("secret internals")

    client = app.test_client()
    resp = client.get("/api/v1/boom")
    assert resp.status_code == 500 and resp.json["error"] == "internal_error"
    assert "secret" not in resp.get_data(as_text=True)
    resp = client.get("/boom")
    assert resp.status_code == 500 and "secret" not in resp.get_data(as_text=True)


def test_pages_render(client, auth, imported):
    auth.member()
    for url in ("/submit", "/submissions/mine", "/team/", "/static/js/upload.js",
                "/static/js/status.js", "/static/css/site.css"):
        resp = client.get(url)
        assert resp.status_code == 200, url
        resp.close()
    auth.logout()
    assert client.get("/submit").status_code == 302
