"""The starter kit's offline curve: the starter detector (its tiny random model) run on each
condition's input folder exactly as ``robustness_curve.sh`` does, then ``robustness-score``.

``detect.run`` is called in this process for each condition (the script's ``docker run`` gives
it the same folders), so torch is imported once.
"""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from leaderboard.builders.copies import plan_copies
from leaderboard.cli import main

STARTER = Path(__file__).resolve().parents[2] / "docker" / "starter"
pytest.importorskip("transformers")
pytestmark = pytest.mark.slow  # imports torch and writes a model (about 20 s on a shared machine)


def _detect():
    spec = importlib.util.spec_from_file_location("starter_detect_robust", STARTER / "detect.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_team_sees_its_curve_offline(small_pack, tmp_path, monkeypatch):
    model = tmp_path / "model"
    proc = subprocess.run([sys.executable, str(STARTER / "make_tiny_model.py"), str(model)],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    runner = CliRunner()
    res = runner.invoke(main, ["degrade", "--pack", str(small_pack), "--split", "dev",
                               "--out", str(tmp_path / "copies")])
    assert res.exit_code == 0, res.output
    copies = tmp_path / "copies" / plan_copies(small_pack, "dev").key
    res = runner.invoke(main, ["robustness-inputs", "--copies", str(copies), "--out",
                               str(tmp_path / "inputs")])
    assert res.exit_code == 0, res.output
    detect = _detect()
    monkeypatch.setenv("LB_BATCH_SIZE", "8")
    for folder in sorted((tmp_path / "inputs").iterdir()):
        out = tmp_path / "predictions" / folder.name
        out.mkdir(parents=True)
        # the clean subset holds every item once; each condition its own 8 of them
        assert detect.run(folder, out, model) == (32 if folder.name == "dev-clean-0" else 8)
    res = runner.invoke(main, ["robustness-score", "--copies", str(copies), "--predictions",
                               str(tmp_path / "predictions"), "--json"])
    assert res.exit_code == 0, res.output
    records = json.loads(res.output)["records"]
    levels = {(r["slice"].get("degradation"), r["slice"].get("level")) for r in records
              if r["metric"] == "tpr_at_fpr_5" and "level" in r["slice"]}
    assert levels == {("clean", "0"), ("jpeg", "1"), ("jpeg", "5"), ("blur", "1"), ("blur", "5")}
    # a random model's scores still move when the pixels do
    scores = {f.parent.name: {r["id"]: r["score"] for r in map(json.loads,
                                                             f.read_text().splitlines())}
              for f in (tmp_path / "predictions").glob("*/predictions.jsonl")}
    blurred = scores["dev-image-blur-5"]
    assert blurred != {i: scores["dev-clean-0"][i] for i in blurred}
