"""``leaderboard verify`` says when a genuine receipt is no longer its submission's current one
(exit 11, naming the entry that superseded it and why), checked against the log; and refuses
JSON too deep or too large for the parser as malformed (exit 2) before parsing (issue 36,
findings 4 and 5)."""
from __future__ import annotations

import threading

import pytest
import requests
from werkzeug.serving import make_server
from werkzeug.wrappers import Response

from leaderboard.core.transparency import bounds
from leaderboard.core.transparency.errors import EXIT_CODES, Malformed
from leaderboard.server.services import admin_ops
from leaderboard.server.models import Submission, User
from tests.transparency.conftest import make_admin
from tests.transparency.test_verify_cli import _run, _superuser, db_url, logged  # noqa: F401

DEEP = b"[" * 100_000


def _admin(app, fn):
    admin_id = make_admin(app)
    with app.extensions["lb_db"].scope() as s:
        fn(s, s.get(User, admin_id))


def _download(url, sid, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(requests.get(f"{url}/api/v1/submissions/{sid}/receipt", timeout=10).content)
    return path


def test_a_superseded_receipt_names_the_entry_that_superseded_it(app, logged, scored,
                                                                 tmp_path):
    url, dev_file, test_file = logged
    test = scored[2]
    res = _run("verify", test_file, "--server", url)
    assert res.exit_code == 0 and f"current: entry 1 is submission {test}'s latest" in res.output
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, test), True))
    res = _run("verify", test_file, "--server", url)
    assert res.exit_code == 11 == EXIT_CODES["superseded"], res.output
    assert "FAILED (superseded): superseded by entry 2 (hidden)" in res.output
    assert "signature: valid" in res.output and "in the log: entry 1" in res.output
    hidden_file = _download(url, test, tmp_path, "hidden.json")
    assert _run("verify", hidden_file, "--server", url).exit_code == 0

    _admin(app, lambda s, a: admin_ops.disqualify(s, a, s.get(Submission, test), "late"))
    res = _run("verify", test_file, "--server", url)
    assert res.exit_code == 11, res.output
    assert ("superseded by entry 2 (hidden): submission "
            f"{test}'s current receipt is entry 3 (disqualified)") in res.output
    assert "later receipts of submission" in res.output and "2 (hidden), 3 (disqualified)" \
        in res.output
    res = _run("verify", hidden_file, "--server", url)
    assert res.exit_code == 11 and "superseded by entry 3 (disqualified)" in res.output
    # the other submission's receipt is untouched: still current
    assert _run("verify", dev_file, "--server", url).exit_code == 0
    # offline, nothing can say: the report says it was not checked
    keys = tmp_path / "keys.json"
    keys.write_text(requests.get(f"{url}/api/v1/keys", timeout=10).text)
    res = _run("verify", test_file, "--server", "none", "--keys", keys)
    assert res.exit_code == 0 and "not checked: whether a later receipt supersedes" in res.output


def test_a_broken_chain_to_the_later_receipt_is_not_in_the_log(app, logged, scored):
    url, _dev_file, test_file = logged
    test = scored[2]
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, test), True))
    _admin(app, lambda s, a: admin_ops.set_hidden(s, a, s.get(Submission, test), False))
    # the entry between this receipt and the latest vanishes from the log's table
    _superuser(app, "DELETE FROM log_entry WHERE idx = 2")
    res = _run("verify", test_file, "--server", url)
    assert res.exit_code == 5 and "the log has no entry 2" in res.output, res.output


def test_deep_or_huge_json_is_malformed_before_parsing(logged, tmp_path):
    url, dev_file, _ = logged
    deep = tmp_path / "deep.json"
    deep.write_bytes(DEEP)
    res = _run("verify", deep, "--server", url)  # a RecursionError traceback before
    assert res.exit_code == 2 and "100,000 levels deep" in res.output, res.output
    for option in ("--head", "--keys"):
        res = _run("verify", dev_file, "--server", url, option, deep)
        assert res.exit_code == 2 and "levels deep" in res.output, (option, res.output)
    res = _run("audit-log", "--server", url, "--from", deep)
    assert res.exit_code == 2 and "levels deep" in res.output
    # brackets inside strings are text, not nesting
    assert bounds.nesting_depth(b'{"a": "' + DEEP + b'", "b": [[1]]}') == 3
    assert bounds.nesting_depth(b'["\\"[[[[", {"k": []}]') == 3
    with pytest.raises(Malformed, match="more than the 100 a document"):
        bounds.check_bounds(b"[" + b"1," * 60 + b"1]", what="receipt", max_bytes=100)


@pytest.fixture
def hostile_server():
    """A server whose every answer is 100,000 nested arrays."""
    def wsgi(environ, start_response):
        return Response(DEEP, mimetype="application/json")(environ, start_response)

    server = make_server("127.0.0.1", 0, wsgi, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(10)
    server.server_close()


def test_a_deep_answer_from_the_server_is_refused(logged, hostile_server):
    _url, dev_file, _ = logged
    res = _run("verify", dev_file, "--server", hostile_server)
    assert res.exit_code == 9 and "levels deep" in res.output, res.output
    res = _run("audit-log", "--server", hostile_server)
    assert res.exit_code == 9 and "levels deep" in res.output, res.output


def test_the_exit_codes_are_documented():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "verify.md").read_text()
    for kind, code in EXIT_CODES.items():
        assert f"| {code} | {kind.split()[0]}" in doc, kind
