"""The server issues receipts into its log as submissions change, and serves heads and proofs
that verify (SQLite and PostgreSQL)."""
from __future__ import annotations

import json

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from leaderboard.core.transparency import merkle, receipts
from leaderboard.core.transparency.signing import KeySet
from leaderboard.server.models import Benchmark, Submission, User
from leaderboard.server.models.transparency import LOG_APPEND_ONLY_MESSAGE, LogEntry
from leaderboard.server.services import admin_ops
from tests.transparency.conftest import make_admin, post_predictions


def _receipts(client, sid) -> list[dict]:
    out = []
    for e in client.get("/api/v1/log/entries?start=0").get_json()["entries"]:
        doc = json.loads(e["data"])
        if doc["receipt"]["submission"]["id"] == sid:
            out.append(doc)
    return out


def _admin(app, fn):
    db = app.extensions["lb_db"]
    admin_id = make_admin(app)
    with db.scope() as s:
        fn(s, s.get(User, admin_id))


def test_receipts_follow_a_submission_and_stay_sealed_until_the_reveal(app, client, scored):
    _token, dev, test = scored
    keys = KeySet.from_document(client.get("/api/v1/keys").get_json())
    assert client.get("/.well-known/leaderboard-keys.json").get_json() == \
        client.get("/api/v1/keys").get_json()
    (dev_r,) = _receipts(client, dev)
    assert dev_r["receipt"]["event"] == "scored" and dev_r["receipt"]["sealed_parts"] == []
    assert receipts.check_commitment(dev_r["receipt"])  # nothing sealed: salt shown
    (first,) = _receipts(client, test)
    body = first["receipt"]
    receipts.check_signature(first, keys)
    assert {r["part"] for r in body["records"]} == {"public"}
    assert body["sealed_parts"] == ["all", "private"] and "salt" not in body
    assert body["input"]["predictions_sha256"].startswith("sha256:")
    assert body["pack"]["digest"].startswith("sha256:") and body["benchmark"]["key"] == "syncred"
    with app.extensions["lb_db"].scope() as s:
        from leaderboard.server.models import Score
        private = {repr(v) for v in s.scalars(select(Score.value).where(
            Score.submission_id == test, Score.part.in_(("private", "all")),
            Score.slice_key == ""))} - {repr(r) for r in s.scalars(select(Score.value).where(
                Score.submission_id == test, Score.part == "public"))}
    text_ = json.dumps(first)
    assert private and not any(f'"{v}"' in text_ for v in private)

    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, test), True))
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, test), False))
    _admin(app, lambda s, a: admin_ops.disqualify(s, a, s.get(Submission, test), "cheating"))
    _admin(app, lambda s, a: admin_ops.update_benchmark(
        s, a, s.scalar(select(Benchmark)), private_revealed=True))
    chain = _receipts(client, test)
    assert [c["receipt"]["event"] for c in chain] == ["scored", "hidden", "unhidden",
                                                      "disqualified", "revealed"]
    for prev, nxt in zip(chain, chain[1:]):
        assert nxt["receipt"]["previous_index"] == prev["receipt"]["log_index"]
    revealed = chain[-1]["receipt"]
    assert revealed["sealed_parts"] == [] and receipts.check_commitment(revealed)
    assert revealed["records_commitment"] == body["records_commitment"]  # fixed at scoring
    assert {r["part"] for r in revealed["records"]} == {"all", "public", "private"}
    assert revealed["submission"]["disqualified"] == "cheating"
    # the dev submission's receipt did not change at the reveal: none issued
    assert len(_receipts(client, dev)) == 1
    got = client.get(f"/api/v1/submissions/{test}/receipt")
    assert got.status_code == 200 and json.loads(got.data) == chain[-1]
    assert "attachment" in got.headers["Content-Disposition"]
    old = client.get(f"/api/v1/submissions/{test}/receipt?index={body['log_index']}")
    assert json.loads(old.data) == first
    assert client.get(f"/api/v1/submissions/{test}/receipt?index=0").status_code == 404


