"""A submission hidden before it was first scored was never on a board: its receipts and log
entries show none of its values (every part sealed under the commitment) until it is unhidden;
one hidden after it was shown keeps showing what was shown (issue 36, finding 3). Jobs queue in
a real Redis, so that the admin hides the submission while it waits; SQLite and PostgreSQL."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from leaderboard.core.transparency import receipts
from leaderboard.core.transparency.canonical import encode_real
from leaderboard.core.transparency.signing import KeySet
from leaderboard.server.services import admin_ops
from leaderboard.server.jobs.scoring import score_submission
from leaderboard.server.models import Score, Submission, User
from leaderboard.verify.audit import walk
from tests.server.conftest import make_config, redis_url  # noqa: F401  (fixture)
from tests.transparency.conftest import make_admin, post_predictions


@pytest.fixture
def app_config(db_url, tmp_path, redis_url):  # noqa: F811
    return make_config(db_url, tmp_path, REDIS_URL=redis_url)


def _admin(app, fn):
    admin_id = make_admin(app)
    with app.extensions["lb_db"].scope() as s:
        fn(s, s.get(User, admin_id))


def _entries(client, sid) -> list[dict]:
    """The log entries of ``sid``: the log's own data, as anyone downloads it."""
    out = []
    for e in client.get("/api/v1/log/entries?start=0").get_json()["entries"]:
        if json.loads(e["data"])["receipt"]["submission"]["id"] == sid:
            out.append(e)
    return out


def _values(app, sid) -> set[str]:
    """Every stored value of ``sid``, as a receipt would write it."""
    with app.extensions["lb_db"].scope() as s:
        return {encode_real(v) for v in s.scalars(select(Score.value).where(
            Score.submission_id == sid)) if v is not None}


def test_hidden_before_first_scored_discloses_nothing_until_unhidden(
        app, client, auth, imported, baseline_files):
    token = auth.member()
    sid = post_predictions(client, token, baseline_files["test"].read_bytes(), split="test")
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, sid), True,
                                                  reason="checking"))
    with app.app_context():
        score_submission(sid)
    values = _values(app, sid)
    assert values

    (entry,) = _entries(client, sid)
    doc = json.loads(entry["data"])
    body = doc["receipt"]
    assert body["event"] == "scored" and body["submission"]["hidden"] is True
    assert body["records"] == [] and body["sealed_parts"] == ["all", "private", "public"]
    assert "salt" not in body and body["records_commitment"].startswith("sha256:")
    served = client.get(f"/api/v1/submissions/{sid}/receipt").get_data(as_text=True)
    for text in (entry["data"], served):
        assert not any(f'"{v}"' in text for v in values)
    keys = KeySet.from_document(client.get("/api/v1/keys").get_json())
    receipts.check_signature(doc, keys)

    # a reveal of the private part discloses nothing of a never-shown submission either
    _admin(app, lambda s, a: admin_ops.update_benchmark(
        s, a, s.get(Submission, sid).benchmark, private_revealed=True))
    after_reveal = json.loads(_entries(client, sid)[-1]["data"])["receipt"]
    assert after_reveal["event"] == "revealed" and after_reveal["records"] == []

    # unhidden: on the boards from now on, and its receipt shows every part (revealed), with
    # the salt that opens the commitment made when it was scored
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, sid), False))
    chain = [json.loads(e["data"])["receipt"] for e in _entries(client, sid)]
    assert [b["event"] for b in chain] == ["scored", "revealed", "unhidden"]
    shown = chain[-1]
    assert shown["sealed_parts"] == [] and receipts.check_commitment(shown)
    assert shown["records_commitment"] == body["records_commitment"]
    assert {r["value"] for r in shown["records"]} >= values - {None}

    # an auditor's walk of the log finds every signature, chain and commitment in order
    size = client.get("/api/v1/log/head").get_json()["head"]["tree_size"]
    _root, bodies, findings = walk(
        lambda start: client.get(f"/api/v1/log/entries?start={start}").get_json()["entries"],
        size, keys)
    assert findings == [] and [b["event"] for b in bodies if b["submission"]["id"] == sid] == \
        ["scored", "revealed", "unhidden"]

    # hidden again after it was shown: what was shown stays shown (it was public)
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, sid), True))
    last = json.loads(_entries(client, sid)[-1]["data"])["receipt"]
    assert last["event"] == "hidden" and last["records"] == shown["records"]


def test_hidden_after_it_was_shown_keeps_its_public_part(app, client, auth, imported,
                                                         baseline_files):
    token = auth.member()
    sid = post_predictions(client, token, baseline_files["test"].read_bytes(), split="test")
    with app.app_context():
        score_submission(sid)
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, sid), True))
    first, hidden = [json.loads(e["data"])["receipt"] for e in _entries(client, sid)]
    assert (first["event"], hidden["event"]) == ("scored", "hidden")
    assert {r["part"] for r in first["records"]} == {"public"} == {
        r["part"] for r in hidden["records"]}
