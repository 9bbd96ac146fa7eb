"""The access matrix: every persona against every endpoint that touches data, labels,
submissions or admin pages, each with the expected status; and no response body of the whole
matrix carries a hidden test label."""
from __future__ import annotations

from .conftest import PERSONAS, hidden_test_rows, leaks

from leaderboard.server.services.downloads import Target

GRANTED = {"approved", "other_team", "admin"}
SIGNED_IN = set(PERSONAS) - {"anonymous"}


def _expect_gated(p):
    """Gated pages behind login: anonymous -> login redirect, no grant -> 403."""
    return 302 if p == "anonymous" else (200 if p in GRANTED else 403)


def _expect_link(p):
    """A signed link of the persona's own: works only with a live grant (no login needed)."""
    return 200 if p in GRANTED else 403


def _expect_admin(p):
    return 302 if p == "anonymous" else (200 if p == "admin" else 403)


def _endpoints(w):
    key, sid, req = w.key, w.private_submission, w.requests["pending"]
    return [
        ("GET", "/data/", None, lambda p: 200),
        ("GET", f"/data/{key}", None, lambda p: 200),
        ("GET", f"/data/{key}/dev/files.json", None, _expect_gated),
        ("GET", f"/data/{key}/test/files.json", None, _expect_gated),
        ("LINK", Target("items", key, "dev"), None, _expect_link),
        ("LINK", Target("items", key, "test"), None, _expect_link),
        ("LINK", Target("archive", key, "dev"), None, _expect_link),
        ("LINK", Target("archive", key, "dev", labels=True), None, _expect_link),
        ("LINK", Target("labels", key, "dev"), None, _expect_link),
        ("LINK", Target("media", key, path="media/images/missing.png"), None,
         lambda p: 404 if p in GRANTED else 403),
        ("LINK", Target("archive", key, "test", labels=True), None, lambda p: 403),
        ("LINK", Target("labels", key, "test"), None, lambda p: 403),
        ("GET", f"/submissions/{sid}", None,
         lambda p: 200 if p in ("approved", "admin") else 404),
        ("GET", "/submissions/mine", None, lambda p: 302 if p == "anonymous" else 200),
        # a method with private submissions only (issue 38): its team and admins see it; only
        # its team edits it
        ("GET", f"/teams/{w.team_a}/methods/secret-method", None,
         lambda p: 200 if p in ("approved", "admin") else 404),
        ("GET", f"/api/v1/teams/{w.team_a}/methods/secret-method", None,
         lambda p: 200 if p in ("approved", "admin") else 404),
        ("GET", f"/teams/{w.team_a}/methods/secret-method/edit", None,
         lambda p: {"anonymous": 302, "approved": 200, "admin": 403}.get(p, 404)),
        ("POST", f"/teams/{w.team_a}/methods/secret-method/edit", {"licence": "MIT"},
         lambda p: {"anonymous": 302, "approved": 303, "admin": 403}.get(p, 404)),
        # a form with bad fields comes back (400) with the input kept (issue 12)
        ("POST", f"/data/{key}/sign", {"full_name": "x"},
         lambda p: 302 if p == "anonymous" else 400),
        ("GET", "/admin/", None, _expect_admin),
        ("GET", "/admin/requests?status=", None, _expect_admin),
        ("GET", "/admin/users", None, _expect_admin),
        ("GET", "/admin/teams", None, _expect_admin),
        ("GET", "/admin/benchmarks", None, _expect_admin),
        ("GET", f"/admin/benchmarks/{key}/progress?format=json", None, _expect_admin),
        ("GET", "/admin/submissions", None, _expect_admin),
        ("GET", "/admin/audit", None, _expect_admin),
        ("GET", "/admin/audit.csv", None, _expect_admin),
        ("POST", f"/admin/requests/{req}/deny", {"reason": "no"},
         lambda p: {"anonymous": 302, "admin": 303}.get(p, 403)),
        ("POST", f"/admin/submissions/{sid}/hide", {"value": "0"},
         lambda p: {"anonymous": 302, "admin": 303}.get(p, 403)),
        ("POST", "/admin/users/1/admin", {"value": "1"},
         lambda p: {"anonymous": 302, "admin": 303}.get(p, 403)),
    ]


def test_access_matrix(world, bodies, demo_packs):
    failures = []
    for persona, (method, where, data, expect) in (
            (p, e) for p in PERSONAS for e in _endpoints(world)):
        client = world.client(persona)
        if method == "LINK":
            url = world.link(persona, where) if persona != "anonymous" else \
                world.link("anonymous", where) + "x"  # anonymous users hold no valid link
            if persona == "anonymous":
                want = 403
            else:
                want = expect(persona)
            resp = client.get(url)
        else:
            url, want = where, expect(persona)
            resp = client.get(url) if method == "GET" else client.post(url, data=data)
        if resp.status_code != want:
            failures.append(f"{persona}: {method} {url[:90]}: {resp.status_code} != {want}")
    assert not failures, "\n".join(failures)
    rows = hidden_test_rows(demo_packs["syncred"])
    found = [hit for body in bodies for hit in leaks(body, rows)]
    assert not found, found[:5]
    assert len(bodies) >= len(PERSONAS) * len(_endpoints(world))


def test_leak_detector_finds_a_planted_label(demo_packs):
    """The body check above is only worth something if it recognises a leak."""
    rows = hidden_test_rows(demo_packs["syncred"])
    row = rows[0]
    body = ('[{"id": "%s", "label": "%s"}]' % (row["id"], row["label"])).encode()
    assert leaks(body, rows)
    assert not leaks(('{"id": "%s", "task": "detection"}' % row["id"]).encode(), rows)
