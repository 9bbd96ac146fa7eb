"""The CLI client retries what may be transient and never submits twice (issue 17).

A live server (werkzeug in a thread, jobs inline) behind a small WSGI fault injector: it can
answer an upload 503 / 502 / 429 with Retry-After, or let the app store the upload and then cut
the connection before any answer (a web worker killed after the commit). The client's derived
idempotency key makes its retry return the stored submission.
"""
from __future__ import annotations

import socket
import threading

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select
from werkzeug.serving import make_server
from werkzeug.wsgi import get_input_stream

from leaderboard import client as lbclient
from leaderboard.server.models import QuotaUsage, Submission


class Faults:
    """WSGI middleware: the next uploads (``POST /api/v1/submissions``) meet ``plan`` in order:
    "cut" (the app runs, then the connection is closed unanswered), an int status (answered
    at once with that status and ``Retry-After``), or None (passed through)."""

    def __init__(self, app):
        self.app, self.plan, self.seen = app, [], []

    def __call__(self, environ, start_response):
        upload = environ["REQUEST_METHOD"] == "POST" and \
            environ["PATH_INFO"] == "/api/v1/submissions"
        fault = self.plan.pop(0) if upload and self.plan else None
        if upload:
            self.seen.append(fault)
        if fault == "cut":
            def swallow(status, headers, exc_info=None):
                return lambda data: None
            body = self.app(environ, swallow)
            for _ in body:  # the app runs to the end (commit included) ...
                pass
            sock = environ["werkzeug.socket"]
            sock.shutdown(socket.SHUT_RDWR)  # ... and the answer never leaves
            sock.close()
            return []
        if isinstance(fault, int):
            get_input_stream(environ).read()  # the body, bounded by its Content-Length
            start_response(f"{fault} FAULT", [("Content-Type", "application/json"),
                                              ("Retry-After", "0")])
            return [b'{"error": "unavailable", "message": "injected"}']
        return self.app(environ, start_response)


@pytest.fixture
def db_url(sqlite_url):
    return sqlite_url


@pytest.fixture
def faulty_server(app):
    faults = Faults(app.wsgi_app)
    app.wsgi_app = faults
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", faults
    server.shutdown()
    thread.join(10)
    server.server_close()


def _rows(session) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(Submission))


def _upload(base, token, path, **kw):
    events = []
    doc = lbclient.submit(base, token, benchmark="syncred", split="dev", path=path,
                          method_name="m", progress=False, on_retry=events.append,
                          sleep=lambda s: None, **kw)
    return doc, events


def test_lost_answer_then_503_then_stored_once(faulty_server, auth, imported, baseline_files,
                                               session):
    base, faults = faulty_server
    token = auth.member()
    faults.plan = ["cut", 503, 502]
    doc, events = _upload(base, token, baseline_files["dev"])
    assert faults.seen == ["cut", 503, 502, None]
    assert [e.status for e in events] == [None, 503, 502]
    assert events[0].reason.startswith("connection error")
    assert doc["replayed"] is True and doc["status"] == "scored"
    assert _rows(session) == 1 and session.get(Submission, doc["id"]) is not None
    assert session.scalar(select(QuotaUsage.count)) == 1
    # the same command again, later: the same submission, still one row
    again, events = _upload(base, token, baseline_files["dev"])
    assert again["id"] == doc["id"] and again["replayed"] is True and events == []
    assert _rows(session) == 1


def test_rate_limit_with_retry_after_is_retried_quota_is_not(app, faulty_server, auth,
                                                             imported, baseline_files, session):
    base, faults = faulty_server
    token = auth.member()
    faults.plan = [429]  # the rate limiter's answer carries Retry-After
    doc, events = _upload(base, token, baseline_files["dev"])
    assert [e.status for e in events] == [429] and doc["replayed"] is False
    app.config["DEV_DAILY_QUOTA"] = 1  # the daily quota's 429 has no Retry-After: final
    other = baseline_files["dev"].parent / "other.jsonl"
    other.write_bytes(baseline_files["dev"].read_bytes() + b"\n")
    with pytest.raises(lbclient.ClientError, match="quota_exceeded"):
        _upload(base, token, other)
    assert _rows(session) == 1


def test_tries_run_out_on_a_dead_server(auth, imported, baseline_files):
    token = auth.member()
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    events = []
    with pytest.raises(lbclient.requests.ConnectionError):
        lbclient.submit(f"http://127.0.0.1:{port}", token, benchmark="syncred", split="dev",
                        path=baseline_files["dev"], method_name="m", progress=False,
                        retry=lbclient.RetryPolicy(tries=3), on_retry=events.append,
                        sleep=lambda s: None)
    assert [e.attempt for e in events] == [1, 2]


def test_derived_key_names_file_and_target(baseline_files, tmp_path):
    path = baseline_files["dev"]
    key = lbclient.upload_key(path, benchmark="syncred", split="dev", kind="predictions",
                              method_name="m")
    assert key.startswith("cli-") and 8 <= len(key) <= 128
    assert key == lbclient.upload_key(path, benchmark="syncred", split="dev",
                                      kind="predictions", method_name="m")
    copy = tmp_path / "renamed.jsonl"
    copy.write_bytes(path.read_bytes())
    assert key == lbclient.upload_key(copy, benchmark="syncred", split="dev",
                                      kind="predictions", method_name="m")  # bytes, not names
    assert key != lbclient.upload_key(path, benchmark="syncred", split="test",
                                      kind="predictions", method_name="m")
    assert key != lbclient.upload_key(path, benchmark="syncred", split="dev",
                                      kind="predictions", method_name="m2")


def test_cli_says_it_retried(faulty_server, auth, imported, baseline_files, session,
                             monkeypatch):
    base, faults = faulty_server
    token = auth.member()
    monkeypatch.setattr(lbclient.time, "sleep", lambda s: None)
    faults.plan = ["cut", 503]
    res = CliRunner().invoke(lbclient.main, [
        "submit", "--benchmark", "syncred", "--split", "dev", "--server", base,
        "--token", token, "--quiet", str(baseline_files["dev"])])
    assert res.exit_code == 0, res.output
    assert "try 1 of 9 failed (connection error" in res.output
    assert "try 2 of 9 failed (unavailable: injected)" in res.output
    assert "the server already had this upload" in res.output
    assert "scored: " in res.output and _rows(session) == 1
    faults.plan = ["cut"]
    res = CliRunner().invoke(lbclient.main, [
        "submit", "--benchmark", "syncred", "--split", "dev", "--server", base,
        "--token", token, "--quiet", "--retries", "0", "--method", "other",
        str(baseline_files["dev"])])
    assert res.exit_code == 3 and "cannot reach" in res.output  # no retries asked for
