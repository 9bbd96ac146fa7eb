"""``leaderboard verify`` and ``leaderboard audit-log`` against a live server: each tampering
is caught with its own exit code and message (docs/verify.md's table)."""
from __future__ import annotations

import json
import shutil

import pytest
import requests
from click.testing import CliRunner
from sqlalchemy import select, text

from leaderboard.cli import main
from leaderboard.core.transparency import merkle, receipts
from leaderboard.core.transparency.signing import Signer, load_private


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def db_url(sqlite_url):  # the tampering below is per dialect; PostgreSQL gets its own tests
    return sqlite_url


@pytest.fixture
def logged(live_server, scored, tmp_path):
    """(server URL, the dev receipt's file, the test receipt's file)."""
    _token, dev, test = scored
    files = []
    for sid in (dev, test):
        path = tmp_path / f"receipt-{sid}.json"
        path.write_bytes(requests.get(f"{live_server}/api/v1/submissions/{sid}/receipt",
                                      timeout=10).content)
        files.append(path)
    return live_server, files[0], files[1]


def _superuser(app, *sql):
    """Change the log as someone with the database's own rights would (triggers dropped)."""
    with app.extensions["lb_db"].engine.begin() as c:
        for t in ("log_entry", "log_node"):
            for op in ("update", "delete"):
                c.execute(text(f"DROP TRIGGER IF EXISTS {t}_no_{op}"))
        for stmt in sql:
            c.execute(text(stmt))


def _rewrite_log(app, entries: list[bytes]) -> None:
    """Replace the whole log by ``entries`` with a correct tree over them (a careful forger)."""
    tree = merkle.Tree(merkle.leaf_hash(d) for d in entries)
    _superuser(app, "DELETE FROM log_entry", "DELETE FROM log_node")
    with app.extensions["lb_db"].engine.begin() as c:
        for i, d in enumerate(entries):
            c.execute(text("INSERT INTO log_entry (idx, data, event, benchmark_key, created_at) "
                           "VALUES (:i, :d, 'x', 'syncred', CURRENT_TIMESTAMP)"),
                      {"i": i, "d": d.decode()})
        for level, nodes in enumerate(tree.levels):
            for i, h in enumerate(nodes):
                c.execute(text("INSERT INTO log_node (key, hash) VALUES (:k, :h)"),
                          {"k": merkle.node_key(level, i), "h": h})


def _entries(url) -> list[bytes]:
    return [e["data"].encode() for e in
            requests.get(f"{url}/api/v1/log/entries", timeout=10).json()["entries"]]


def test_a_receipt_verifies_end_to_end(logged, demo_packs, baseline_files, tmp_path):
    url, dev_file, test_file = logged
    head = tmp_path / "head.json"
    res = _run("verify", dev_file, "--server", url, "--save-head", head)
    assert res.exit_code == 0, res.output
    assert "signature: valid" in res.output and "in the log: entry 0" in res.output
    res = _run("verify", dev_file, "--server", url, "--head", head, "--pack",
               demo_packs["syncred"], "--predictions", baseline_files["dev"])
    assert res.exit_code == 0, res.output
    assert "consistent with the saved head" in res.output
    assert "scores recomputed" in res.output and "equal the receipt's exactly" in res.output
    res = _run("verify", test_file, "--server", url)
    assert res.exit_code == 0 and "sealed parts: all, private" in res.output
    keys = tmp_path / "keys.json"
    keys.write_text(requests.get(f"{url}/api/v1/keys", timeout=10).text)
    res = _run("verify", dev_file, "--server", "none", "--keys", keys)  # offline
    assert res.exit_code == 0, res.output


def test_a_changed_byte_is_a_bad_signature(logged):
    url, dev_file, _ = logged
    doc = json.loads(dev_file.read_bytes())
    doc["receipt"]["records"][0]["value"] = "0.99"
    dev_file.write_bytes(receipts.encode(doc))
    res = _run("verify", dev_file, "--server", url)
    assert res.exit_code == 3 and "bad signature" in res.output
    dev_file.write_bytes(dev_file.read_bytes()[:-5])
    res = _run("verify", dev_file, "--server", url)
    assert res.exit_code == 2 and "not valid JSON" in res.output


def test_an_unknown_key_is_refused(logged, tmp_path):
    url, dev_file, _ = logged
    from leaderboard.core.transparency import keyfiles
    other = tmp_path / "other"
    keyfiles.generate(other)
    res = _run("verify", dev_file, "--server", "none", "--keys", other / "published.json")
    assert res.exit_code == 4 and "unknown key" in res.output and "not among" in res.output


