"""Signing, expiry and re-signing after the agreement changes (a new pack version)."""
from __future__ import annotations

import shutil
from datetime import timedelta

import pytest

from .conftest import sign

from leaderboard.server.access import agreements
from leaderboard.server.access.gate import can_access
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import User, utcnow
from leaderboard.server.models.access import AccessRequest, Agreement
from leaderboard.server.services import decisions
from leaderboard.server.services.benchmarks import get_benchmark, import_pack
from leaderboard.server.services.downloads import Target


@pytest.fixture
def db_url(sqlite_url):
    return sqlite_url


def test_sign_records_who_what_when_where(world, app):
    client = world.client("none")
    # (the client keeps its User-Agent: Flask-Login's strong session protection is bound to it)
    resp = client.post(f"/data/{world.key}/sign",
                       data={"full_name": "Grace Hopper", "affiliation": "Navy",
                             "role": "Rear admiral",
                             "intended_use": "Benchmarking a detector for a journal paper.",
                             "accept": "1"})
    assert resp.status_code == 303
    with app.app_context():
        s = app.extensions["lb_db"].session()
        req = s.query(AccessRequest).filter_by(user_id=world.users["none"]).one()
        bench = get_benchmark(s, world.key)
        assert (req.status, req.full_name) == ("pending", "Grace Hopper")
        assert req.user_agent.startswith("Werkzeug/")
        assert req.ip == "127.0.0.1" and req.accepted_at is not None
        assert req.agreement_version == bench.agreement_version
        assert s.query(Agreement).filter_by(version=req.agreement_version).one().text == \
            bench.agreement_md
        s.close()
    assert "waiting for an administrator" in client.get(f"/data/{world.key}").get_data(
        as_text=True)


def test_sign_needs_every_field_and_explicit_acceptance(world, app):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        user, bench = s.get(User, world.users["none"]), get_benchmark(s, world.key)
        with pytest.raises(ServiceError) as err:
            agreements.sign(s, user, bench, full_name="", affiliation="x" * 301,
                            role="", intended_use="short", accepted=False)
        fields = {p.field for p in err.value.problems.items}
        assert fields == {"full_name", "affiliation", "role", "intended_use", "accept"}
        with pytest.raises(ServiceError, match="waiting"):
            sign(s, s.get(User, world.users["pending"]), bench)


def test_expiry_ends_access(world, app):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        bench = get_benchmark(s, world.key)
        user, admin = s.get(User, world.users["none"]), s.get(User, world.users["admin"])
        req = sign(s, user, bench)
        soon = utcnow() + timedelta(hours=1)
        decisions.approve(s, admin, req, expires_at=soon)
        assert can_access(s, user, bench, "items").allowed
        late = can_access(s, user, bench, "items", now=soon + timedelta(seconds=1))
        assert not late.allowed and "expired" in late.reason
        with pytest.raises(ServiceError, match="past"):
            decisions.approve(s, admin, sign(s, s.get(User, world.users["denied"]), bench),
                              expires_at=utcnow() - timedelta(days=1))
    # the "expired" persona: the page says so and its links are refused
    client = world.client("expired")
    assert "expired" in client.get(f"/data/{world.key}").get_data(as_text=True)
    assert client.get(world.link("expired", Target("items", world.key, "dev"))
                      ).status_code == 403


def test_new_agreement_version_requires_signing_again(world, app, demo_packs, tmp_path):
    client = world.client("approved")
    url = world.link("approved", Target("items", world.key, "dev"))
    assert client.get(url).status_code == 200
    changed = tmp_path / "syncred-v2"
    shutil.copytree(demo_packs["syncred"], changed)
    (changed / "agreement.md").write_text((changed / "agreement.md").read_text() +
                                          "\nNew clause: no training on this data.\n")
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        import_pack(s, changed, data_dir=app.config["DATA_DIR"],
                    label_keys=app.config["LABEL_KEYS"], check_media=False)
    resp = client.get(url)
    assert resp.status_code == 403 and "agreement has changed" in resp.get_data(as_text=True)
    page = client.get(f"/data/{world.key}").get_data(as_text=True)
    assert "New clause" in page and 'id="sign-form"' in page
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        bench = get_benchmark(s, world.key)
        user, admin = s.get(User, world.users["approved"]), s.get(User, world.users["admin"])
        decisions.approve(s, admin, sign(s, user, bench))
        assert s.query(Agreement).filter_by(benchmark_id=bench.id).count() == 2
    assert client.get(world.link("approved", Target("items", world.key, "dev"))
                      ).status_code == 200


def test_denial_reason_is_shown_and_user_may_sign_again(world):
    client = world.client("denied")
    page = client.get(f"/data/{world.key}").get_data(as_text=True)
    assert "affiliation could not be verified" in page and 'id="sign-form"' in page


def test_a_failed_signature_keeps_the_input_and_marks_the_fields(world):
    """Issue 12: the form comes back with what was typed, the bad fields marked, and the page
    says that the agreement binds the person who signs."""
    client, key = world.client("none"), world.key
    resp = client.post(f"/data/{key}/sign", data={"full_name": "Ada Lovelace",
                                                  "affiliation": "Analytical Engines",
                                                  "intended_use": "too short"})
    assert resp.status_code == 400
    html = resp.get_data(as_text=True)
    assert 'value="Ada Lovelace"' in html and ">too short</textarea>" in html
    assert 'name="intended_use" required minlength="20" maxlength="5000" rows="4" ' \
           'aria-invalid="true"' in html
    assert "binds you personally" in html and "field 'accept'" in html


def test_can_access_many_decides_as_can_access(world, app):
    """The batch gate (the re-run planner's: one query for every uploader) gives each persona
    the decision `can_access` gives it, for every action."""
    from leaderboard.server.access.gate import WHATS, can_access_many

    with app.app_context(), app.extensions["lb_db"].scope() as s:
        bench = get_benchmark(s, world.key)
        users = [s.get(User, uid) for uid in world.users.values()]
        for what in WHATS:
            many = can_access_many(s, users, bench, what)
            assert many == {u.id: can_access(s, u, bench, what) for u in users}, what
        assert can_access_many(s, [], bench, "items") == {}
