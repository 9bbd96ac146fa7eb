"""The CLI client against a live server (werkzeug in a thread, jobs inline)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from leaderboard import client as lbclient


@pytest.fixture
def db_url(sqlite_url):  # one backend is enough here: the API is tested on both elsewhere
    return sqlite_url


def test_client_submit_scored_and_failed(live_server, auth, imported, baseline_files, tmp_path):
    token = auth.member()
    runner = CliRunner()
    res = runner.invoke(lbclient.main, [
        "submit", "--benchmark", "syncred", "--split", "dev", "--server", live_server,
        "--token", token, "--quiet", str(baseline_files["dev"])])
    assert res.exit_code == 0, res.output
    assert "scored: " in res.output
    # issue 12: the headline score follows, with its interval and n
    assert "AI-generated image detection: TPR(5)" in res.output and "(n=" in res.output, res.output

    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "zzz", "score": 3}\n')
    res = runner.invoke(lbclient.main, [
        "submit", "--benchmark", "syncred", "--split", "dev", "--server", live_server,
        "--token", token, "--quiet", str(bad)])
    assert res.exit_code == 1
    assert "invalid predictions file" in res.output and "line 1" in res.output

    res = runner.invoke(lbclient.main, [
        "submit", "--benchmark", "nope", "--split", "dev", "--server", live_server,
        "--token", token, "--quiet", str(bad)])
    assert res.exit_code == 2 and "not_found" in res.output and "syncred" in res.output

    res = runner.invoke(lbclient.main, [
        "submit", "--benchmark", "syncred", "--split", "dev", "--server", live_server,
        "--token", "lb_revoked", "--quiet", str(bad)])
    assert res.exit_code == 2 and "unauthorized" in res.output


def test_client_help_documents_its_environment():
    res = CliRunner().invoke(lbclient.main, ["submit", "--help"])
    assert res.exit_code == 0
    assert "LB_SERVER" in res.output and "LB_TOKEN" in res.output and "Exit codes" in res.output


def test_client_names_the_agreement_to_sign(live_server, auth, imported, baseline_files):
    """Issue 21: a held-out upload without the agreement is refused, and the client says
    where to sign."""
    token = auth.member(agreements=False)
    res = CliRunner().invoke(lbclient.main, [
        "submit", "--benchmark", "syncred", "--split", "test", "--server", live_server,
        "--token", token, "--quiet", str(baseline_files["test"])])
    assert res.exit_code == 2, res.output
    assert "agreement_required" in res.output
    assert f"sign the data-use agreement at {live_server}/data/syncred" in res.output
