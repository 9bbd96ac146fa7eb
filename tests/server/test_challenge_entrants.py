"""A challenge binds its entrants only (issue 33, item 4): a team enters it; its windows, split
rules and caps apply to the submissions made to it and to no other; a cap counts only those;
and a wrong split or a closed phase is refused before the upload (the client asks first, the
server refuses before it reads a byte of the body)."""
from __future__ import annotations

import html
import io
from datetime import timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from leaderboard import client as lbclient
from leaderboard.server.models import QuotaUsage, Submission, User, utcnow
from leaderboard.server.models.challenges import ChallengePhase, PhaseDayUsage, PhaseUsage


def _fmt(t):
    return t.strftime("%Y-%m-%dT%H:%M")


def _post(client, token, data: bytes, split: str, *, challenge: str = "", method: str = "m",
          key: str = "", query: str = ""):
    headers = {"Authorization": f"Bearer {token}"} | ({"Idempotency-Key": key} if key else {})
    return client.post("/api/v1/submissions" + query, data={
        "benchmark": "syncred", "split": split, "method_name": method, "challenge": challenge,
        "file": (io.BytesIO(data), "p.jsonl")}, headers=headers,
        content_type="multipart/form-data")


@pytest.fixture
def warmup(app, client, auth, imported):
    """Ada (an admin, team "Team Ada", holding the agreement) and a challenge on SynCred whose
    one phase, open now, takes the dev split only. Ada's team has not entered it."""
    token = auth.member()
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        s.scalar(select(User).where(User.email == "ada@example.org")).is_admin = True
    now = utcnow()
    form = {"benchmark": "syncred", "key": "warm", "title": "Warm", "phase0_name": "Warm-up",
            "phase0_split": "dev", "phase0_part": "all",
            "phase0_opens_at": _fmt(now - timedelta(hours=1)),
            "phase0_closes_at": _fmt(now + timedelta(hours=3))}
    assert client.post("/admin/challenges", data=form).status_code == 303
    return token


def test_a_non_entrant_submits_to_the_test_split_while_a_dev_only_phase_runs(
        client, warmup, baseline_files, session):
    token = warmup
    headers = {"Authorization": f"Bearer {token}"}
    check = client.get("/api/v1/submissions/check?benchmark=syncred&split=test", headers=headers)
    assert check.status_code == 200 and check.json["phase"] is None, check.json
    sub = _post(client, token, baseline_files["test"].read_bytes(), "test")
    assert sub.status_code == 202, sub.json
    assert client.get(sub.json["status_url"]).json["status"] == "scored"
    session.expire_all()
    assert session.get(Submission, sub.json["id"]).phase_id is None  # not a challenge submission
    # naming the challenge without having entered it is refused, with where to enter
    refused = client.get("/api/v1/submissions/check?benchmark=syncred&split=dev&challenge=warm",
                         headers=headers)
    assert refused.status_code == 403 and refused.json["error"] == "not_entered"
    page = client.get("/challenges/warm").get_data(as_text=True)
    assert 'id="enter-challenge"' in page and "0 teams entered" in page
    form = html.unescape(client.get("/submit?challenge=warm").get_data(as_text=True))
    assert "your team has not entered challenge 'warm'" in form and 'name="challenge"' not in form
    form = html.unescape(client.get("/submit?challenge=no/such").get_data(as_text=True))
    assert "there is no challenge 'no/such'" in form and 'href="/challenges/"' in form


def test_caps_count_only_the_submissions_made_to_the_challenge(
        app, client, warmup, baseline_files, session):
    token = warmup
    dev = baseline_files["dev"].read_bytes()
    for i in range(2):  # before the caps are set: submissions made to no challenge
        assert _post(client, token, dev, "dev", method=f"standing{i}").status_code == 202
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        phase = s.scalar(select(ChallengePhase))
        phase.daily_quota, phase.max_submissions = 1, 2
    assert client.post("/challenges/warm/enter").status_code == 303  # the page's button
    headers = {"Authorization": f"Bearer {token}"}
    check = client.get("/api/v1/submissions/check?benchmark=syncred&split=dev&challenge=warm",
                       headers=headers).json
    assert check["phase"] == "Warm-up" and check["phase_left"] == 2
    assert check["quota"]["used"] == 0 and check["quota"]["left"] == 1  # the 2 did not count

    # an invalid file made to the challenge gives its units back (only scored work counts)
    bad = _post(client, token, b'{"id": "zzz", "score": 3}\n', "dev", challenge="warm")
    assert bad.status_code == 202
    assert client.get(bad.json["status_url"]).json["status"] == "failed"
    good = _post(client, token, dev, "dev", challenge="warm", method="entry", key="entry-0001")
    assert good.status_code == 202, good.json
    over = _post(client, token, dev, "dev", challenge="warm", method="again")
    assert over.status_code == 429 and "phase 'Warm-up'" in over.json["message"]
    # a retry of the accepted upload (same key) is answered with it, though the quota is used
    target = "?benchmark=syncred&split=dev&challenge=warm"
    again = client.get("/api/v1/submissions/check" + target,
                       headers={**headers, "Idempotency-Key": "entry-0001"})
    assert again.status_code == 200 and again.json["replay"] == good.json["id"]
    replayed = _post(client, token, dev, "dev", challenge="warm", method="entry",
                     key="entry-0001", query=target)
    assert replayed.status_code == 202 and replayed.json["id"] == good.json["id"]
    # the standing board's uploads are not bound by the phase's caps, nor counted in them
    assert _post(client, token, dev, "dev", method="standing2").status_code == 202
    session.expire_all()
    assert session.scalar(select(PhaseUsage.count)) == 1
    assert session.scalar(select(PhaseDayUsage.count)) == 1
    assert session.scalar(select(QuotaUsage.count).where(QuotaUsage.split == "dev")) == 3
    made = session.scalars(select(Submission.method_name).where(
        Submission.phase_id.is_not(None), Submission.status == "scored")).all()
    assert made == ["entry"]
    board = client.get("/api/v1/challenges/warm/phases/0").json
    assert [r["submission_id"] for r in board["tasks"][0]["rows"]] == [good.json["id"]]


