"""The agreement gate on submissions (issue 21): every persona submits to the dev and the
held-out split, as an upload and as a container, through the web form and the API; only a live
grant (or an admin-cleared benchmark) lets a held-out submission in, and the refusal names the
reason and where to sign."""
from __future__ import annotations

import io

from leaderboard.server.models import Submission
from leaderboard.server.services import teams
from leaderboard.server.services.benchmarks import get_benchmark

from .conftest import PERSONAS

GRANTED = {"approved", "other_team"}


def _teams_for_all(world):
    """Give every signed-in persona without one a team (a refusal must be the agreement's)."""
    from sqlalchemy import select

    from leaderboard.server.models import User
    db = world.app.extensions["lb_db"]
    with world.app.app_context(), db.scope() as s:
        for p in PERSONAS[1:]:
            user = s.scalar(select(User).where(User.email == f"{p}@example.org"))
            if user.team_id is None and not user.is_admin:
                teams.create_team(s, user, name=f"Team {p}")


def _upload(client, split, data, kind="predictions", api=False):
    form = {"benchmark": "syncred", "split": split, "method_name": "gate", "kind": kind,
            "file": (io.BytesIO(data), "p.jsonl" if kind == "predictions" else "img.tar")}
    return client.post("/submit", data=form, headers={"Accept": "application/json"},
                       content_type="multipart/form-data")


def test_held_out_submissions_need_the_agreement(world, baseline_files):
    _teams_for_all(world)
    failures = []
    for p in PERSONAS[1:-1]:  # every signed-in persona but the admin
        client = world.client(p)
        for split in ("dev", "test"):
            for kind in ("predictions", "container"):
                if split == "dev" and kind == "container":
                    continue  # a dev container run needs Docker; not what is gated here
                resp = _upload(client, split, baseline_files[split].read_bytes(), kind)
                want = 202 if (split == "dev" or p in GRANTED) else 403
                if kind == "container" and want == 202:
                    continue  # accepted ones would inspect a tarball (tests/containers)
                if resp.status_code != want:
                    failures.append(f"{p} {split} {kind}: {resp.status_code} != {want}")
                elif want == 403:
                    body = resp.json
                    if body["error"] != "agreement_required" or body["sign_url"] != \
                            "/data/syncred" or "agreement" not in body["message"]:
                        failures.append(f"{p} {split} {kind}: {body}")
    assert not failures, "\n".join(failures)


def test_refusal_names_the_reason_on_the_api_and_the_form(world, baseline_files):
    _teams_for_all(world)
    client = world.client("pending")
    token = _token(client)
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "test", "method_name": "m",
        "file": (io.BytesIO(baseline_files["test"].read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"}, content_type="multipart/form-data")
    assert resp.status_code == 403 and resp.json["error"] == "agreement_required"
    assert "waiting for an administrator" in resp.json["message"]
    page = client.get("/submit").get_data(as_text=True)
    assert 'data-split="test"' in page and "Sign the agreement" in page
    assert 'href="/data/syncred"' in page
    # the form offers only what the member may use now: dev, not test
    assert 'data-splits="dev"' in page
    with world.app.app_context():
        db = world.app.extensions["lb_db"]
        with db.scope() as s:
            assert s.query(Submission).filter_by(method_name="m").count() == 0


def test_a_benchmark_may_take_held_out_submissions_without_agreement(world, baseline_files):
    _teams_for_all(world)
    db = world.app.extensions["lb_db"]
    with world.app.app_context(), db.scope() as s:
        get_benchmark(s, world.key).agreement_gates_submissions = False
    resp = _upload(world.client("none"), "test", baseline_files["test"].read_bytes())
    assert resp.status_code == 202, resp.json
    # the data gate still holds: a container run needs the agreement whatever the setting
    resp = _upload(world.client("none"), "test", b"x", kind="container")
    assert resp.status_code == 403 and "agreement" in resp.json["message"]


def _token(client) -> str:
    import re
    resp = client.post("/team/tokens", data={"name": "cli"})
    return re.search(r'<code id="new-token">([^<]+)</code>', resp.get_data(as_text=True))[1]


def test_a_scoring_only_benchmark_gates_no_submission(world, baseline_files):
    """Nothing is hosted (no agreement to sign here): held-out uploads are not gated."""
    from leaderboard.server.access.gate import can_access
    from leaderboard.server.models import User

    db = world.app.extensions["lb_db"]
    with world.app.app_context(), db.scope() as s:
        bench = get_benchmark(s, world.key)
        bench.meta_json = {**bench.meta_json, "scoring_only": True}
        user = s.get(User, world.users["none"])
        assert can_access(s, user, bench, "test_submission")
        assert not can_access(s, user, bench, "items")