def test_rescoring_is_logged_and_a_no_op_commit_is_not(app, client, scored):
    _token, dev, _test = scored
    db = app.extensions["lb_db"]
    before = client.get("/api/v1/log/head").get_json()["head"]["tree_size"]
    with db.scope() as s:
        s.get(Submission, dev).description = "edited"  # nothing a receipt shows
    assert client.get("/api/v1/log/head").get_json()["head"]["tree_size"] == before
    _admin(app, lambda s, a: admin_ops.rescore(s, a, [s.get(Submission, dev)], deadline_s=60))
    assert [c["receipt"]["event"] for c in _receipts(client, dev)] == ["scored", "unscored"]
    from leaderboard.server.jobs.scoring import score_submission
    with app.app_context():
        score_submission(dev)
    events = [c["receipt"]["event"] for c in _receipts(client, dev)]
    assert events == ["scored", "unscored", "rescored"]


def test_private_submissions_are_not_logged(client, auth, imported, baseline_files):
    token = auth.member()
    sid = post_predictions(client, token, baseline_files["dev"].read_bytes(), is_public="0")
    assert client.get(f"/api/v1/submissions/{sid}", headers={
        "Authorization": f"Bearer {token}"}).get_json()["status"] == "scored"
    assert client.get("/api/v1/log/head").get_json()["head"]["tree_size"] == 0
    resp = client.get(f"/api/v1/submissions/{sid}/receipt")
    assert resp.status_code == 404 and "no receipt" in resp.get_json()["message"]


def test_heads_and_proofs_verify(app, client, scored):
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, scored[2]), True))
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, scored[2]), False))
    keys = KeySet.from_document(client.get("/api/v1/keys").get_json())
    head = receipts.load(client.get("/api/v1/log/head").get_json(), what="tree head")
    receipts.check_signature(head, keys)
    size, root = head["head"]["tree_size"], receipts.head_root(head)
    entries = client.get("/api/v1/log/entries?start=0&count=10").get_json()["entries"]
    assert [e["index"] for e in entries] == list(range(size)) and size == 4
    leaves = [merkle.leaf_hash(e["data"].encode()) for e in entries]
    assert merkle.Tree(leaves).root() == root
    for i, leaf in enumerate(leaves):
        for n in range(i + 1, size + 1):
            p = client.get(f"/api/v1/log/proof/inclusion?index={i}&size={n}").get_json()
            assert p["leaf_hash"] == leaf.hex()
            merkle.verify_inclusion(i, n, leaf, [bytes.fromhex(h) for h in p["proof"]],
                                    merkle.Tree(leaves[:n]).root())
    for m in range(size + 1):
        old = receipts.load(client.get(f"/api/v1/log/head?size={m}").get_json(),
                            what="tree head")
        p = client.get(f"/api/v1/log/proof/consistency?first={m}").get_json()
        merkle.verify_consistency(m, size, receipts.head_root(old), root,
                                  [bytes.fromhex(h) for h in p["proof"]])
    assert client.get("/api/v1/log/entries/1").data == entries[1]["data"].encode()
    for url, status in (("/api/v1/log/proof/inclusion", 400),
                        ("/api/v1/log/proof/inclusion?index=9", 404),
                        ("/api/v1/log/proof/inclusion?index=x", 400),
                        ("/api/v1/log/head?size=99", 404),
                        ("/api/v1/log/proof/consistency?first=5&second=3", 400),
                        ("/api/v1/log/proof/consistency?first=1&second=9", 404),
                        
                        ("/api/v1/log/entries?count=5000", 400),
                        ("/api/v1/log/entries/77", 404)):
        resp = client.get(url)
        assert resp.status_code == status, (url, resp.get_json())
        assert resp.get_json()["message"]


def test_the_log_refuses_update_and_delete(app, scored):
    db = app.extensions["lb_db"]
    for sql in ("UPDATE log_entry SET event = 'x'", "DELETE FROM log_entry",
                "UPDATE log_node SET hash = hash", "DELETE FROM log_node"):
        with pytest.raises(DBAPIError, match=LOG_APPEND_ONLY_MESSAGE), db.engine.begin() as c:
            c.execute(text(sql))
    with pytest.raises(IntegrityError), db.scope() as s:  # an index is taken once
        s.add(LogEntry(idx=0, data="{}", event="x", benchmark_key="x"))
    with db.engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM log_entry")).scalar_one() == 2