def _raw_post(client, token, data: bytes, query: str = ""):
    """A multipart upload to the test split made to the challenge, built by hand (in memory:
    the test client would spool a large body to a file the refusal leaves unread)."""
    boundary = "lbtestboundary"
    fields = {"benchmark": "syncred", "split": "test", "method_name": "m", "challenge": "warm"}
    head = "".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
                   for k, v in fields.items())
    body = (head + f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            'filename="p.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n').encode() \
        + data + f"\r\n--{boundary}--\r\n".encode()
    return client.post("/api/v1/submissions" + query, data=body,
                       content_type=f"multipart/form-data; boundary={boundary}",
                       headers={"Authorization": f"Bearer {token}"})


class _Reads:
    """WSGI middleware that counts the bytes each request's handler read of its body."""

    def __init__(self, wsgi_app):
        self.wsgi_app, self.log = wsgi_app, []

    def __call__(self, environ, start_response):
        entry = {"method": environ["REQUEST_METHOD"], "path": environ["PATH_INFO"], "read": 0}
        self.log.append(entry)
        stream = environ["wsgi.input"]

        class Counting:
            def read(self, *args):
                data = stream.read(*args)
                entry["read"] += len(data)
                return data

            def readline(self, *args):
                data = stream.readline(*args)
                entry["read"] += len(data)
                return data

            def __iter__(self):
                return iter(self.readline, b"")

        environ["wsgi.input"] = Counting()
        return self.wsgi_app(environ, start_response)


def test_a_wrong_split_is_refused_before_any_upload_byte_is_read(
        app, client, warmup, baseline_files, live_server, tmp_path):
    token = warmup
    assert client.post("/challenges/warm/enter").status_code == 303
    reads = _Reads(app.wsgi_app)
    app.wsgi_app = reads
    big = baseline_files["test"].read_bytes()
    big = big * (2 * 1024 * 1024 // len(big) + 1)  # > 2 MB of a test-split file
    # the target in the query string (as the client sends it): refused before the body
    resp = _raw_post(client, token, big, "?benchmark=syncred&split=test&challenge=warm")
    assert resp.status_code == 403 and "dev split only" in resp.json["message"], resp.json
    assert reads.log[-1]["read"] == 0
    # the target only in the form: refused once the fields are read, before the file is
    resp = _raw_post(client, token, big)
    assert resp.status_code == 403 and "dev split only" in resp.json["message"]
    assert reads.log[-1]["read"] < 256 * 1024 < len(big)

    # the command line asks first and never sends the file
    path = tmp_path / "test.jsonl"
    path.write_bytes(big)
    reads.log.clear()
    res = CliRunner().invoke(lbclient.main, [
        "submit", "--benchmark", "syncred", "--split", "test", "--challenge", "warm",
        "--server", live_server, "--token", token, "--quiet", str(path)])
    assert res.exit_code == 2, res.output
    assert "phase 'Warm-up'" in res.output and "dev split only" in res.output
    assert [(e["method"], e["path"]) for e in reads.log] == [
        ("POST", "/api/v1/challenges/warm/enter"), ("GET", "/api/v1/submissions/check")]
    # and on the phase's split it submits to the challenge
    res = CliRunner().invoke(lbclient.main, [
        "submit", "--benchmark", "syncred", "--split", "dev", "--challenge", "warm",
        "--server", live_server, "--token", token, "--quiet", str(baseline_files["dev"])])
    assert res.exit_code == 0, res.output
    board = client.get("/api/v1/challenges/warm/phases/0").json
    assert len(board["tasks"][0]["rows"]) == 1
