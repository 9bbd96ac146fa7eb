"""Idempotent uploads (issue 17): an upload sent again with its idempotency key returns the
first submission (no second row, no second quota unit), whatever happened to the first answer;
a key reused for another upload is refused; racing requests with one key make one row; a
platform failure frees the key. On SQLite and PostgreSQL, jobs inline."""
from __future__ import annotations

import io
import re
import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select

from leaderboard.server.models import QuotaUsage, Submission
from leaderboard.server.models.idempotency import UploadKey

KEY = "test-key-0123456789"


def _post(client, token, data: bytes, *, key: str | None = KEY, **fields):
    form = {"benchmark": "syncred", "split": "dev", "method_name": "m1", **fields,
            "file": (io.BytesIO(data), "p.jsonl")}
    headers = {"Authorization": f"Bearer {token}"}
    if key is not None:
        headers["Idempotency-Key"] = key
    return client.post("/api/v1/submissions", data=form, headers=headers)


def _count(session, model=Submission) -> int:
    session.expire_all()
    return session.scalar(select(func.count()).select_from(model))


def _quota_used(session) -> int:
    session.expire_all()
    return session.scalar(select(func.coalesce(func.sum(QuotaUsage.count), 0)))


def test_repeated_key_returns_the_first_submission(client, auth, imported, baseline_files,
                                                   session):
    token = auth.member()
    data = baseline_files["dev"].read_bytes()
    first = _post(client, token, data)
    assert first.status_code == 202 and "Idempotent-Replayed" not in first.headers
    again = _post(client, token, data)
    assert again.status_code == 202, again.json
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json["id"] == first.json["id"] and again.json["status"] == "scored"
    assert _count(session) == 1 and _quota_used(session) == 1
    other = _post(client, token, data, key="another-key-0001")  # a new key: a new upload
    assert other.status_code == 202 and other.json["id"] != first.json["id"]
    assert _count(session) == 2 and _quota_used(session) == 2
    # keys are per user: another user's identical key is theirs
    auth.logout()
    token2 = auth.member(email="bob@example.org", team="Team Bob")
    assert _post(client, token2, data).json["id"] not in (first.json["id"], other.json["id"])


def test_retry_after_the_quota_ran_out_still_returns_it(app, client, auth, imported,
                                                        baseline_files, session):
    app.config["DEV_DAILY_QUOTA"] = 1
    token = auth.member()
    data = baseline_files["dev"].read_bytes()
    first = _post(client, token, data)
    assert first.status_code == 202
    again = _post(client, token, data)  # the quota is used up, by this very upload
    assert again.status_code == 202 and again.json["id"] == first.json["id"]
    assert _post(client, token, data, key="a-new-upload-1").status_code == 429
    assert _count(session) == 1 and _quota_used(session) == 1


def test_key_reused_for_another_upload_is_refused(client, auth, imported, baseline_files,
                                                  session):
    token = auth.member()
    data = baseline_files["dev"].read_bytes()
    sid = _post(client, token, data).json["id"]
    for resp in (_post(client, token, data + b"\n"),  # other bytes
                 _post(client, token, baseline_files["test"].read_bytes(), split="test")):
        assert resp.status_code == 422, resp.json
        assert resp.json["error"] == "idempotency_key_reused"
        assert resp.json["submission"] == sid and f"submission {sid}" in resp.json["message"]
    assert _count(session) == 1 and _quota_used(session) == 1


@pytest.mark.parametrize("key", ["short", "x" * 129, "has space 12345", "ünïcode-key-123"])
def test_malformed_key_names_the_field(client, auth, imported, baseline_files, key):
    token = auth.member()
    resp = _post(client, token, baseline_files["dev"].read_bytes(), key=key)
    assert resp.status_code == 400
    assert resp.json["problems"][0]["field"] == "idempotency_key"


