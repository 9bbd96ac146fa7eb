"""The server's robustness commands: build the copies (reused the second time), show and set
the budget; bad input is a clear error, never a traceback."""
from __future__ import annotations

import json

from leaderboard.server.cli import server
from tests.server.conftest import app, app_config, db_url, pg_url, runner  # noqa: F401


def test_build_and_budget_commands(runner, small_pack):  # noqa: F811
    assert runner.invoke(server, ["import-pack", str(small_pack)]).exit_code == 0
    res = runner.invoke(server, ["robustness-build", "--benchmark", "syncred", "--split", "dev"])
    assert res.exit_code == 0, res.output
    first = json.loads(res.output.strip().splitlines()[-1])
    assert first["status"] == "ready" and first["reused"] is False
    res = runner.invoke(server, ["robustness-build", "--benchmark", "syncred", "--split", "dev"])
    again = json.loads(res.output.strip().splitlines()[-1])
    assert again["reused"] is True and again["key"] == first["key"]
    res = runner.invoke(server, ["robustness-build", "--benchmark", "syncred", "--split", "x"])
    assert res.exit_code != 0 and "split 'x' has no robustness plan" in res.output
    res = runner.invoke(server, ["robustness-budget", "--benchmark", "syncred"])
    assert json.loads(res.output)["max_conditions"] == 25
    res = runner.invoke(server, ["robustness-budget", "--benchmark", "syncred", "--max-items",
                                 "40", "--disable"])
    assert json.loads(res.output) == {"benchmark": "syncred", "enabled": False,
                                      "max_conditions": 25, "max_items": 40, "wall_s": 3600.0}
    res = runner.invoke(server, ["robustness-budget", "--benchmark", "syncred", "--wall-s", "-1"])
    assert res.exit_code != 0 and "wall_s: must be between" in res.output
    res = runner.invoke(server, ["robustness-budget", "--benchmark", "nope"])
    assert res.exit_code != 0 and "nope" in res.output
