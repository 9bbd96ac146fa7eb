"""Uploading predictions through the API and the web form: scored, failed with readable
problems, quotas, validation errors, visibility."""
from __future__ import annotations

import gzip
import io

import pytest
from sqlalchemy import func, select

from leaderboard.server.models import Curve, QuotaUsage, Score, Submission


def _post(client, token, data: bytes, *, filename="preds.jsonl", **fields):
    form = {"benchmark": "syncred", "split": "dev", "method_name": "m1", **fields,
            "file": (io.BytesIO(data), filename)}
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.post("/api/v1/submissions", data=form, headers=headers,
                       content_type="multipart/form-data")


def test_valid_upload_is_scored_inline(client, auth, imported, baseline_files, session):
    token = auth.member()
    resp = _post(client, token, baseline_files["test"].read_bytes(), split="test")
    assert resp.status_code == 202, resp.json
    sid = resp.json["id"]
    status = client.get(f"/api/v1/submissions/{sid}",
                        headers={"Authorization": f"Bearer {token}"}).json
    assert status["status"] == "scored", status
    parts = set(session.scalars(select(Score.part).where(Score.submission_id == sid)))
    assert parts == {"all", "public", "private"}
    overall = session.scalars(select(Score).where(Score.submission_id == sid,
                                                  Score.slice_key == "")).all()
    assert overall and all(s.task == "detection" for s in overall)
    kinds = set(session.scalars(select(Curve.kind).where(Curve.submission_id == sid)))
    assert kinds == {"roc", "pr"}  # the random baseline carries scores


def test_gzip_upload_is_accepted(client, auth, imported, baseline_files):
    token = auth.member()
    resp = _post(client, token, gzip.compress(baseline_files["dev"].read_bytes()),
                 filename="p.jsonl.gz")
    assert resp.status_code == 202
    assert client.get(resp.json["status_url"]).json["status"] == "scored"


def test_invalid_file_fails_with_line_and_field(client, auth, imported, baseline_files):
    token = auth.member()
    lines = baseline_files["dev"].read_bytes().splitlines()
    lines[2] = b'{"id": "nope", "score": 1.7}'
    lines[4] = b"not json"
    resp = _post(client, token, b"\n".join(lines) + b"\n")
    assert resp.status_code == 202
    body = client.get(f"/api/v1/submissions/{resp.json['id']}",
                      headers={"Authorization": f"Bearer {token}"}).json
    assert body["status"] == "failed"
    assert body["failure_reason"].startswith("invalid predictions file")
    text = "\n".join(body["failure_lines"])
    assert "line 3" in text and "line 5" in text
    assert body["counts_toward_quota"] is False  # only scored work counts (issue 12)
    # the page shows the same lines
    page = client.get("/submissions/mine").get_data(as_text=True)
    assert "line 5" in page


@pytest.mark.parametrize("fields, where", [
    ({"split": "nope"}, "split"),
    ({"method_name": ""}, "method_name"),
    ({"paper_url": "javascript:alert(1)"}, "paper_url"),
])
def test_bad_fields_are_named(client, auth, imported, fields, where):
    token = auth.member()
    resp = _post(client, token, b'{"id": "x"}\n', **fields)
    assert resp.status_code == 400
    assert resp.json["error"] == "bad_request"
    assert [p["field"] for p in resp.json["problems"]] == [where]