def test_the_submission_page_links_its_receipt(client, scored):
    page = client.get(f"/submissions/{scored[1]}").get_data(as_text=True)
    assert f"/api/v1/submissions/{scored[1]}/receipt" in page and "signed receipt" in page


def test_a_container_submissions_receipt_names_its_image(app, client, imported):
    from leaderboard.server.models import Score, Team
    from leaderboard.server.models.containers import ContainerRun

    db = app.extensions["lb_db"]
    with db.scope() as s:
        bench = s.scalar(select(Benchmark))
        team = Team(name="Boxes", invite_code="boxes")
        s.add(team)
        s.flush()
        sub = Submission(benchmark_id=bench.id, split="dev", team_id=team.id, kind="container",
                         method_name="detector:1", file_sha256="cd" * 32, status="scoring")
        s.add(sub)
        s.flush()
        s.add(ContainerRun(submission_id=sub.id, image_id="sha256:" + "ef" * 32))
        sid = sub.id
    assert client.get(f"/api/v1/submissions/{sid}/receipt").status_code == 404  # not scored
    with db.scope() as s:
        s.add(Score(submission_id=sid, part="all", task="detection", metric="accuracy",
                    slice_key="", slice_json={}, value=2 / 3, ci_low=0.5, ci_high=0.8, n=9))
        s.get(Submission, sid).status = "scored"
    body = json.loads(client.get(f"/api/v1/submissions/{sid}/receipt").data)["receipt"]
    assert body["input"] == {"image_digest": "sha256:" + "ef" * 32,
                             "upload_sha256": "sha256:" + "cd" * 32}
    assert body["submission"]["kind"] == "container" and body["submission"]["team"] == "Boxes"
    assert body["records"] == [{"part": "all", "task": "detection", "metric": "accuracy",
                                "slice": {}, "value": "0.6666666666666666", "ci_low": "0.5",
                                "ci_high": "0.8", "n": 9, "judge": None,
                                "metric_version": "1"}]


def test_a_rotated_key_signs_from_then_on_and_old_receipts_stay_valid(app, client, scored):
    from leaderboard.core.transparency import keyfiles

    _token, dev, test = scored
    (old,) = _receipts(client, test)
    _prev, new = keyfiles.rotate(app.config["RECEIPT_KEY_DIR"])
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, test), True))
    latest = _receipts(client, test)[-1]
    assert latest["signature"]["key_id"] == new.key_id != old["signature"]["key_id"]
    published = client.get("/api/v1/keys").get_json()
    assert [k["not_after"] is None for k in published["keys"]] == [False, True]
    keys = KeySet.from_document(published)
    for doc in (old, latest, _receipts(client, dev)[0]):
        receipts.check_signature(doc, keys)
    head = receipts.load(client.get("/api/v1/log/head").get_json(), what="tree head")
    assert receipts.check_signature(head, keys).key_id == new.key_id


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)  # SQLite: one writer, no interleaving
def test_concurrent_changes_chain_in_commit_order(app, client, scored, db_url):
    """B read the receipt state before A committed a change to the same submission: B's
    receipt still follows A's (the state is read again under the log's lock)."""
    from leaderboard.server.models import Score
    from leaderboard.server.models.transparency import ReceiptState

    test = scored[2]
    db = app.extensions["lb_db"]
    b = db.session()
    try:  # B changes a score (not the submission's row, which A's update would wait for)
        b.scalar(select(Score).where(Score.submission_id == test, Score.part == "public")
                 .limit(1)).value = 0.125
        b.flush()
        stale = b.get(ReceiptState, test).last_index
        with db.scope() as a:
            a.get(Submission, test).hidden = True
        b.commit()
    finally:
        b.close()
    chain = _receipts(client, test)
    assert [c["receipt"]["event"] for c in chain] == ["scored", "hidden", "rescored"]
    assert chain[1]["receipt"]["previous_index"] == stale
    assert chain[2]["receipt"]["previous_index"] == chain[1]["receipt"]["log_index"]
    assert chain[2]["receipt"]["submission"]["hidden"] is True
