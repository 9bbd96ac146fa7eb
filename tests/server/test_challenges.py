"""Challenges with phases (issue 12): an admin creates a two-phase challenge; a team enters it,
and its submissions to the challenge follow the open phase's split and quotas (issue 33: its
other submissions do not); teams select final submissions until the deadline; the reconciler
(not a person) reveals the private part at the end and freezes exportable results."""
from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from sqlalchemy import select

from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.models.access import AuditEvent
from leaderboard.server.models.challenges import Challenge


def _post(client, token, data: bytes, split: str, method: str = "m1", challenge: str = ""):
    return client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": split, "method_name": method, "challenge": challenge,
        "file": (io.BytesIO(data), "p.jsonl")}, headers={"Authorization": f"Bearer {token}"},
        content_type="multipart/form-data")


def _make_admin(app, email="ada@example.org"):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        s.scalar(select(User).where(User.email == email)).is_admin = True


def _fmt(t):
    return t.strftime("%Y-%m-%dT%H:%M")


def test_two_phase_challenge(app, client, auth, imported, baseline_files, session):
    token = auth.member()
    _make_admin(app)
    now = utcnow()
    form = {"benchmark": "syncred", "key": "trident", "title": "TRIDENT-like",
            "max_selections": "1",
            "phase0_name": "Validation", "phase0_split": "dev", "phase0_part": "all",
            "phase0_opens_at": _fmt(now - timedelta(hours=3)),
            "phase0_closes_at": _fmt(now - timedelta(hours=1)),
            "phase1_name": "Test", "phase1_split": "test", "phase1_part": "private",
            "phase1_opens_at": _fmt(now - timedelta(hours=1)),
            "phase1_closes_at": _fmt(now + timedelta(hours=1)),
            "phase1_daily_quota": "5", "phase1_max_submissions": "2"}
    # a bad form keeps what was typed and marks the field
    bad = client.post("/admin/challenges", data={**form, "phase1_part": "all"})
    assert bad.status_code == 400
    text = bad.get_data(as_text=True)
    assert "phases[1].part" in text and 'value="TRIDENT-like"' in text
    assert 'aria-invalid="true"' in text
    assert client.post("/admin/challenges", data=form).status_code == 303

    # only entrants submit to it
    dev = baseline_files["dev"].read_bytes()
    test = baseline_files["test"].read_bytes()
    outsider = _post(client, token, test, "test", "early", challenge="trident")
    assert outsider.status_code == 403 and outsider.json["error"] == "not_entered"
    assert outsider.json["enter_url"] == "/challenges/trident"
    headers = {"Authorization": f"Bearer {token}"}
    entered = client.post("/api/v1/challenges/trident/enter", headers=headers)
    assert entered.status_code == 201 and entered.json["entered_now"]
    assert client.post("/api/v1/challenges/trident/enter", headers=headers).status_code == 200
    assert client.get("/api/v1/challenges/trident", headers=headers).json["entered"]

    # phase "Test" is open: a challenge submission on dev is refused with the phase named,
    # on test it is scored; a submission made to no challenge is not bound by it
    refused = _post(client, token, dev, "dev", challenge="trident")
    assert refused.status_code == 403 and "'Test'" in refused.json["message"]
    assert _post(client, token, dev, "dev", "standing").status_code == 202
    good = _post(client, token, test, "test", "first", challenge="trident")
    assert good.status_code == 202
    assert client.get(good.json["status_url"]).json["status"] == "scored"
    quota = client.get("/submit").get_data(as_text=True)
    assert "4 of 5 left today, 1 left in the phase" in quota  # the phase's daily quota and cap
    second = _post(client, token, test, "test", "second", challenge="trident")
    assert second.status_code == 202
    capped = _post(client, token, test, "test", "third", challenge="trident")
    assert capped.status_code == 429 and "phase 'Test'" in capped.json["message"]

    # final selection: at most one, before the deadline
    sid, sid2 = good.json["id"], second.json["id"]
    assert client.post(f"/submissions/{sid}/select", data={"value": "1"}).status_code == 303
    client.post(f"/submissions/{sid2}/select", data={"value": "1"})
    assert "at most 1" in client.get("/submissions/mine").get_data(as_text=True)
    page = client.get("/challenges/trident").get_data(as_text=True)
    assert "Validation" in page and "class=\"countdown\"" in page and "running" in page
    assert client.get("/challenges/trident/results.csv").status_code == 404  # not frozen yet

    # the reconciler finishes it when the last phase has closed
    from leaderboard.server.jobs.reconcile import reconcile
    with app.app_context():
        report = reconcile(now=now + timedelta(hours=2))
    assert report.challenges_finished == ["syncred"]
    session.expire_all()
    assert session.scalar(select(Benchmark.private_revealed))
    ch = session.scalar(select(Challenge))
    assert ch.finalized_at is not None
    test_phase = ch.results_json["phases"][1]
    rows = test_phase["tasks"][0]["rows"]
    assert [(r["rank"], r["submission_id"]) for r in rows] == [(1, sid)]  # the selected one
    assert test_phase["tasks"][0]["part"] == "private"
    assert session.scalar(select(AuditEvent).where(AuditEvent.action == "challenge.finish"))
    with app.app_context():
        assert reconcile(now=now + timedelta(hours=3)).challenges_finished == []  # idempotent

    exported = client.get("/challenges/trident/results.csv")
    assert exported.status_code == 200
    table = list(csv.DictReader(io.StringIO(exported.get_data(as_text=True))))
    assert {r["phase"] for r in table} == {"Test"} and table[0]["team"] == "Team Ada"
    assert client.get("/api/v1/challenges/trident").json["state"] == "finished"

    # after the challenge the standing board works again, and selections are frozen
    from leaderboard.server.errors import ServiceError
    from leaderboard.server.services.challenges import check_submission, set_selected
    bench = session.scalar(select(Benchmark))
    assert check_submission(session, bench, "dev", None, now + timedelta(hours=2)) is None
    with pytest.raises(ServiceError, match="final selections closed"):
        set_selected(session, session.scalar(select(User).where(User.email == "ada@example.org")),
                     session.get(Submission, sid), False,
                     now=now + timedelta(hours=2))


def test_overlapping_challenges_are_refused(app, client, auth, imported):
    auth.member()
    _make_admin(app)
    now = utcnow()
    form = {"benchmark": "syncred", "key": "one", "title": "One",
            "phase0_name": "Only", "phase0_split": "dev", "phase0_part": "all",
            "phase0_opens_at": _fmt(now + timedelta(days=1)),
            "phase0_closes_at": _fmt(now + timedelta(days=3))}
    assert client.post("/admin/challenges", data=form).status_code == 303
    again = client.post("/admin/challenges", data={**form, "key": "two"})
    assert again.status_code == 400 and "overlaps challenge" in again.get_data(as_text=True)
    # before it starts, the standing board takes any split
    assert client.get("/challenges/").status_code == 200
