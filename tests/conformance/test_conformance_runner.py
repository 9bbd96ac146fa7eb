"""``conformance/check.py``: adapter discovery, the 1e-9 comparison, n/a on one side, the
table, JSON, and exit codes; with fake adapters in a temporary folder."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("conformance_runner",
                                              ROOT / "conformance" / "check.py")
runner = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = runner
spec.loader.exec_module(runner)

FAKE = '''
NAME = "fake"
REPO = "someone/thing"

def compare(authors_dir, work):
    assert (authors_dir / "marker.txt").read_text() == "checkout"
    assert work.is_dir() and not any(work.iterdir())
    row = lambda metric, ours, theirs, sl=None: {"benchmark": "fake", "case": "c",
        "metric": metric, "slice": sl or {}, "ours": ours, "authors": theirs}
    return [row("same", 0.5, 0.5), row("within", 0.1 + 0.2, 0.3, {"form": "ML"}),
            row("off", 0.3, 0.3 + 2e-9), row("both na", None, float("nan")),
            row("one na", None, 0.0), row("text", "AD", "AD"), row("text off", "AD", "CR"),
            row("int vs float", 1, 1.0)]
'''


@pytest.fixture
def setup(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "fake.py").write_text(FAKE)
    (lib / "_helper.py").write_text("raise RuntimeError('helpers are not adapters')")
    authors = tmp_path / "authors"
    (authors / "someone+thing").mkdir(parents=True)
    (authors / "someone+thing" / "marker.txt").write_text("checkout")
    return lib, authors


def test_check_rules():
    ok = runner.check({"ours": 1.0, "authors": 1.0 + 1e-10})
    assert ok["match"] and ok["diff"] == pytest.approx(1e-10)
    assert not runner.check({"ours": 1.0, "authors": 1.0 + 1e-8})["match"]
    assert runner.check({"ours": None, "authors": float("nan")})["match"]
    assert not runner.check({"ours": float("nan"), "authors": 0.0})["match"]
    assert not runner.check({"ours": True, "authors": 1.0})["match"]  # a bool is not a score
    assert runner.check({"ours": ["A", "C"], "authors": ["A", "C"]})["match"]


def test_table_and_exit_code_on_mismatches(setup, capsys):
    lib, authors = setup
    code = runner.main(["--authors", str(authors), "--adapters", str(lib)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[-1] == "3 mismatches in 8 rows from 1 adapters"
    lines = {line.split()[2]: line for line in out.splitlines()[2:-1]}
    assert lines["off"].rstrip().endswith("MISMATCH") and "2e-09" in lines["off"]
    assert lines["within"].rstrip().endswith("ok") and "form=ML" in lines["within"]
    assert "n/a" in lines["one"] and lines["one"].rstrip().endswith("MISMATCH")


def test_json_output(setup, capsys):
    lib, authors = setup
    assert runner.main(["--authors", str(authors), "--adapters", str(lib), "--json",
                        "--only", "fake"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["mismatches"] == 3 and got["rows_compared"] == 8 and got["adapters_run"] == 1
    assert [r["metric"] for r in got["rows"] if not r["match"]] == ["off", "one na", "text off"]


def test_all_matching_exits_0(setup, capsys):
    lib, authors = setup
    (lib / "fake.py").write_text(FAKE.replace("0.3 + 2e-9", "0.3").replace(
        'row("one na", None, 0.0)', 'row("one na", 0.0, 0.0)').replace('"CR"', '"AD"'))
    assert runner.main(["--authors", str(authors), "--adapters", str(lib)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "0 mismatches in 8 rows from 1 adapters"


def test_missing_checkout_failing_adapter_and_nothing_run(setup, tmp_path, capsys):
    lib, authors = setup
    empty = tmp_path / "empty"
    empty.mkdir()
    assert runner.main(["--authors", str(empty), "--adapters", str(lib), "--only", "fake"]) == 2
    err = capsys.readouterr().err
    assert "no checkout at" in err and "git clone https://github.com/someone/thing" in err
    assert runner.main(["--authors", str(empty), "--adapters", str(lib)]) == 2
    assert "no adapter ran" in capsys.readouterr().err
    assert runner.main(["--authors", str(authors), "--adapters", str(lib), "--only", "nope"]) == 2
    assert "no adapter named 'nope'; known: ['fake']" in capsys.readouterr().err
    (lib / "fake.py").write_text(FAKE.replace("return [", "raise ValueError('boom')\n    return ["))
    assert runner.main(["--authors", str(authors), "--adapters", str(lib)]) == 2
    assert "fake: the adapter failed" in capsys.readouterr().err


def test_project_adapters_are_discovered():
    names = {a.NAME: a.REPO for a in runner.discover()}
    assert names["syncred"] == "thu-coai/Syncred-Bench" and names["vct2"] == "Hasnat79/VCT_2"
