"""``conformance/check.py``: adapter discovery, checkouts found as cloned (``LOKI``) or as
``owner+repo`` or given one by one (``--authors-<name>``), the 1e-9 comparison, n/a on one side,
explained mismatches, the table, JSON, skipped adapters, and exit codes; with fake adapters in a
temporary folder. The LOKI adapter's seeded draw runs on a stand-in of their scorer's layout."""
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
    (authors / "thing").mkdir(parents=True)  # as `git clone https://github.com/someone/thing`
    (authors / "thing" / "marker.txt").write_text("checkout")
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
    assert out.splitlines()[-1] == ("3 unexplained mismatches, 0 explained, in 8 rows from 1 "
                                    "adapters")
    assert "adapters run: fake (8 rows)" in out
    lines = {line.split()[2]: line for line in out.splitlines()[2:-1]}
    assert lines["off"].rstrip().endswith("MISMATCH") and "2e-09" in lines["off"]
    assert lines["within"].rstrip().endswith("ok") and "form=ML" in lines["within"]
    assert "n/a" in lines["one"] and lines["one"].rstrip().endswith("MISMATCH")


def test_json_output(setup, capsys):
    lib, authors = setup
    assert runner.main(["--authors", str(authors), "--adapters", str(lib), "--json",
                        "--only", "fake"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["mismatches"] == 3 and got["rows_compared"] == 8
    assert got["adapters_run"] == {"fake": 8}
    assert [r["metric"] for r in got["rows"] if not r["match"]] == ["off", "one na", "text off"]


def test_all_matching_exits_0(setup, capsys):
    lib, authors = setup
    (lib / "fake.py").write_text(FAKE.replace("0.3 + 2e-9", "0.3").replace(
        'row("one na", None, 0.0)', 'row("one na", 0.0, 0.0)').replace('"CR"', '"AD"'))
    assert runner.main(["--authors", str(authors), "--adapters", str(lib)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == ("0 unexplained mismatches, 0 explained, "
                                                        "in 8 rows from 1 adapters")


def test_missing_checkout_failing_adapter_and_nothing_run(setup, tmp_path, capsys):
    lib, authors = setup
    empty = tmp_path / "empty"
    empty.mkdir()
    assert runner.main(["--authors", str(empty), "--adapters", str(lib), "--only", "fake"]) == 2
    err = capsys.readouterr().err
    assert "no checkout of someone/thing" in err and str(empty / "thing") in err
    assert str(empty / "someone+thing") in err and "--authors-fake PATH" in err
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


SECOND = FAKE.replace('NAME = "fake"', 'NAME = "other"').replace(
    '"someone/thing"', '"owner/Other-Repo"').replace('"fake"', '"other"')
EXPLAINING = '''
NAME = "drawn"
REPO = "org/Drawn"
EXPLAINED = {"coin-flip": "they flip a coin where we take the expected value"}

def compare(authors_dir, work):
    row = lambda metric, ours, theirs, **kw: {"benchmark": "drawn", "case": "c",
        "metric": metric, "slice": "f.json", "ours": ours, "authors": theirs, **kw}
    return [row("accuracy", 0.5, 0.5), row("accuracy [their draw]", 0.5, 0.75,
                                           explained="coin-flip"),
            row("accuracy [their draw, lucky]", 0.5, 0.5, explained="coin-flip")]
'''


def test_owner_plus_repo_folders_and_one_path_per_adapter(setup, tmp_path, capsys):
    lib, authors = setup
    (lib / "other.py").write_text(SECOND.replace("0.3 + 2e-9", "0.3").replace(
        'row("one na", None, 0.0)', 'row("one na", 0.0, 0.0)').replace('"CR"', '"AD"'))
    (authors / "owner+Other-Repo").mkdir()
    (authors / "owner+Other-Repo" / "marker.txt").write_text("checkout")
    assert runner.main(["--authors", str(authors), "--adapters", str(lib)]) == 1
    out = capsys.readouterr().out
    assert "adapters run: fake (8 rows), other (8 rows)" in out
    # no --authors: each checkout by its own option, anywhere
    elsewhere = tmp_path / "somewhere" / "my-copy"
    elsewhere.mkdir(parents=True)
    (elsewhere / "marker.txt").write_text("checkout")
    code = runner.main(["--authors-other", str(elsewhere), "--adapters", str(lib), "--json"])
    got = json.loads(capsys.readouterr().out)
    assert code == 2 and got["adapters_run"] == {"other": 8}  # fake has no checkout: skipped
    assert "no checkout of someone/thing" in got["adapters_skipped"]["fake"]
    code = runner.main(["--authors-other", str(elsewhere), "--adapters", str(lib),
                        "--allow-skip"])
    out = capsys.readouterr()
    assert code == 0 and "adapter skipped: fake: no checkout" in out.out
    assert runner.main(["--authors-other", str(tmp_path / "nope"), "--adapters", str(lib)]) == 2
    assert "not a folder: --authors-other" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        runner.main(["--adapters", str(lib)])  # neither --authors nor --authors-<name>


def test_a_skipped_adapter_fails_the_run_unless_allowed(setup, capsys):
    lib, authors = setup
    (lib / "other.py").write_text(SECOND)
    assert runner.main(["--authors", str(authors), "--adapters", str(lib)]) == 2
    captured = capsys.readouterr()
    assert "adapter skipped: other: no checkout of owner/Other-Repo" in captured.out
    assert "1 adapter(s) skipped (other); --allow-skip accepts that" in captured.err
    assert captured.out.splitlines()[-1].endswith("from 1 adapters; 1 skipped")
    assert runner.main(["--authors", str(authors), "--adapters", str(lib), "--allow-skip"]) == 1


def test_explained_mismatches_are_shown_listed_and_do_not_fail(tmp_path, capsys):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "drawn.py").write_text(EXPLAINING)
    (tmp_path / "a" / "Drawn").mkdir(parents=True)
    assert runner.main(["--authors", str(tmp_path / "a"), "--adapters", str(lib)]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "[their draw]" in ln)
    assert "0.75" in line and line.endswith("explained: coin-flip")
    assert "coin-flip (1 rows): they flip a coin where we take the expected value" in out
    assert out.splitlines()[-1] == ("0 unexplained mismatches, 1 explained, in 3 rows from 1 "
                                    "adapters")
    assert runner.main(["--authors", str(tmp_path / "a"), "--adapters", str(lib), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["explained_mismatches"] == {"coin-flip": 1} and got["mismatches"] == 0
    assert [r["status"] for r in got["rows"]] == ["ok", "explained", "ok"]
    # a key the adapter does not explain is a problem, not a free pass
    (lib / "drawn.py").write_text(EXPLAINING.replace('explained="coin-flip"),',
                                                     'explained="luck"),'))
    assert runner.main(["--authors", str(tmp_path / "a"), "--adapters", str(lib)]) == 2
    assert "explained='luck' (not in the adapter's EXPLAINED)" in capsys.readouterr().err


LOKI_STANDIN = '''
import random


class Loki:
    """A stand-in with the layout of their lm_evaluate/tasks/loki.py: letters read as given,
    anything else drawn with random.choice, as their multiple-choice fallback does."""

    def parse_response(self, doc, response):
        letters = [chr(65 + i) for i in range(len(doc["choices"]))]
        text = response.strip()
        return text if text in letters else random.choice(letters)

    def doc_to_target(self, doc):
        return doc["answer"]

    def metric(self, doc, pred, gold):
        return float(pred == gold)

    def aggregate_results(self, results):
        acc = sum(r["accuracy"] for r in results) / len(results)
        return {"total_accuracy": {"accuracy": acc}, "per_metric_accuracy": {}}
'''


def test_loki_seeded_draw_beside_the_expected_value(tmp_path):
    import random

    from conformance.adapters import loki

    tasks = tmp_path / "LOKI" / "lm_evaluate" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "loki.py").write_text(LOKI_STANDIN)
    their = loki.load_authors(tmp_path / "LOKI")
    docs = [{"metric": "multi-choice", "choices": ["x", "y"], "answer": a} for a in "ABABAB"]
    responses = ["A", "A", "?", "??", "no idea", "B"]
    expected = loki.authors_scores(their, docs, responses)
    drawn = loki.authors_scores(their, docs, responses, seed=0)
    assert expected["unparsable"] == drawn["unparsable"] == 3
    assert expected["accuracy"] == pytest.approx((1 + 0 + 3 * 0.5 + 1) / 6)
    rng = random.Random(0)
    picks = [rng.choice("AB") for _ in range(3)]
    hits = sum(p == a for p, a in zip(picks, "ABA"))
    assert drawn["accuracy"] == pytest.approx((1 + 0 + hits + 1) / 6)
    assert loki.authors_scores(their, docs, responses, seed=0) == drawn  # reproducible
    assert loki.authors_scores(their, docs, responses) == expected  # the draw is not left on
    assert "loki-random-fallback" in loki.EXPLAINED
