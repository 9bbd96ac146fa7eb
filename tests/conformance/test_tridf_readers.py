"""TriDF's free-text readers against the authors' own outputs, one pinned row per tricky input.

Each table in ``tests/conformance/data/tridf_*.json`` was made by running the authors' function
(j1anglin/TriDF at f041a19c4b292f83233a72b48e3241b4867c7ad7, outside this repository) on every
input and recording what it returned:

* ``tridf_tf``: ``3_Benchmark/inference/score_perception_original.py`` ``normalize_tf_answer``
* ``tridf_mc``: same file, ``normalize_mc_answer(text, ["A".."E"])`` (the letters
  ``mc_option_letters`` gives every released question), then ``score_mc_answer`` against C = {A, C}
  and C = {E} with M = 5 (0.0 when the answer is None, as ``score`` does)
* ``tridf_det``: ``3_Benchmark/inference/eval_accuracy.py`` ``get_prediction``
* ``tridf_cell``: ``3_Benchmark/inference/cal_score.py`` ``parse_bool_truth``
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from leaderboard.core import tridf_readers as rd
from leaderboard.core.benchmarks.tridf import TriDF
from leaderboard.core.metrics.choice import mcq_scores

DATA = Path(__file__).resolve().parent / "data"
COMMIT = "f041a19c4b292f83233a72b48e3241b4867c7ad7"


def _table(name: str) -> list:
    table = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    assert table["repo"] == "j1anglin/TriDF" and table["commit"] == COMMIT
    assert len(table["rows"]) >= 70
    return table["rows"]


def test_tables_are_broad():
    assert min(len(_table(n)) for n in ("tridf_tf", "tridf_mc", "tridf_det")) >= 100


@pytest.mark.parametrize("text, expected", _table("tridf_tf"))
def test_normalize_tf_answer(text, expected):
    assert rd.tf_answer(text) is expected
    # the benchmark's extraction hands the collector this reading
    assert TriDF().extract("yesno", text, None) == (None if expected is None
                                                   else "yes" if expected else "no")


def _score(letters, correct) -> float:
    sel = np.array([[c in (letters or []) for c in "ABCDE"]])
    cor = np.array([[c in correct for c in "ABCDE"]])
    return float(mcq_scores(selected=sel, correct=cor)[0])


@pytest.mark.parametrize("text, expected, vs_ac, vs_e", _table("tridf_mc"))
def test_normalize_mc_answer_and_score(text, expected, vs_ac, vs_e):
    assert rd.mc_letters(text) == expected
    options = dict.fromkeys("ABCDE", "")
    assert TriDF().extract("multiselect", text, options) == (expected or None)
    assert _score(expected, "AC") == pytest.approx(vs_ac, abs=1e-12)
    assert _score(expected, "E") == pytest.approx(vs_e, abs=1e-12)


@pytest.mark.parametrize("text, expected", _table("tridf_det"))
def test_get_prediction(text, expected):
    want = {"Likely Authentic": "real", "Likely Manipulated": "fake", None: None}[expected]
    assert rd.detection(text) == want


@pytest.mark.parametrize("cell, expected", _table("tridf_cell"))
def test_parse_bool_truth(cell, expected):
    assert rd.truth_cell(cell) is expected


def test_a_few_rules_the_issue_names():
    # score_perception_original.py: only ^(yes|no)\b on the first line
    assert [rd.tf_answer(t) for t in ("True", "**Yes**", "> yes", "yes, clearly")] == \
        [None, None, None, True]
    # upper-cased before the letters are found; with a comma only single-letter tokens count
    assert rd.mc_letters("a and c") == ["A", "C"]
    assert rd.mc_letters("I think the answer is A, C") == ["C"]
    # eval_accuracy.py: from the last line upward, authentic winning on a line holding both
    assert rd.detection("Likely Authentic\nLikely Manipulated or Likely Authentic") == "real"
    assert rd.detection("Likely Manipulated\nLikely  Authentic") == "fake"  # exact phrases
    assert rd.truth_cell("[ ]") is False and rd.truth_cell("[  ]") is True
