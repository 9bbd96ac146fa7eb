"""LOKI's free-text readers, row by row against what the authors' functions return.

The tables in ``tests/conformance/data/loki_{mc,tf}.json`` were derived by running the authors'
functions (opendatalab/LOKI, ``lm_evaluate/tasks/loki.py`` at commit
251b4f6114952d92c5705434e2852a7be7230779) outside this repository on each input:

* ``loki_mc``: ``Loki.parse_multi_choice_response(response, all_choices, index2ans, doc)`` with
  ``index2ans, all_choices = Loki.parse_multi_choice_info(options)``; the expected value is the
  letter or the option *text* it returns, or null where it calls ``random.choice``.
* ``loki_tf``: ``Loki.parse_true_or_false(response)``, then ``Loki.eval_open(gold, [label])`` for
  gold "Yes" and "No".
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard.core import extract as X

DATA = Path(__file__).parent / "data"


def _table(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


MC, TF = _table("loki_mc"), _table("loki_tf")


def test_tables_name_their_source_and_are_broad():
    for table in (MC, TF):
        assert table["repo"] == "opendatalab/LOKI" and table["file"] == "lm_evaluate/tasks/loki.py"
        assert table["commit"].startswith("251b4f6")
        assert len(table["rows"]) >= 100
    assert any(expected is None for _, _, expected in MC["rows"])           # random fallback
    assert any(e not in (None, *"ABCD") for _, _, e in MC["rows"])         # option-text answers
    assert {label for _, (label, _, _) in TF["rows"]} == {"yes", "no", "other"}


@pytest.mark.parametrize("response, choices, expected", MC["rows"],
                         ids=[repr(r[0])[:40] for r in MC["rows"]])
def test_multiple_choice_reads_as_the_authors(response, choices, expected):
    options = {chr(ord("A") + j): text for j, text in enumerate(choices)}
    if expected is None:
        want = None                              # their random.choice: scored 1/#options
    elif expected in options:
        want = expected
    else:
        want = X.NOT_AN_OPTION                   # their answer is an option's text: never right
    assert X.loki_choice(response, options) == want


@pytest.mark.parametrize("response, expected", TF["rows"], ids=[repr(r[0])[:40] for r in TF["rows"]])
def test_yes_no_reads_as_the_authors(response, expected):
    label, right_if_yes, right_if_no = expected
    got = X.loki_yes_no(response)
    assert got == (None if label == "other" else label)
    assert (got == "yes", got == "no") == (right_if_yes, right_if_no)


@pytest.mark.parametrize("response, expected", [
    # the issue's examples (LOKI's parser, not a lenient reading)
    ("Answer: A", "A"), ("Option A", "A"), ("Both A and B", "B"), ("B A", "A"),
    ("The first one.", None),
])
def test_the_issues_examples(response, expected):
    assert X.loki_choice(response, {"A": "The first one.", "B": "The second one."}) == expected
