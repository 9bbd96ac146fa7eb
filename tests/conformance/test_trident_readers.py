"""The TRIDENT challenge kit's free-text readers against the kit's own outputs, pinned per input.

Each table in ``tests/conformance/data/trident_*.json`` was made by running the kit's function
(j1anglin/TRIDENT_MM26MGC at 985d8fbc4065f22b4de5c1c0900b891ee55da818, ``evaluate_predictions.py``,
outside this repository) on every input:

* ``trident_tf``: ``_normalize_tf_answer``
* ``trident_mc``: ``_normalize_mc_answer``, then ``_score_mcq_selection(selection, C, 5)`` for
  C = {A, C} and C = {E} (clamped at 0)
* ``trident_det``: ``_parse_typeb_label``
* ``trident_cell``: ``_parse_bool_truth``
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from leaderboard.core import tridf_readers as rd
from leaderboard.core.metrics.choice import mcq_scores

DATA = Path(__file__).resolve().parent / "data"
COMMIT = "985d8fbc4065f22b4de5c1c0900b891ee55da818"


def _table(name: str) -> list:
    table = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    assert table["repo"] == "j1anglin/TRIDENT_MM26MGC" and table["commit"] == COMMIT
    return table["rows"]


def test_tables_are_broad():
    assert min(len(_table(n)) for n in ("trident_tf", "trident_mc", "trident_det")) >= 100


@pytest.mark.parametrize("text, expected", _table("trident_tf"))
def test_normalize_tf_answer(text, expected):
    assert rd.kit_tf_answer(text) is expected


@pytest.mark.parametrize("text, expected, vs_ac, vs_e", _table("trident_mc"))
def test_normalize_mc_answer_and_clamped_score(text, expected, vs_ac, vs_e):
    assert rd.kit_mc_letters(text) == expected
    for correct, want in (("AC", vs_ac), ("E", vs_e)):
        sel = np.array([[c in expected for c in "ABCDE"]])
        cor = np.array([[c in correct for c in "ABCDE"]])
        got = float(mcq_scores(selected=sel, correct=cor, clamp=True)[0])
        assert got == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("text, expected", _table("trident_det"))
def test_parse_typeb_label(text, expected):
    assert rd.kit_detection(text) == expected


@pytest.mark.parametrize("cell, expected", _table("trident_cell"))
def test_parse_bool_truth(cell, expected):
    assert rd.truth_cell(cell) is expected


def test_yes_and_no_do_not_read_in_the_kit():
    # why a perfect yes/no submission has TFQ accuracy 0 and TCS 85 in the kit
    assert rd.kit_tf_answer("yes") is None and rd.kit_tf_answer("no") is None
    assert rd.kit_tf_answer("It is not true") is True  # the first true/false word anywhere
    assert rd.kit_mc_letters("None of the options are correct") == []  # no "none" rule
    assert rd.kit_detection("Analysis first\nLikely Manipulated") is None  # first line only