def test_racing_requests_with_one_key_make_one_row(app, auth, imported, baseline_files,
                                                   session):
    token = auth.member()
    data = baseline_files["dev"].read_bytes()
    n = 6
    barrier = threading.Barrier(n)
    answers, lock = [], threading.Lock()

    def upload():
        client = app.test_client()
        barrier.wait()
        resp = _post(client, token, data)
        with lock:
            answers.append((resp.status_code, resp.json.get("id"),
                            resp.headers.get("Idempotent-Replayed")))

    threads = [threading.Thread(target=upload) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert [code for code, _, _ in answers] == [202] * n, answers
    assert len({sid for _, sid, _ in answers}) == 1
    assert sum(replayed == "true" for _, _, replayed in answers) == n - 1
    assert _count(session) == 1 and _count(session, UploadKey) == 1
    assert _quota_used(session) == 1
    uploads = list((Path(app.config["DATA_DIR"]) / "uploads").iterdir())
    assert len(uploads) == 1  # the losers' stored copies were removed


def test_answer_lost_after_commit_then_retry(app, client, auth, imported, baseline_files,
                                             session, monkeypatch):
    """The database fails after the commit (the issue's "HTTP 500" ghosts): the client gets a
    503 with Retry-After, retries with its key, and gets the stored submission."""
    from sqlalchemy.exc import OperationalError

    from leaderboard.server.services import submissions
    token = auth.member()
    real = submissions.status_dict
    calls = []

    def flaky(sub, **kw):
        calls.append(sub.id)
        if len(calls) == 1:
            raise OperationalError("SELECT", {}, Exception("server closed the connection"))
        return real(sub, **kw)

    monkeypatch.setattr(submissions, "status_dict", flaky)
    data = baseline_files["dev"].read_bytes()
    lost = _post(client, token, data)
    assert lost.status_code == 503 and lost.json["error"] == "unavailable"
    assert lost.headers["Retry-After"] == "5"
    assert _count(session) == 1  # committed before the answer was lost
    retry = _post(client, token, data)
    assert retry.status_code == 202 and retry.json["id"] == calls[0]
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert _count(session) == 1 and _quota_used(session) == 1


def test_retry_enqueues_a_submission_its_first_request_never_did(
        app, client, auth, imported, baseline_files, session, monkeypatch):
    """The web worker died between the commit and the enqueue: the retry hands it over."""
    from leaderboard.server.web import intake
    token = auth.member()
    real = intake.enqueue_scoring
    monkeypatch.setattr(intake, "enqueue_scoring", lambda sid: None)  # "killed" before it
    data = baseline_files["dev"].read_bytes()
    sid = _post(client, token, data).json["id"]
    session.expire_all()
    assert session.get(Submission, sid).status == "received"
    monkeypatch.setattr(intake, "enqueue_scoring", real)
    retry = _post(client, token, data)
    assert retry.json["id"] == sid and retry.json["status"] == "scored"


def test_platform_failure_frees_the_key(app, client, auth, imported, baseline_files, session):
    token = auth.member()
    good = app.config["LABEL_KEYS"]
    app.config["LABEL_KEYS"] = ["MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI="]  # wrong key
    data = baseline_files["dev"].read_bytes()
    first = _post(client, token, data)
    session.expire_all()
    assert session.get(Submission, first.json["id"]).status == "failed"  # refunded
    app.config["LABEL_KEYS"] = good
    again = _post(client, token, data)  # "please submit again": the same upload, a new try
    assert again.status_code == 202 and again.json["id"] != first.json["id"]
    assert "Idempotent-Replayed" not in again.headers and again.json["status"] == "scored"
    assert _quota_used(session) == 1


def test_web_form_carries_a_key_and_a_resubmitted_form_is_one_submission(
        client, auth, imported, baseline_files, session):
    auth.member()
    page = client.get("/submit").get_data(as_text=True)
    key = re.search(r'name="idempotency_key" id="idempotency-key" value="([^"]+)"', page)[1]
    assert key != re.search(r'name="idempotency_key" id="idempotency-key" value="([^"]+)"',
                            client.get("/submit").get_data(as_text=True))[1]  # one per page
    form = {"benchmark": "syncred", "split": "dev", "method_name": "web", "is_public": "1",
            "idempotency_key": key}
    data = baseline_files["dev"].read_bytes()
    first = client.post("/submit", data={**form, "file": (io.BytesIO(data), "p.jsonl")},
                        headers={"Accept": "application/json"})
    assert first.status_code == 202
    again = client.post("/submit", data={**form, "file": (io.BytesIO(data), "p.jsonl")})
    assert again.status_code == 302  # the HTML form: back to "my submissions"
    mine = client.get(again.headers["Location"]).get_data(as_text=True)
    assert f"Submission {first.json['id']} was already received" in mine
    assert _count(session) == 1 and _quota_used(session) == 1
