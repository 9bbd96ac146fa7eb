"""Signed download links: tampering, expiry, revocation on the next request, range and
conditional requests, the front-proxy header, and what the archives hold."""
from __future__ import annotations

import io
import json
import zipfile

import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer

from .conftest import login

from leaderboard.server.models import User
from leaderboard.server.services import decisions, downloads
from leaderboard.server.services.downloads import Target


@pytest.fixture
def db_url(sqlite_url):
    """Links do not depend on the backend (the matrix and audit tests run on both)."""
    return sqlite_url


def _reason(resp) -> str:
    return resp.get_data(as_text=True)


def test_tampered_links_are_refused(world):
    client = world.client("approved")
    token = world.token("approved", Target("items", world.key, "dev"))
    assert client.get(f"/data/download/{token}").status_code == 200
    flipped = token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:]
    assert client.get(f"/data/download/{flipped}").status_code == 403
    # a valid signature from another key (e.g. an old secret) is not ours either
    foreign = URLSafeTimedSerializer("not-our-secret", salt=downloads.SALT).dumps(
        {"u": world.users["approved"], "kind": "labels", "benchmark": world.key, "split": "test",
         "path": None, "labels": False})
    assert client.get(f"/data/download/{foreign}").status_code == 403
    # the payload is readable but not forgeable: swapping the user id breaks the signature
    payload, rest = token.split(".", 1)
    assert client.get(f"/data/download/{payload[:-2]}xx.{rest}").status_code == 403
    # a link for a user without a grant, correctly signed, is refused by the gate
    assert world.client("anonymous").get(
        world.link("pending", Target("items", world.key, "dev"))).status_code == 403


def test_expired_links_are_refused(world, app):
    class Old(TimestampSigner):
        def get_timestamp(self):
            return super().get_timestamp() - 3600  # signed an hour ago

    token = URLSafeTimedSerializer(app.config["SECRET_KEY"], salt=downloads.SALT,
                                   signer=Old).dumps(
        {"u": world.users["approved"], "kind": "items", "benchmark": world.key, "split": "dev",
         "path": None, "labels": False})
    resp = world.client("approved").get(f"/data/download/{token}")
    assert resp.status_code == 410
    assert "expired" in _reason(resp)


def test_revocation_applies_to_the_next_request(world, app):
    client = world.client("approved")
    url = world.link("approved", Target("archive", world.key, "dev", labels=True))
    assert client.get(url).status_code == 200
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        admin = s.get(User, world.users["admin"])
        decisions.revoke(s, admin, decisions.get_request(s, world.requests["approved"]),
                         reason="publication used the data for impersonation")
    resp = client.get(url)
    assert resp.status_code == 403
    assert "impersonation" in _reason(resp)
    page = client.get(f"/data/{world.key}").get_data(as_text=True)
    assert "impersonation" in page and "/data/download/" not in page


def test_disabled_account_links_stop_working(world, app):
    url = world.link("approved", Target("items", world.key, "dev"))
    admin = world.client("admin")
    assert admin.post(f"/admin/users/{world.users['approved']}/active",
                      data={"value": "0"}).status_code == 303
    assert world.client("anonymous").get(url).status_code == 403


def test_range_conditional_and_proxy_header(world, app):
    client = world.client("approved")
    url = world.link("approved", Target("items", world.key, "dev"))
    full = client.get(url)
    assert full.status_code == 200 and full.headers["ETag"]
    part = client.get(url, headers={"Range": "bytes=0-9"})
    assert part.status_code == 206 and part.get_data() == full.get_data()[:10]
    again = client.get(url, headers={"If-None-Match": full.headers["ETag"]})
    assert again.status_code == 304
    app.config["DOWNLOAD_ACCEL"] = "x-accel:/protected/"
    proxied = client.get(url)
    assert proxied.status_code == 200 and proxied.get_data() == b""
    assert proxied.headers["X-Accel-Redirect"].startswith("/protected/packs/syncred/")
    app.config["DOWNLOAD_ACCEL"] = "x-sendfile"
    assert client.get(url).headers["X-Sendfile"].endswith("items.jsonl")


def test_archives_hold_items_media_and_only_dev_labels(world, demo_packs):
    client = world.client("approved")
    dev = zipfile.ZipFile(io.BytesIO(client.get(world.link(
        "approved", Target("archive", world.key, "dev", labels=True))).get_data()))
    names = set(dev.namelist())
    assert {"syncred-dev/benchmark.yaml", "syncred-dev/splits/dev/items.jsonl",
            "syncred-dev/splits/dev/labels.jsonl"} <= names
    assert any(n.startswith("syncred-dev/media/") for n in names)
    original = [json.loads(x) for x in
                (demo_packs["syncred"] / "splits/dev/labels.jsonl").read_text().splitlines()]
    served = [json.loads(x) for x in
              dev.read("syncred-dev/splits/dev/labels.jsonl").decode().splitlines()]
    assert served == original
    test = zipfile.ZipFile(io.BytesIO(client.get(world.link(
        "approved", Target("archive", world.key, "test"))).get_data()))
    assert "syncred-test/splits/test/items.jsonl" in test.namelist()
    assert not any("labels" in n for n in test.namelist())


def test_test_labels_are_refused_even_to_admins(world):
    resp = world.client("admin").get(world.link("admin", Target("labels", world.key, "test")))
    assert resp.status_code == 403
    assert "never downloadable" in _reason(resp)


def test_per_file_links_cover_items_and_media(world):
    client = world.client("approved")
    listing = client.get(f"/data/{world.key}/dev/files.json").json
    assert listing["files"][0]["path"] == "splits/dev/items.jsonl"
    media = [f for f in listing["files"] if f["path"].startswith("media/")]
    assert media and client.get(media[0]["url"]).status_code == 200
    # media outside the pack's media folder cannot be named, even with a valid signature
    bad = world.link("approved", Target("media", world.key, path="../../../../etc/passwd"))
    assert client.get(bad).status_code == 404


def test_every_download_is_audited(world, app):
    from sqlalchemy import select

    from leaderboard.server.models.access import AuditEvent

    client = world.client("approved")
    client.get(world.link("approved", Target("items", world.key, "dev")))
    client.get(world.link("approved", Target("labels", world.key, "test")))
    with app.app_context():
        s = app.extensions["lb_db"].session()
        actions = s.scalars(select(AuditEvent.action).where(
            AuditEvent.actor_id == world.users["approved"])).all()
        s.close()
    assert "download" in actions and "download.refused" in actions
    assert "access.sign" in actions
    login(app, "approved@example.org")  # still allowed to log in (nothing else changed)