def test_unknown_benchmark_and_missing_file(client, auth, imported):
    token = auth.member()
    resp = _post(client, token, b"x", benchmark="nosuch")
    assert resp.status_code == 404 and "syncred" in resp.json["message"]
    resp = client.post("/api/v1/submissions", data={"benchmark": "syncred", "split": "dev",
                                                     "method_name": "m"},
                       headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 400 and resp.json["problems"][0]["field"] == "file"


def test_empty_and_oversized_files(client, auth, imported, app):
    token = auth.member()
    assert _post(client, token, b"").status_code == 400
    from werkzeug.test import EnvironBuilder

    big = b"x" * (app.config["MAX_UPLOAD_MB"] * 1024 * 1024 + 10)
    for size in (len(big), len(big) + 2 * 1024 * 1024):  # our streaming cap, Flask's cap
        builder = EnvironBuilder(path="/api/v1/submissions", method="POST", data={
            "benchmark": "syncred", "split": "dev", "method_name": "m",
            "file": (io.BytesIO(b"x" * size), "p.jsonl")},
            headers={"Authorization": f"Bearer {token}"})
        environ = builder.get_environ()
        try:
            resp = client.open(environ)
        finally:
            environ["wsgi.input"].close()
            builder.close()
        assert resp.status_code == 413
        assert "MB" in resp.json["message"]


def test_garbage_bytes_never_500(client, auth, imported):
    token = auth.member()
    for data in (b"\x00\xff" * 100, b"\x1f\x8b\x08garbage", b"[1,2,3]\n", b"{}\n"):
        resp = _post(client, token, data)
        assert resp.status_code == 202
        body = client.get(resp.json["status_url"]).json
        assert body["status"] == "failed" and body["failure_lines"], body


def test_quota_counts_only_scored_work(client, auth, imported, app, session, baseline_files):
    """Issue 12: three invalid uploads, then a valid one, with a quota of 3: the valid one is
    accepted and scored, and only it is counted."""
    app.config["DEV_DAILY_QUOTA"] = 3
    token = auth.member()
    for _ in range(3):
        resp = _post(client, token, b"bad\n")
        assert resp.status_code == 202
        assert client.get(resp.json["status_url"]).json["status"] == "failed"
    resp = _post(client, token, baseline_files["dev"].read_bytes())
    assert resp.status_code == 202, resp.json
    assert client.get(resp.json["status_url"]).json["status"] == "scored"
    assert session.scalar(select(QuotaUsage.count)) == 1
    counted = session.scalars(select(Submission.counts_toward_quota)
                              .order_by(Submission.id)).all()
    assert counted == [False, False, False, True]


def test_quota_exhausted_by_scored_work_reports_reset(client, auth, imported, app, session,
                                                      baseline_files):
    app.config["DEV_DAILY_QUOTA"] = 2
    token = auth.member()
    good = baseline_files["dev"].read_bytes()
    assert _post(client, token, good).status_code == 202
    assert _post(client, token, good).status_code == 202
    resp = _post(client, token, good)
    assert resp.status_code == 429
    assert resp.json["quota"]["left"] == 0 and resp.json["quota"]["limit"] == 2
    assert "resets at" in resp.json["message"]
    assert session.scalar(select(func.count()).select_from(Submission)) == 2
    assert session.scalar(select(QuotaUsage.count)) == 2
    # quotas are per split: the dev quota used up leaves the test split's untouched
    test = _post(client, token, baseline_files["test"].read_bytes(), split="test")
    assert test.status_code == 202, test.json


def test_quotas_per_split_strict_test_unlimited_dev(client, auth, imported, app, session,
                                                    baseline_files):
    """Issue 21: the held-out split's quota is strict (DAILY_QUOTA), dev's generous or
    unlimited (DEV_DAILY_QUOTA), and the submit form shows both before any upload."""
    app.config["DAILY_QUOTA"] = 1
    app.config["DEV_DAILY_QUOTA"] = None  # unlimited
    token = auth.member()
    form = client.get("/submit").get_data(as_text=True)
    assert "1 of 1 submissions left today" in form and "no daily limit" in form
    assert _post(client, token, baseline_files["test"].read_bytes(),
                 split="test").status_code == 202
    refused = _post(client, token, baseline_files["test"].read_bytes(), split="test")
    assert refused.status_code == 429 and "syncred test" in refused.json["message"]
    for _ in range(3):
        assert _post(client, token, baseline_files["dev"].read_bytes()).status_code == 202
    form = client.get("/submit").get_data(as_text=True)
    assert "quota resets" in form or "used all 1" in form  # test no longer offered, and why
    assert "3 used today" in form


def test_utf8_bom_is_accepted(client, auth, imported, baseline_files):
    token = auth.member()
    resp = _post(client, token, b"\xef\xbb\xbf" + baseline_files["dev"].read_bytes())
    assert resp.status_code == 202
    assert client.get(resp.json["status_url"]).json["status"] == "scored"


def test_file_for_the_other_split_is_named(client, auth, imported, baseline_files):
    """Ids of another split (or benchmark) lead the failure with one line saying whose they
    are, before the list of unknown ids."""
    token = auth.member()
    resp = _post(client, token, baseline_files["test"].read_bytes(), split="dev")
    body = client.get(resp.json["status_url"], headers={"Authorization": f"Bearer {token}"}).json
    assert body["status"] == "failed"
    first = body["failure_lines"][0]
    assert "belong to the test split" in first and "rows have ids that are not in" in first, first


def test_needs_team_and_token(client, auth, imported):
    assert _post(client, None, b"x").status_code == 401
    assert _post(client, "lb_wrong", b"x").status_code == 401
    resp = client.post("/api/v1/submissions", headers={"Authorization": "Basic abc"})
    assert resp.status_code == 401 and "Bearer" in resp.json["message"]
    auth.register()
    token = auth.token()
    resp = _post(client, token, b"x")
    assert resp.status_code == 403 and "team" in resp.json["message"]


def test_private_submission_hidden_from_others(client, auth, imported, baseline_files, app):
    token = auth.member()
    resp = _post(client, token, baseline_files["dev"].read_bytes(), is_public="0")
    sid = resp.json["id"]
    other = app.test_client()
    assert other.get(f"/api/v1/submissions/{sid}").status_code == 404
    pub = _post(client, token, baseline_files["dev"].read_bytes(), is_public="1").json["id"]
    body = other.get(f"/api/v1/submissions/{pub}").json
    assert body["status"] == "scored" and "failure_reason" not in body


def test_list_mine(client, auth, imported, baseline_files):
    token = auth.member()
    _post(client, token, baseline_files["dev"].read_bytes())
    resp = client.get("/api/v1/submissions?mine=1", headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200 and len(resp.json["submissions"]) == 1
    assert client.get("/api/v1/submissions?limit=x",
                      headers={"Authorization": f"Bearer {token}"}).status_code == 400


def test_web_form_upload(client, auth, imported, baseline_files):
    auth.member()
    page = client.get("/submit").get_data(as_text=True)
    assert "syncred" in page and "left today" in page
    resp = client.post("/submit", data={"benchmark": "syncred", "split": "dev",
                                        "method_name": "web", "is_public": "1",
                                        "file": (io.BytesIO(baseline_files["dev"].read_bytes()),
                                                 "p.jsonl")},
                       headers={"Accept": "application/json"})
    assert resp.status_code == 202 and resp.json["status"] == "scored"
    resp = client.post("/submit", data={"benchmark": "syncred", "split": "zzz",
                                        "method_name": "web",
                                        "file": (io.BytesIO(b"x"), "p.jsonl")})
    assert resp.status_code == 400
    assert "field &#39;split&#39;" in resp.get_data(as_text=True) or \
        "field 'split'" in resp.get_data(as_text=True)