def test_wrong_files_and_different_scores(logged, demo_packs, baseline_files, tmp_path):
    url, dev_file, _ = logged
    res = _run("verify", dev_file, "--server", url, "--pack", demo_packs["syncred"],
               "--predictions", baseline_files["test"])
    assert res.exit_code == 8 and "wrong file" in res.output and "SHA-256" in res.output
    pack = tmp_path / "pack"
    shutil.copytree(demo_packs["syncred"], pack)
    labels = pack / "splits" / "dev" / "labels.jsonl"
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    for r in rows[:5]:
        r["label"] = "real" if r["label"] == "fake" else "fake"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    shutil.rmtree(pack / ".cache", ignore_errors=True)
    res = _run("verify", dev_file, "--server", url, "--pack", pack, "--predictions",
               baseline_files["dev"])
    assert res.exit_code == 7 and "scores differ" in res.output and "in the receipt" in res.output
    (pack / "splits" / "dev" / "items.jsonl").write_text("{}\n")
    res = _run("verify", dev_file, "--server", url, "--pack", pack, "--predictions",
               baseline_files["dev"])
    assert res.exit_code == 8 and "items.jsonl differs" in res.output


def test_a_deleted_entry_is_not_in_the_log(app, logged):
    url, dev_file, _ = logged
    _superuser(app, "DELETE FROM log_entry WHERE idx = 0")
    res = _run("verify", dev_file, "--server", url)
    assert res.exit_code == 5 and "not in the log" in res.output and "removed" in res.output
    res = _run("audit-log", "--server", url)
    assert res.exit_code == 5 and "entry 0 is missing" in res.output


def test_an_inserted_entry_is_caught(app, logged):
    url, _dev, _test = logged
    entries = _entries(url)
    _rewrite_log(app, entries + [entries[0]])  # a replayed receipt, with a correct tree
    res = _run("audit-log", "--server", url)
    assert res.exit_code == 5 and "is the receipt issued as entry 0" in res.output


def test_a_rewritten_history_is_a_fork(app, logged, tmp_path):
    url, dev_file, test_file = logged
    head = tmp_path / "head.json"
    assert _run("audit-log", "--server", url, "--save-head", head).exit_code == 0
    # the operator (who holds the key) rewrites entry 0 and rebuilds a valid tree over it
    signer = Signer(load_private((tmp_path / "data" / "keys" / "signing.pem").read_bytes()))
    entries = _entries(url)
    forged = json.loads(entries[0])
    forged["receipt"]["records"][0]["value"] = "0.99"
    entries[0] = receipts.encode(receipts.sign(forged["receipt"], signer))
    _rewrite_log(app, entries)
    res = _run("verify", test_file, "--server", url, "--head", head)
    assert res.exit_code == 6 and "log forked" in res.output, res.output
    res = _run("audit-log", "--server", url, "--from", head)
    assert res.exit_code == 6 and "does not extend the saved head" in res.output


def test_the_auditor_rebuilds_the_boards(app, logged, scored, baseline_files, tmp_path):
    url, _dev, _test = logged
    head = tmp_path / "head.json"
    res = _run("audit-log", "--server", url, "--save-head", head)
    assert res.exit_code == 0, res.output
    assert "2 entries: every signature valid" in res.output and "boards rebuilt" in res.output
    # a second team, a disqualification and the reveal: the boards change, all through receipts
    from leaderboard.server.services import admin_ops
    from leaderboard.server.models import Benchmark, Submission, User
    from tests.server.conftest import AuthActions
    from tests.transparency.conftest import make_admin, post_predictions

    client = app.test_client()
    other = AuthActions(client).member(email="bo@example.org", team="Team Bo")
    post_predictions(client, other, baseline_files["test"].read_bytes(), split="test", method="bo")
    db, admin_id = app.extensions["lb_db"], make_admin(app)
    with db.scope() as s:
        actor = s.get(User, admin_id)
        admin_ops.disqualify(s, actor, s.get(Submission, scored[2]), "late")
        admin_ops.update_benchmark(s, actor, s.scalar(select(Benchmark)), private_revealed=True)
    res = _run("audit-log", "--server", url, "--from", head)
    assert res.exit_code == 0, res.output
    assert "consistent with the saved head of 2 entries" in res.output
    board = requests.get(f"{url}/api/v1/boards/syncred/detection/test?mode=all", timeout=10).json()
    assert board["part"] == "private" and len(board["rows"]) == 2


def test_a_board_edited_behind_the_logs_back_is_reported(app, logged, scored):
    url, _dev, _test = logged
    _token, dev, test = scored
    from leaderboard.server.boards.cache import invalidate_boards
    from leaderboard.server.boards.ledger import refresh_submissions
    db = app.extensions["lb_db"]
    with db.engine.begin() as c:  # raw SQL: no session, so no receipt
        c.execute(text("UPDATE score SET value = 0.99 WHERE submission_id = :s AND "
                       "metric = 'tpr_at_fpr_5' AND slice_key = ''"), {"s": dev})
        c.execute(text("UPDATE submission SET hidden = :t WHERE id = :s"), {"s": test, "t": True})
    with db.scope() as s:
        refresh_submissions(s, {dev, test})
    invalidate_boards()
    res = _run("audit-log", "--server", url)
    assert res.exit_code == 10, res.output
    assert f"submission {dev} shows tpr_at_fpr_5 = 0.99 on the live board; the log says" \
        in res.output
    assert f"syncred/detection/test: submission {test} is missing from the live board" \
        in res.output
