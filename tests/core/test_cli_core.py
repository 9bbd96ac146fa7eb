"""The core commands as a team runs them: demo pack, baseline, score (table and JSON), exit codes."""
import json
import subprocess
import sys

import pytest

from leaderboard.core.packs import load_pack
from leaderboard.server.config import REPO_ROOT


def run(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "leaderboard", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    out = tmp_path_factory.mktemp("packs")
    run("demo-packs", "--out", out, "--only", "syncred")
    return out / "syncred"


def test_every_command_has_help():
    for cmd in ("demo-packs", "validate-pack", "score", "baseline", "build-pack"):
        assert "Usage:" in run(cmd, "--help").stdout


def test_baseline_then_score(pack, tmp_path):
    preds = tmp_path / "random.jsonl"
    assert "wrote" in run("baseline", "--pack", pack, "--split", "dev", "--kind", "random",
                          "--out", preds).stdout
    assert "ok" in run("validate-pack", pack).stdout
    table = run("score", "--pack", pack, "--split", "dev", "--predictions", preds).stdout
    assert "tpr_at_fpr_5" in table and "95% CI" in table
    # the headline (the board's primary column) is named, listed first and marked (issue 33)
    head = next(t.headline for t in load_pack(pack).tasks)
    assert f"* headline: {head}, higher is better" in table
    rows = [line for line in table.splitlines() if line[:2] in ("* ", "  ")][1:]
    assert rows[0].startswith(f"* {head} ") and "overall" in rows[0]
    assert all(line.startswith("* ") == (line.split()[1] == head) for line in rows
               if line.strip())
    records = json.loads(run("score", "--pack", pack, "--split", "dev", "--predictions", preds,
                             "--json").stdout)
    keys = {"task", "metric", "slice", "value", "ci_low", "ci_high", "n", "judge",
            "metric_version"}
    assert records and all(keys <= set(r) for r in records)
    assert any(r["metric"] == "tpr_at_fpr_5" and r["slice"] == {} for r in records)


def test_invalid_input_exits_2_naming_line_and_field(pack, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "nope", "score": 2}\n{"oops"\n')
    proc = run("score", "--pack", pack, "--split", "dev", "--predictions", bad, check=False)
    assert proc.returncode == 2
    assert "line 1, field 'id'" in proc.stderr and "line 2" in proc.stderr
    proc = run("score", "--pack", tmp_path, "--split", "dev", "--predictions", bad, check=False)
    assert proc.returncode == 2 and "benchmark.yaml is missing" in proc.stderr
    proc = run("score", "--pack", pack, "--split", "nosuch", "--predictions", bad, check=False)
    assert proc.returncode == 2 and "unknown split" in proc.stderr
