"""An organiser runs a challenge (issue 21, item 5): edits a challenge and its phases (validated,
every change audited, time-locked fields refused), reads each phase's board (the submissions of
the phase, ranked by the board rules, n and CI, frozen when the phase closes), sends teams to
the submit form from the challenge's page, and finishes it (private part revealed)."""
from __future__ import annotations

import html
import io
from datetime import timedelta

import pytest
from sqlalchemy import select

from leaderboard.server.errors import ServiceError
from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.models.access import AuditEvent
from leaderboard.server.models.challenges import Challenge
from leaderboard.server.services import challenges as svc


def _fmt(t):
    return t.strftime("%Y-%m-%dT%H:%M")


def _post(client, token, path, split, method, challenge="open-dev"):
    return client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": split, "method_name": method, "challenge": challenge,
        "file": (io.BytesIO(path.read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"}, content_type="multipart/form-data")


@pytest.fixture
def organiser(app, client, auth, imported):
    """Ada, an admin in team "Team Ada", and a challenge on SynCred: a dev phase open now (3
    hours, 2 left) and a private-test phase after it."""
    token = auth.member(agreements=False)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        s.scalar(select(User).where(User.email == "ada@example.org")).is_admin = True
    now = utcnow()
    form = {"benchmark": "syncred", "key": "open-dev", "title": "Open dev",
            "phase0_name": "Warm-up", "phase0_split": "dev", "phase0_part": "all",
            "phase0_opens_at": _fmt(now - timedelta(hours=1)),
            "phase0_closes_at": _fmt(now + timedelta(hours=2)),
            "phase1_name": "Final", "phase1_split": "test", "phase1_part": "private",
            "phase1_opens_at": _fmt(now + timedelta(hours=2)),
            "phase1_closes_at": _fmt(now + timedelta(hours=4))}
    assert client.post("/admin/challenges", data=form).status_code == 303
    return token


def _enter(client):
    assert client.post("/challenges/open-dev/enter").status_code == 303  # the page's button


def _text(resp) -> str:
    return html.unescape(resp.get_data(as_text=True))


def _edit(client, **fields):
    data = {"title": "Open dev", "max_selections": "2",
            "phase0_position": "0", "phase1_position": "1"}
    data.update(fields)
    return client.post("/admin/challenges/open-dev/edit", data=data)


def test_edit_validates_and_audits_each_change(app, client, organiser, session):
    now = utcnow()
    page = client.get("/admin/challenges/open-dev/edit").get_data(as_text=True)
    assert "Warm-up" in page and "open (since" not in page
    # an end before its start, and an open phase's split: both named, nothing saved
    bad = _edit(client, phase1_opens_at=_fmt(now + timedelta(hours=5)),
                phase1_closes_at=_fmt(now + timedelta(hours=3)), phase0_split="test",
                phase0_part="public")
    text = _text(bad)
    assert bad.status_code == 400
    assert "phases[1].closes_at" in text and "must be after the start" in text
    assert "phases[0].split" in text and "is open" in text
    assert 'aria-invalid="true"' in text
    # overlapping phases
    overlap = _edit(client, phase1_opens_at=_fmt(now + timedelta(hours=1)))
    assert overlap.status_code == 400 and "overlaps phase 'Warm-up'" in _text(overlap)
    # an open phase's end may not move into the past
    past = _edit(client, phase0_closes_at=_fmt(now - timedelta(minutes=5)))
    assert past.status_code == 400 and "not into the past" in _text(past)

    # a good edit: the title, the open phase's end and cap, the next phase's dates, a new phase
    good = _edit(client, title="Open dev 2027", phase0_closes_at=_fmt(now + timedelta(hours=3)),
                 phase0_max_submissions="3",
                 phase1_opens_at=_fmt(now + timedelta(hours=3)),
                 phase1_closes_at=_fmt(now + timedelta(hours=5)),
                 phase2_name="Extra", phase2_split="test", phase2_part="public",
                 phase2_opens_at=_fmt(now + timedelta(hours=6)),
                 phase2_closes_at=_fmt(now + timedelta(hours=7)))
    assert good.status_code == 303, _text(good)[:2000]
    ch = session.scalar(select(Challenge))
    assert ch.title == "Open dev 2027"
    assert [(p.position, p.name, p.max_submissions) for p in ch.phases] == [
        (0, "Warm-up", 3), (1, "Final", None), (2, "Extra", None)]
    actions = [(e.action, e.detail.get("phase")) for e in session.scalars(
        select(AuditEvent).where(AuditEvent.target == "challenge:open-dev")
        .order_by(AuditEvent.id))]
    assert actions[1:] == [("admin.challenge.edit", None),
                           ("admin.challenge.phase.edit", "Warm-up"),
                           ("admin.challenge.phase.edit", "Final"),
                           ("admin.challenge.phase.add", "Extra")]
    edit = session.scalar(select(AuditEvent).where(
        AuditEvent.action == "admin.challenge.phase.edit").order_by(AuditEvent.id))
    assert edit.detail["changes"]["max_submissions"] == [None, 3]

    # an upcoming phase can be removed; an open one cannot
    assert _edit(client, title="Open dev 2027", phase2_position="2",
                 phase2_remove="1").status_code == 303
    session.expire_all()
    assert [p.name for p in session.scalar(select(Challenge)).phases] == ["Warm-up", "Final"]
    refused = _edit(client, title="Open dev 2027", phase0_remove="1")
    assert refused.status_code == 400 and "only a phase that has not opened" in \
        _text(refused)
    # a phase the form leaves out is not dropped silently
    missing = client.post("/admin/challenges/open-dev/edit",
                          data={"title": "x", "phase0_position": "0"})
    assert missing.status_code == 400 and "is missing" in _text(missing)


def test_closed_phase_and_finished_challenge_do_not_change(app, session, organiser):
    ch = session.scalar(select(Challenge))
    admin = session.scalar(select(User))
    later = utcnow() + timedelta(hours=2, minutes=30)  # Warm-up closed, Final open
    with app.app_context():
        with pytest.raises(ServiceError) as err:
            svc.update_challenge(session, admin, ch, phases=[
                {"position": 0, "daily_quota": "9"}, {"position": 1}], now=later)
        assert [p.field for p in err.value.problems.items] == ["phases[0].daily_quota"]
        assert "closed at" in str(err.value.problems.items[0])
        session.rollback()
        svc.finish_challenge(session, ch, now=utcnow() + timedelta(hours=5))
        with pytest.raises(ServiceError, match="can no longer change"):
            svc.update_challenge(session, admin, ch, title="New")


def test_phase_board_ranks_the_phase_and_freezes_at_its_end(app, client, organiser, session,
                                                             baseline_files):
    token = organiser
    _enter(client)
    first = _post(client, token, baseline_files["dev"], "dev", "first")
    assert first.status_code == 202, first.json
    page = client.get("/challenges/open-dev").get_data(as_text=True)
    assert 'id="submit-to-challenge"' in page
    assert "/submit?benchmark=syncred&amp;split=dev&amp;challenge=open-dev" in page
    board = client.get("/api/v1/challenges/open-dev/phases/0").json
    assert board["source"] == "live" and board["part"] == "all"
    rows = board["tasks"][0]["rows"]
    assert [(r["rank"], r["team"], r["submission_id"]) for r in rows] == [
        (1, "Team Ada", first.json["id"])]
    cell = rows[0]["values"][board["tasks"][0]["primary"]]
    assert cell["n"] > 0 and cell["ci_low"] is not None
    assert "Ranked by" in board["tasks"][0]["rule"]
    page = client.get("/challenges/open-dev/phases/0").get_data(as_text=True)
    assert "Team Ada" in page and "n=" in page and "Live:" in page
    # the baselines (made before the phase) are not on it, nor the team's submissions made to
    # no challenge; the next phase's board is empty
    assert all(r["team"] for r in rows)
    standing = _post(client, token, baseline_files["dev"], "dev", "standing", challenge="")
    assert standing.status_code == 202
    assert [r["submission_id"] for r in client.get(
        "/api/v1/challenges/open-dev/phases/0").json["tasks"][0]["rows"]] == [first.json["id"]]
    assert client.get("/api/v1/challenges/open-dev/phases/1").json["tasks"][0]["rows"] == []
    assert client.get("/challenges/open-dev/phases/7").status_code == 404

    # the reconciler freezes the phase when it closes: later changes leave the board as it was
    from leaderboard.server.jobs.reconcile import reconcile
    with app.app_context():
        reconcile(now=utcnow() + timedelta(hours=2, minutes=1))
    session.expire_all()
    phase = session.scalar(select(Challenge)).phases[0]
    assert phase.frozen_at is not None
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        s.get(Submission, first.json["id"]).hidden = True
    frozen = client.get("/api/v1/challenges/open-dev/phases/0").json
    assert frozen["source"] == "frozen"
    assert [r["submission_id"] for r in frozen["tasks"][0]["rows"]] == [first.json["id"]]
    assert "Frozen when the phase closed" in client.get(
        "/challenges/open-dev/phases/0").get_data(as_text=True)


def test_admin_finishes_an_ended_challenge(app, client, organiser, session):
    assert client.post("/admin/challenges/open-dev/finish").status_code == 303
    session.expire_all()
    assert session.scalar(select(Challenge)).finalized_at is None  # still running: refused
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        for p in s.scalar(select(Challenge)).phases:  # move it into the past
            p.opens_at -= timedelta(hours=6)
            p.closes_at -= timedelta(hours=6)
    listing = client.get("/admin/challenges").get_data(as_text=True)
    assert "Finish now" in listing
    assert client.post("/admin/challenges/open-dev/finish").status_code == 303
    session.expire_all()
    assert session.scalar(select(Challenge)).finalized_at is not None
    assert session.scalar(select(Benchmark.private_revealed))
    event = session.scalar(select(AuditEvent).where(AuditEvent.action == "challenge.finish"))
    assert event.actor_email == "ada@example.org" and event.detail["private_revealed"]
    assert client.get("/api/v1/challenges/open-dev/phases/1").json["source"] == "final"


def test_submit_link_opens_the_form_on_the_phase(client, organiser):
    """The open phase takes the dev split only: the form submits to the challenge, on its own
    benchmark and that split, preselected (issue 33: it opened another benchmark)."""
    assert 'id="enter-challenge"' in _text(client.get("/challenges/open-dev"))
    _enter(client)
    page = _text(client.get("/challenges/open-dev"))
    assert "Your team has entered this challenge" in page
    assert "/submit?benchmark=syncred&split=dev&challenge=open-dev" in page
    form = _text(client.get("/submit?benchmark=syncred&split=dev&challenge=open-dev"))
    assert '<input type="hidden" name="challenge" id="challenge" value="open-dev">' in form
    assert '<option value="syncred" data-splits="dev" selected' in form
    assert '<option value="dev" selected>dev</option>' in form
    assert '<option value="test"' not in form
    assert "phase Warm-up (dev split)" in form
    # without ?challenge= the form is the standing board's: every split the team may use
    plain = _text(client.get("/submit?benchmark=syncred"))
    assert 'name="challenge"' not in plain and '<option value="syncred"' in plain


def test_a_phase_freezes_once_its_last_uploads_have_settled(app, session, organiser):
    """An upload made just before the end is scored after it: the board waits for it."""
    ch = session.scalar(select(Challenge))
    team_id = session.scalar(select(User.team_id))
    late = Submission(benchmark_id=ch.benchmark_id, split="dev", team_id=team_id,
                      method_name="last minute", status="queued", phase_id=ch.phases[0].id,
                      created_at=ch.phases[0].closes_at - timedelta(seconds=1))
    session.add(late)
    session.commit()
    after = ch.phases[0].closes_at + timedelta(minutes=1)
    with app.app_context():
        svc.finish_due(session, now=after)
        assert ch.phases[0].frozen_at is None  # still being scored
        late.status = "failed"
        svc.finish_due(session, now=after)
        assert ch.phases[0].frozen_at == after
        late.status = "scoring"
        late.created_at, late.split = ch.phases[1].opens_at, "test"
        late.phase_id = ch.phases[1].id
        with pytest.raises(ServiceError, match="still being scored"):
            svc.finish_challenge(session, ch, now=ch.phases[1].closes_at)
        assert svc.finish_due(session, now=ch.phases[1].closes_at) == []
